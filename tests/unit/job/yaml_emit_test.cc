// util::to_yaml, the -o yaml writer: what it writes reads back as the same JSON.

#include <gtest/gtest.h>

#include "util/yaml_emit.h"
#include "yaml/yaml.h"

namespace {

nlohmann::json back(const pai::yaml::Node* n) {
  if (n->is_mapping()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& p : n->pairs()) j[p.key->scalar()] = back(p.value);
    return j;
  }
  if (n->is_sequence()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto* i : n->items()) j.push_back(back(i));
    return j;
  }
  if (n->is_null()) return nullptr;
  if (auto b = n->as_bool()) return *b;
  if (auto i = n->as_int()) return *i;
  if (auto d = n->as_float()) return *d;
  return n->scalar();
}

TEST(YamlEmit, RoundTripsThroughTheReader) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "s": "plain", "n": 3, "f": 1.5, "t": true, "z": null,
    "looks_like": ["10", "1.0", "true", "yes", "null", "~", "2024-01-01", "-x", "a: b", "#c", ""],
    "multi": "line1\nline2\n", "lead": "  x\ny", "tab": "a\tb",
    "nested": {"list": [{"a": 1, "b": [1, 2]}, [3, 4], []], "empty": {}},
    "unicode": "caf\u00e9"
  })");
  std::string text = pai::util::to_yaml(j);
  pai::yaml::Stream st = pai::yaml::load(text);
  ASSERT_FALSE(st.error) << text;
  ASSERT_EQ(st.documents.size(), 1u);
  EXPECT_EQ(back(st.documents[0]), j) << text;
}

TEST(YamlEmit, KeepsInsertionOrderOfOrderedJson) {
  nlohmann::ordered_json j;
  j["zeta"] = 1;
  j["alpha"] = 2;
  EXPECT_EQ(pai::util::to_yaml(j), "zeta: 1\nalpha: 2\n");
  EXPECT_EQ(pai::util::to_yaml(nlohmann::json::array()), "[]\n");
  EXPECT_EQ(pai::util::yaml_scalar("10"), "\"10\"");
}

}  // namespace

#include "yaml/yaml.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <functional>
#include <random>
#include <sstream>

namespace pai::yaml {
namespace {

const Node* only_doc(const Stream& s) {
  EXPECT_FALSE(s.error) << (s.error ? s.error->message : "");
  EXPECT_EQ(s.documents.size(), 1u);
  return s.documents.empty() ? nullptr : s.documents[0];
}

TEST(Yaml, BlockMappingWithPositions) {
  Stream s = load("a: 1\nbb:\n  c: x\n  d: \"y\"\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r && r->is_mapping());
  EXPECT_EQ(r->mark(), (Mark{1, 1}));
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(r->pairs()[1].key->mark(), (Mark{2, 1}));
  const Node* bb = r->get("bb");
  ASSERT_TRUE(bb && bb->is_mapping());
  EXPECT_EQ(bb->mark(), (Mark{3, 3}));
  EXPECT_EQ(bb->get("c")->scalar(), "x");
  EXPECT_EQ(bb->get("c")->mark(), (Mark{3, 6}));
  EXPECT_EQ(bb->get("d")->scalar(), "y");
  EXPECT_TRUE(bb->get("d")->is_quoted());
  EXPECT_EQ(r->get("a")->as_int(), 1);
}

TEST(Yaml, SequencesCompactAndNested) {
  Stream s = load("list:\n- a\n- b: 1\n  c: 2\n-   - x\n    - y\nother: z\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  const Node* list = r->get("list");
  ASSERT_TRUE(list && list->is_sequence());
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ(list->items()[0]->scalar(), "a");
  EXPECT_EQ(list->items()[1]->get("c")->scalar(), "2");
  EXPECT_EQ(list->items()[1]->mark(), (Mark{3, 3}));
  ASSERT_TRUE(list->items()[2]->is_sequence());
  EXPECT_EQ(list->items()[2]->items()[1]->scalar(), "y");
  EXPECT_EQ(r->get("other")->scalar(), "z");
}

TEST(Yaml, FlowCollections) {
  Stream s =
      load("a: [1, two, \"three\", {x: 1, y: [2]}]\nb: {k: v, 'q': \"w\", empty: }\nc: []\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  const Node* a = r->get("a");
  ASSERT_EQ(a->size(), 4u);
  EXPECT_EQ(a->items()[1]->scalar(), "two");
  EXPECT_EQ(a->items()[3]->get("y")->items()[0]->as_int(), 2);
  EXPECT_EQ(a->items()[2]->mark(), (Mark{1, 13}));
  EXPECT_TRUE(r->get("b")->get("empty")->is_null());
  EXPECT_EQ(r->get("b")->get("q")->scalar(), "w");
  EXPECT_EQ(r->get("c")->size(), 0u);
}

TEST(Yaml, LiteralBlockScalarMapsInnerLines) {
  std::string text =
      "hivedscheduler:\n"
      "  config: |\n"
      "    physicalCluster:\n"
      "      cellTypes: {}\n"
      "\n"
      "    virtualClusters: {}\n"
      "other: 1\n";
  Stream s = load(text);
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  const Node* cfg = r->get("hivedscheduler")->get("config");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->style(), ScalarStyle::Literal);
  EXPECT_EQ(cfg->scalar(), "physicalCluster:\n  cellTypes: {}\n\nvirtualClusters: {}\n");
  // Inner line 4 ("virtualClusters") is outer line 6, column 5.
  EXPECT_EQ(cfg->inner_mark(4, 1), (Mark{6, 5}));
  EXPECT_EQ(cfg->inner_mark(2, 3), (Mark{4, 7}));
  // Parse the inner document and map a nested node back.
  Stream inner = load(cfg->scalar());
  const Node* ir = only_doc(inner);
  ASSERT_TRUE(ir);
  Mark m = ir->get("physicalCluster")->get("cellTypes")->mark();
  EXPECT_EQ(cfg->inner_mark(m.line, m.column), (Mark{4, 18}));
  EXPECT_EQ(r->get("other")->as_int(), 1);
}

TEST(Yaml, BlockScalarChompingAndFolding) {
  Stream s = load(
      "a: |-\n  x\n  y\n\nb: |+\n  x\n\n\nc: >\n  one\n  two\n\n  three\n    indented\n  four\nd: "
      ">2\n   lead\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("a")->scalar(), "x\ny");
  EXPECT_EQ(r->get("b")->scalar(), "x\n\n\n");
  EXPECT_EQ(r->get("c")->scalar(), "one two\nthree\n  indented\nfour\n");
  EXPECT_EQ(r->get("d")->scalar(), " lead\n");
}

TEST(Yaml, QuotedScalarsEscapesAndFolding) {
  Stream s = load(
      "a: \"tab\\there \\u00e9 \\x41\"\nb: 'it''s'\nc: \"line one\n  line two\n\n  para\"\nd: "
      "\"join\\\n   ed\"\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("a")->scalar(), "tab\there \xC3\xA9 A");
  EXPECT_EQ(r->get("b")->scalar(), "it's");
  EXPECT_EQ(r->get("c")->scalar(), "line one line two\npara");
  EXPECT_EQ(r->get("d")->scalar(), "joined");
}

TEST(Yaml, PlainMultiLineAndComments) {
  Stream s = load("# head\nkey: first # comment\nurl: http://x:80/a#frag\nlast: v # c\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("key")->scalar(), "first");
  EXPECT_EQ(r->get("url")->scalar(), "http://x:80/a#frag");
  EXPECT_EQ(r->get("last")->scalar(), "v");
  // A comment ends a plain scalar: a more-indented line after it is an error.
  EXPECT_TRUE(load("key: first # comment\n  second\n").error);
}

TEST(Yaml, PlainContinuationLines) {
  Stream s = load("key: first\n  second\n\n  third\nnext: v\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("key")->scalar(), "first second\nthird");
  EXPECT_EQ(r->get("next")->scalar(), "v");
}

TEST(Yaml, TypedScalars) {
  Stream s = load(
      "i: 42\nn: -7\nh: 0x1F\nf: 1.5\nq: \"42\"\nt: true\nT: True\nno: no\nnul: ~\ne:\ns: !!str "
      "5\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("i")->as_int(), 42);
  EXPECT_EQ(r->get("n")->as_int(), -7);
  EXPECT_EQ(r->get("h")->as_int(), 31);
  EXPECT_DOUBLE_EQ(*r->get("f")->as_float(), 1.5);
  EXPECT_FALSE(r->get("q")->as_int());
  EXPECT_EQ(r->get("t")->as_bool(), true);
  EXPECT_EQ(r->get("T")->as_bool(), true);
  EXPECT_FALSE(r->get("no")->as_bool());  // YAML 1.2: "no" is a string
  EXPECT_TRUE(r->get("nul")->is_null());
  EXPECT_TRUE(r->get("e")->is_null());
  EXPECT_FALSE(r->get("s")->as_int());
  EXPECT_EQ(r->get("s")->scalar(), "5");
}

TEST(Yaml, AnchorsAliasesAndMerge) {
  Stream s = load("base: &b\n  cpu: 4\n  mem: 8\nx:\n  <<: *b\n  mem: 16\ny: *b\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("x")->get("cpu")->as_int(), 4);
  EXPECT_EQ(r->get("x")->get("mem")->as_int(), 16);
  EXPECT_EQ(r->get("x")->size(), 2u);
  EXPECT_EQ(r->get("y")->get("mem")->as_int(), 8);
}

TEST(Yaml, DuplicateKeysWarnAndKeepLast) {
  Stream s = load("a: 1\nb: 2\na: 3\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].code, "duplicate-key");
  EXPECT_EQ(s.warnings[0].mark, (Mark{3, 1}));
  EXPECT_EQ(s.warnings[0].other, (Mark{1, 1}));
  EXPECT_EQ(r->get("a")->as_int(), 3);
  EXPECT_EQ(r->size(), 2u);
}

TEST(Yaml, DuplicateKeysInLargeMappings) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  text += "k17: again\n";
  Stream s = load(text);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].mark.line, 51u);
  EXPECT_EQ(only_doc(s)->get("k17")->scalar(), "again");
}

TEST(Yaml, MultipleDocuments) {
  Stream s = load("---\na: 1\n---\nb: 2\n...\n");
  EXPECT_FALSE(s.error);
  ASSERT_EQ(s.documents.size(), 2u);
  EXPECT_EQ(s.documents[1]->get("b")->as_int(), 2);
  EXPECT_EQ(s.documents[1]->mark().line, 4u);
}

TEST(Yaml, EmptyInputs) {
  EXPECT_TRUE(load("").documents.empty());
  EXPECT_TRUE(load("# only a comment\n\n").documents.empty());
  Stream s = load("---\n");
  ASSERT_EQ(s.documents.size(), 1u);
  EXPECT_TRUE(s.documents[0]->is_null());
}

TEST(Yaml, CrlfAndBom) {
  Stream s = load("\xEF\xBB\xBFkey: v\r\nlist:\r\n  - a\r\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("key")->scalar(), "v");
  EXPECT_EQ(r->get("list")->items()[0]->scalar(), "a");
  EXPECT_EQ(r->get("list")->items()[0]->mark(), (Mark{3, 5}));
}

TEST(Yaml, AnchorsAndTagsOnAKeyLineBelongToTheKey) {
  Stream s = load("a: 1\n&x b: 2\n!!str c: 3\nd: *x\ntop: &m\n  &k key: v\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r && r->is_mapping());
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ(r->pairs()[1].key->scalar(), "b");
  EXPECT_EQ(r->pairs()[1].key->mark(), (Mark{2, 4}));
  EXPECT_EQ(r->get("b")->scalar(), "2");
  EXPECT_EQ(r->pairs()[2].key->tag(), "!!str");
  EXPECT_EQ(r->get("c")->scalar(), "3");
  EXPECT_EQ(r->get("d")->scalar(), "b");  // *x is the key node "b"
  const Node* top = r->get("top");
  ASSERT_TRUE(top && top->is_mapping());
  EXPECT_EQ(top->get("key")->scalar(), "v");
}

TEST(Yaml, KeepChompingKeepsTrailingEmptyLines) {
  Stream s = load("a: |+\n  text\n\n\nb: |+\n\n\nc: |\n  x\n   \n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("a")->scalar(), "text\n\n\n");
  EXPECT_EQ(r->get("b")->scalar(), "\n\n");
  EXPECT_EQ(r->get("c")->scalar(), "x\n \n");  // a line of spaces beyond the indent is content
  EXPECT_EQ(r->get("a")->inner_mark(1, 1), (Mark{2, 3}));
}

// A last line of only indentation that the file ends without a line break
// holds no line break to keep (as libfyaml and PyYAML read it).
TEST(Yaml, KeepChompingKeepsNoBreakTheFileLacks) {
  auto scalar = [](const std::string& text) {
    Stream s = load(text);
    const Node* r = only_doc(s);
    return r && r->get("k") ? r->get("k")->scalar() : std::string("<no k>");
  };
  EXPECT_EQ(scalar("k: |+\n a\n "), "a\n");
  EXPECT_EQ(scalar("k: |+\n a\n\n "), "a\n\n");
  EXPECT_EQ(scalar("k: |+\n a\n\n"), "a\n\n");
  // An empty |+ scalar keeps the line of only indentation, break or not: the
  // YAML test suite's JEF9 ("- |+\n   " is "\n"), as libfyaml reads it.
  EXPECT_EQ(scalar("k: |+\n "), "\n");
  EXPECT_EQ(scalar("k: |+\n\n"), "\n");
  EXPECT_EQ(scalar("k: |+\n a\n  "), "a\n ");  // more spaces than the indent: content
}

TEST(Yaml, ComplexKeys) {
  Stream s = load("? [a, b]\n: flow\n? - x\n  - y\n: block\n{k: v}: implicit\n: empty key\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r && r->is_mapping());
  ASSERT_EQ(r->size(), 4u);
  EXPECT_TRUE(r->pairs()[0].key->is_sequence());
  EXPECT_EQ(r->pairs()[0].value->scalar(), "flow");
  EXPECT_EQ(r->pairs()[1].key->items()[1]->scalar(), "y");
  EXPECT_TRUE(r->pairs()[2].key->is_mapping());
  EXPECT_EQ(r->pairs()[2].key->mark(), (Mark{6, 1}));
  EXPECT_TRUE(r->pairs()[3].key->is_null());
  EXPECT_EQ(r->pairs()[3].value->scalar(), "empty key");
}

TEST(Yaml, TagsAreResolvedPerDocument) {
  Stream s = load(
      "%TAG !e! tag:example.com,2000:app/\n--- !e!foo%21\na: !!str 1\nb: !local x\nc: ! 2\n"
      "d: !<tag:yaml.org,2002:int> 3\n");
  const Node* r = only_doc(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->tag(), "!<tag:example.com,2000:app/foo!>");
  EXPECT_EQ(r->resolved_tag(), "tag:example.com,2000:app/foo!");
  EXPECT_EQ(r->get("a")->tag(), "!!str");
  EXPECT_EQ(r->get("a")->resolved_tag(), "tag:yaml.org,2002:str");
  EXPECT_FALSE(r->get("a")->as_int());
  EXPECT_EQ(r->get("b")->tag(), "!local");
  EXPECT_EQ(r->get("c")->tag(), "!");
  EXPECT_EQ(r->get("d")->tag(), "!!int");
  EXPECT_EQ(r->get("d")->as_int(), 3);
}

// Valid YAML that libfyaml 0.7.12 refuses (so the differential fuzzer cannot settle
// it): each is read as the YAML test suite's case of the same construct reads it.
TEST(Yaml, ValidDocumentsTheOracleRefuses) {
  // A top-level block scalar whose content is not indented (FP8R), with or without
  // an anchor; an anchor name may be any non-space, non-flow character (2SXE).
  for (const char* text : {"|\nt\n", "&e |\nt\n", "&: |\nt\n", "&& >\nt\n"}) {
    Stream s = load(text);
    const Node* r = only_doc(s);
    ASSERT_TRUE(r) << text;
    EXPECT_EQ(r->scalar(), "t\n") << text;
  }
  // A line holding only a tab is an empty line (DK95, case 4): no document here,
  // and none between two keys.
  EXPECT_FALSE(load("\t").error);
  EXPECT_TRUE(load("\t").documents.empty());
  Stream tabbed = load("foo: 1\n\t\nbar: 2\n");
  const Node* two = only_doc(tabbed);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->size(), 2u);
  // '#' is a URI character, so a tag may hold it; a comment needs a space before '#'.
  Stream tag = load("a: !x#y 1\n");
  const Node* hashed = only_doc(tag);
  ASSERT_TRUE(hashed);
  EXPECT_EQ(hashed->get("a")->tag(), "!x#y");
}

TEST(Yaml, MergeKeysCanBeLeftAlone) {
  const char* text = "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n";
  Stream merged = load(text);
  EXPECT_EQ(only_doc(merged)->get("m")->get("x")->scalar(), "1");
  LoadOptions opt;
  opt.merge_keys = false;
  Stream plain = load(text, opt);
  const Node* m = only_doc(plain)->get("m");
  EXPECT_FALSE(m->get("x"));
  EXPECT_TRUE(m->get("<<") && m->get("<<")->is_mapping());
}

TEST(Yaml, LimitErrorsAreToldApart) {
  Stream deep = load(std::string(1000, '['));
  ASSERT_TRUE(deep.error);
  EXPECT_EQ(deep.error->kind, ErrorKind::Limit);
  Stream bad = load("a: [1\n");
  ASSERT_TRUE(bad.error);
  EXPECT_EQ(bad.error->kind, ErrorKind::Syntax);
}

struct ErrorCase {
  const char* text;
  uint32_t line;
  uint32_t column;
  const char* fragment;
};

TEST(Yaml, SyntaxErrorsHavePositions) {
  const ErrorCase cases[] = {
      {"a: 1\n\tb: 2\n", 2, 1, "tab"},
      {"a: [1, 2\nb: 3\n", 1, 4, "unterminated flow collection"},
      {"a: [1, 2", 1, 4, "unterminated flow sequence"},
      {"a: \"open\nb: 2\n", 1, 4, "unterminated quoted string"},
      {"a: \"open\n", 1, 4, "unterminated double-quoted"},
      {"a: b: c\n", 1, 5, "mapping values are not allowed"},
      {"a:\n  b: 1\n   c: 2\n", 3, 5, "mapping values are not allowed"},
      {"a:\n  b:\n    x: 1\n   c: 2\n", 4, 4, "unexpected indentation"},
      {"a: 1\n- b\n", 2, 1, "list item where a mapping key"},
      {"a: - b\n", 1, 4, "list cannot start on the same line"},
      {"a: *nope\n", 1, 4, "unknown alias"},
      {"x: \"\\q\"\n", 1, 5, "unknown escape"},
      {"a: 1\x01\n", 1, 5, "control character"},
      {"a: caf\xe9\n", 1, 7, "invalid UTF-8"},
      {"a: \xc2\x80\n", 1, 4, "a character that YAML does not allow"},
      {"&a b: 1\nc: &a &b 2\n", 2, 7, "only one anchor"},
      {"%TAG !e! tag:e.com,2000:\n--- !e!x a\n--- !e!y b\n", 3, 5, "undefined tag handle !e!"},
      {"a: |x\n  t\n", 1, 5, "invalid block scalar header"},
      {"a: {x: 1\n", 1, 4, "unterminated flow mapping"},
      {"a: 1\nplain text\n", 2, 1, "expected a mapping key"},
      {"a: !% x\n", 1, 4, "is not an escape"},
      {"a: !x%4 y\n", 1, 4, "is not an escape"},
      {"a: !<tag:x%zz> y\n", 1, 4, "is not an escape"},
      {"%TAG !e! tag:e.com,%2:\n--- !e!x a\n", 1, 1, "invalid %TAG directive"},
  };
  for (const auto& c : cases) {
    Stream s = load(c.text);
    ASSERT_TRUE(s.error) << c.text;
    EXPECT_EQ(s.error->mark.line, c.line) << c.text << " -> " << s.error->message;
    EXPECT_EQ(s.error->mark.column, c.column) << c.text << " -> " << s.error->message;
    EXPECT_NE(s.error->message.find(c.fragment), std::string::npos)
        << c.text << " -> " << s.error->message;
  }
}

TEST(Yaml, DeepNestingIsBounded) {
  std::string flow(100000, '[');
  Stream s = load(flow);
  ASSERT_TRUE(s.error);
  EXPECT_NE(s.error->message.find("nesting"), std::string::npos);

  std::string block;
  for (int i = 0; i < 1000; ++i) block += std::string(static_cast<size_t>(i), ' ') + "k:\n";
  Stream b = load(block);
  ASSERT_TRUE(b.error);
  EXPECT_NE(b.error->message.find("nesting"), std::string::npos);
}

TEST(Yaml, AliasBombIsBounded) {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'z'; ++c) {
    text += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) text += std::string(i ? ", *" : "*") + prev;
    text += "]\n";
    prev = c;
  }
  LoadOptions opt;
  opt.max_nodes = 1'000'000;
  Stream s = load(text, opt);
  ASSERT_TRUE(s.error);
  EXPECT_NE(s.error->message.find("nodes"), std::string::npos);
}

TEST(Yaml, DescribeNamesTheKind) {
  Stream s = load("a: [1]\nb: {x: 1}\nc: hello\nd: 12\ne:\n");
  const Node* r = only_doc(s);
  EXPECT_EQ(r->get("a")->describe(), "a list");
  EXPECT_EQ(r->get("b")->describe(), "a mapping");
  EXPECT_EQ(r->get("c")->describe(), "the string \"hello\"");
  EXPECT_EQ(r->get("d")->describe(), "the number 12");
  EXPECT_EQ(r->get("e")->describe(), "an empty value");
}

TEST(Yaml, QuoteIfNeededRoundTrips) {
  for (std::string v :
       {"plain", "yes", "true", "12", "a: b", "#x", "", " lead", "x\ny", "-dash", "ok-dash"}) {
    std::string doc = "k: " + quote_if_needed(v) + "\n";
    Stream s = load(doc);
    ASSERT_FALSE(s.error) << doc;
    EXPECT_EQ(s.documents[0]->get("k")->scalar(), v) << doc;
  }
  EXPECT_EQ(quote_if_needed("plain"), "plain");
  EXPECT_EQ(quote_if_needed("true"), "\"true\"");
}

// --- Differential tests against yaml-cpp -------------------------------------------------

// A canonical rendering of a yaml-cpp tree and of ours, compared as strings.
std::string canon_cpp(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "~";
    case YAML::NodeType::Scalar:
      return "'" + n.Scalar() + "'";
    case YAML::NodeType::Sequence: {
      std::string out = "[";
      for (const auto& item : n) out += canon_cpp(item) + ",";
      return out + "]";
    }
    case YAML::NodeType::Map: {
      std::string out = "{";
      for (const auto& kv : n) out += canon_cpp(kv.first) + ":" + canon_cpp(kv.second) + ",";
      return out + "}";
    }
  }
  return "?";
}

std::string canon_ours(const Node* n) {
  if (n->is_null() && !n->is_quoted() && n->kind() != NodeKind::Scalar) return "~";
  switch (n->kind()) {
    case NodeKind::Null:
      return "~";
    case NodeKind::Scalar:
      if (n->style() == ScalarStyle::Plain &&
          (n->scalar() == "~" || n->scalar() == "null" || n->scalar().empty()))
        return "~";
      return "'" + n->scalar() + "'";
    case NodeKind::Sequence: {
      std::string out = "[";
      for (const Node* item : n->items()) out += canon_ours(item) + ",";
      return out + "]";
    }
    case NodeKind::Mapping: {
      std::string out = "{";
      for (const auto& p : n->pairs()) out += canon_ours(p.key) + ":" + canon_ours(p.value) + ",";
      return out + "}";
    }
  }
  return "?";
}

void expect_same_as_yaml_cpp(const std::string& text) {
  YAML::Node ref;
  try {
    ref = YAML::Load(text);
  } catch (const std::exception& e) {
    FAIL() << "yaml-cpp refused a test input: " << e.what() << "\n" << text;
  }
  Stream s = load(text);
  ASSERT_FALSE(s.error) << s.error->message << " at " << s.error->mark.line << ":"
                        << s.error->mark.column << "\n"
                        << text;
  ASSERT_EQ(s.documents.size(), 1u) << text;
  EXPECT_EQ(canon_ours(s.documents[0]), canon_cpp(ref)) << text;
}

TEST(YamlDifferential, HandWrittenDocuments) {
  const char* docs[] = {
      "a: 1\nb: [x, y]\nc: {d: e}\n",
      "machine-sku:\n  gpu-machine:\n    computing-device:\n      type: nvidia.com/gpu\n      "
      "model: K80\n      count: 4\n"
      "    mem: 220Gi\n    cpu:\n      vcore: 24\nmachine-list:\n  - hostname: w1\n    hostip: "
      "10.0.0.2\n"
      "    pai-worker: \"true\"\n",
      "- a\n- - b\n  - c\n- d: e\n  f: g\n",
      "k: |\n  line1\n   line2\n\n  line3\nk2: >-\n  folded\n  text\n",
      "s: 'single ''quoted'''\nd: \"double \\\"quoted\\\"\"\n",
      "key with spaces: value with spaces\n\"quoted key\": 1\n",
      "nested:\n- name: a\n  items: [1, 2, 3]\n- name: b\n  items:\n  - 4\n  - 5\n",
      "empty_map: {}\nempty_list: []\nnull_value:\ntilde: ~\n",
      "multi: this is\n  a long\n  plain scalar\nnext: 1\n",
      "url: http://example.com:8080/path?q=1\ntime: 12:30:00\n",
      "anchors:\n  base: &b {x: 1}\n  use: *b\n",
  };
  for (const char* d : docs) expect_same_as_yaml_cpp(d);
}

// Random documents from a small grammar of what cluster files contain.
class DocGen {
 public:
  explicit DocGen(uint32_t seed) : rng_(seed) {}
  std::string document() {
    std::string out;
    block_mapping(out, 0, 0);
    return out;
  }

 private:
  std::mt19937 rng_;
  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  std::string key() {
    static const char* keys[] = {"a", "b-c", "cellType", "machine-list", "x_y", "k1", "cpu", "mem"};
    return std::string(keys[pick(8)]) + std::to_string(pick(1000));
  }
  std::string scalar() {
    switch (pick(7)) {
      case 0:
        return std::to_string(pick(100000));
      case 1:
        return "word" + std::to_string(pick(100));
      case 2:
        return "\"dq " + std::to_string(pick(9)) + " \\t x\"";
      case 3:
        return "'sq ''" + std::to_string(pick(9)) + "'''";
      case 4:
        return "10.0." + std::to_string(pick(255)) + "." + std::to_string(pick(255));
      case 5:
        return "60Gi";
      default:
        return "two words";
    }
  }
  void block_mapping(std::string& out, int indent, int depth) {
    int n = 1 + pick(4);
    std::string pad(static_cast<size_t>(indent), ' ');
    for (int i = 0; i < n; ++i) {
      out += pad + key() + ":";
      int kind = depth > 3 ? 0 : pick(5);
      if (kind == 0) {
        out += " " + scalar() + "\n";
      } else if (kind == 1) {
        out += "\n";
        block_mapping(out, indent + 2, depth + 1);
      } else if (kind == 2) {
        out += "\n";
        block_sequence(out, indent + (pick(2) ? 2 : 0), depth + 1);
      } else if (kind == 3) {
        out += " [" + scalar() + ", " + scalar() + "]\n";
      } else {
        out += " |\n" + pad + "  text " + std::to_string(pick(10)) + "\n" + pad + "  more\n";
      }
      if (pick(4) == 0) out += pad + "# comment\n";
    }
  }
  void block_sequence(std::string& out, int indent, int depth) {
    int n = 1 + pick(4);
    std::string pad(static_cast<size_t>(indent), ' ');
    for (int i = 0; i < n; ++i) {
      if (depth > 3 || pick(2) == 0) {
        out += pad + "- " + scalar() + "\n";
      } else {
        // A compact mapping: "- key: v" then keys aligned after "- ".
        std::string inner;
        block_mapping(inner, indent + 2, depth + 1);
        inner.replace(0, static_cast<size_t>(indent + 2), pad + "- ");
        out += inner;
      }
    }
  }
};

TEST(YamlDifferential, RandomClusterLikeDocuments) {
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    DocGen g(seed);
    std::string doc = g.document();
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_same_as_yaml_cpp(doc);
    if (HasFatalFailure()) return;
  }
}

TEST(YamlDifferential, RejectsWhatYamlCppRejects) {
  const char* bad[] = {"a: [1, 2\n", "a: b: c\n", "a:\n  b: 1\n c: 2\n", "a: {x: 1\n", "\tb: 1\n"};
  for (const char* d : bad) {
    bool cpp_failed = false;
    try {
      YAML::Load(d);
    } catch (const std::exception&) {
      cpp_failed = true;
    }
    EXPECT_TRUE(cpp_failed) << d;
    EXPECT_TRUE(load(d).error) << d;
  }
}

}  // namespace
}  // namespace pai::yaml

// Writing a job back: the same values for js-yaml, overrides applied, secrets masked.

#include <functional>

#include <gtest/gtest.h>

#include "job/emit.h"
#include "job/js_value.h"
#include "job/validate.h"

namespace {

using pai::job::JobFile;
using pai::job::Overrides;
using pai::yaml::Node;

// Compares two trees as js-yaml would load them.
void same_values(const Node* a, const Node* b, const std::string& path) {
  ASSERT_TRUE(a && b) << path;
  ASSERT_EQ(pai::job::js_type(a), pai::job::js_type(b)) << path;
  if (a->is_mapping()) {
    ASSERT_EQ(a->pairs().size(), b->pairs().size()) << path;
    for (size_t i = 0; i < a->pairs().size(); ++i) {
      EXPECT_EQ(a->pairs()[i].key->scalar(), b->pairs()[i].key->scalar()) << path;
      same_values(a->pairs()[i].value, b->pairs()[i].value,
                  path + "." + a->pairs()[i].key->scalar());
    }
  } else if (a->is_sequence()) {
    ASSERT_EQ(a->items().size(), b->items().size()) << path;
    for (size_t i = 0; i < a->items().size(); ++i)
      same_values(a->items()[i], b->items()[i], path + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(pai::job::js_to_string(a), pai::job::js_to_string(b)) << path;
  }
}

const char* kJob = R"(protocolVersion: 2
name: emit_me
type: job
version: !!str 1.0
parameters:
  lr: 0.010
  quoted: "0.010"
  when: 2024-01-01
  octal: 0755
  yes_word: yes
  multi: "line one\nline two\n"
  "key: with colon": x
  tricky: "#not a comment"
  empty:
secrets:
  password: hunter2-secret
prerequisites:
  - name: img
    type: dockerimage
    uri: repo/img
    auth: {username: u, password: plain-secret-pw, registryuri: repo}
taskRoles:
  main:
    dockerImage: img
    resourcePerInstance: {cpu: 1, memoryMB: 1024, gpu: 0}
    commands:
      - |
        for i in 1 2; do
          echo "$i: <% $parameters.lr %>"
        done
      - echo 'single' "double" \back
defaults:
  virtualCluster: vc1
)";

TEST(Emit, UnchangedJobIsSentAsWritten) {
  JobFile f = JobFile::parse(kJob, "j.yaml");
  EXPECT_EQ(pai::job::submission_body(f, {}), std::string(kJob));
}

TEST(Emit, RewrittenJobKeepsEveryValue) {
  JobFile f = JobFile::parse(kJob, "j.yaml");
  std::string text = pai::job::emit_job(f, {});
  JobFile g = JobFile::parse(text, "out.yaml");
  ASSERT_FALSE(g.stream.error) << text;
  ASSERT_TRUE(g.root) << text;
  same_values(f.root, g.root, "");
  pai::diag::List d;
  pai::job::validate(g, d);
  EXPECT_EQ(d.count(pai::diag::Severity::Error), 0u) << text;
}

TEST(Emit, OverridesAreApplied) {
  JobFile f = JobFile::parse(kJob, "j.yaml");
  Overrides o;
  o.name = "new_name";
  o.virtual_cluster = "2024";  // must stay a string
  o.params = {{"lr", "0.5"}, {"added", "'007'"}, {"num", "12"}};
  o.export_params = true;
  std::string text = pai::job::emit_job(f, o);
  JobFile g = JobFile::parse(text, "out.yaml");
  ASSERT_TRUE(g.root) << text;
  EXPECT_EQ(g.get("name")->scalar(), "new_name");
  EXPECT_EQ(pai::job::js_type(g.get("defaults")->get("virtualCluster")), pai::job::JsType::String)
      << text;
  const Node* params = g.get("parameters");
  EXPECT_EQ(pai::job::js_scalar(params->get("lr")).number, 0.5);
  EXPECT_EQ(pai::job::js_type(params->get("added")), pai::job::JsType::String);
  EXPECT_EQ(params->get("added")->scalar(), "007");
  EXPECT_EQ(pai::job::js_scalar(params->get("num")).number, 12);
  const Node* cmds = g.get("taskRoles")->get("main")->get("commands");
  ASSERT_GE(cmds->items().size(), 3u);
  EXPECT_EQ(cmds->items()[0]->scalar(), "export lr=0.5");
  EXPECT_EQ(cmds->items().back()->scalar(), "echo 'single' \"double\" \\back");
}

TEST(Emit, MissingSectionsAreAdded) {
  JobFile f = JobFile::parse("protocolVersion: 2\ntype: job\ntaskRoles: {}\n", "j.yaml");
  Overrides o;
  o.name = "n";
  o.virtual_cluster = "vc";
  o.params = {{"k", "v"}};
  JobFile g = JobFile::parse(pai::job::emit_job(f, o), "out.yaml");
  ASSERT_TRUE(g.root);
  EXPECT_EQ(g.get("name")->scalar(), "n");
  EXPECT_EQ(g.get("defaults")->get("virtualCluster")->scalar(), "vc");
  EXPECT_EQ(g.get("parameters")->get("k")->scalar(), "v");
}

TEST(Emit, MaskedOutputHidesSecrets) {
  JobFile f = JobFile::parse(kJob, "j.yaml");
  std::string text = pai::job::emit_job(f, {}, /*mask_secrets=*/true);
  EXPECT_EQ(text.find("hunter2-secret"), std::string::npos) << text;
  EXPECT_EQ(text.find("plain-secret-pw"), std::string::npos) << text;
  EXPECT_NE(text.find("secrets: \"******\""), std::string::npos) << text;
  JobFile g = JobFile::parse(text, "out.yaml");
  ASSERT_TRUE(g.root) << text;
  EXPECT_EQ(g.get("prerequisites")->items()[0]->get("auth")->get("username")->scalar(), "u");
}

TEST(Emit, StringsThatLookLikeOtherTypesAreQuoted) {
  for (const char* s :
       {"10", "0755", "true", "null", "2024-01-01", "1:30", "", " x", "a: b", "#c", "-x", "yes"}) {
    std::string y = pai::job::js_yaml_string(s);
    JobFile g = JobFile::parse("v: " + y + "\n", "x.yaml");
    ASSERT_TRUE(g.root) << s << " -> " << y;
    EXPECT_EQ(pai::job::js_type(g.get("v")), pai::job::JsType::String) << s << " -> " << y;
    EXPECT_EQ(g.get("v")->scalar(), s);
  }
  EXPECT_EQ(pai::job::js_yaml_string("plain_text"), "plain_text");
}

}  // namespace

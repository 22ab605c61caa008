// Rendering as the rest-server's protocolRender does.

#include <gtest/gtest.h>

#include "job/render.h"

namespace {

using pai::job::JobFile;
using pai::job::Overrides;

const char* kRenderJob = R"(protocolVersion: 2
name: render_me
type: job
parameters:
  epochs: 10
  lr: 0.010
  text: "0.010"
  layers: [64, 128]
  model: {name: resnet}
  empty: null
  greeting: hello world
secrets:
  key: top-secret-value
prerequisites:
  - {name: img, type: dockerimage, uri: "repo/img:1", auth: {username: "<% $secrets.user %>", password: "<% $secrets.key %>", registryuri: repo}}
  - {name: code, type: script, uri: "https://git/x.git"}
  - {name: ds, type: data, uri: [hdfs://a, hdfs://b]}
  - {name: out, type: output, uri: hdfs://out}
taskRoles:
  train:
    instances: 2
    dockerImage: img
    script: code
    data: ds
    output: out
    resourcePerInstance: {cpu: 4, memoryMB: 8192, gpu: 1}
    commands:
      - "  cd <% $script.name %>  "
      - >
        python main.py --epochs <% $parameters.epochs %>
        --lr <% $parameters.lr %> --text <% $parameters.text %>
      - echo <% $data.uri[0] %> <% $data.uri[1] %> <% $output.uri %> <% $data.uri.length %>
      - echo <% $parameters.layers %> <% $parameters.model %> <% $parameters.empty %> <% $parameters.greeting.length %>
      - echo <% $secrets.key %> <% $parameters.missing %>
  eval:
    dockerImage: img
    resourcePerInstance: {cpu: 1, memoryMB: 1024, gpu: 0}
    commands:
      - echo <% $script.name %>
deployments:
  - name: dep
    taskRoles:
      train:
        preCommands: [pip install -r req.txt]
        postCommands: ["  echo done  "]
defaults:
  virtualCluster: vc1
  deployment: dep
)";

TEST(Render, FollowsTheServersConcatenationTrimAndSubstitution) {
  JobFile f = JobFile::parse(kRenderJob, "render.yaml");
  pai::job::RenderResult r = pai::job::render(f);
  EXPECT_EQ(r.name, "render_me");
  EXPECT_EQ(r.virtual_cluster, "vc1");
  ASSERT_TRUE(r.deployment);
  ASSERT_EQ(r.task_roles.size(), 2u);
  const auto& train = r.task_roles[0];
  EXPECT_EQ(train.script,
            "pip install -r req.txt\n"
            "cd code\n"
            "python main.py --epochs 10 --lr 0.01 --text 0.010\n"
            "echo hdfs://a hdfs://b hdfs://out 2\n"
            "echo 64,128 [object Object] <% $parameters.empty %> 11\n"
            "echo <% $secrets.key %> <% $parameters.missing %>\n"
            "echo done");
  EXPECT_EQ(train.unresolved,
            (std::vector<std::string>{"$parameters.empty", "$parameters.missing"}));
  EXPECT_EQ(train.secrets, (std::vector<std::string>{"$secrets.key"}));
  EXPECT_EQ(train.instances, 2);
  EXPECT_EQ(train.docker_image_uri, "repo/img:1");
  ASSERT_TRUE(train.auth);
  EXPECT_EQ(train.auth->username, "******");
  EXPECT_TRUE(train.auth->has_password);
  // The other task role has no script: the reference stays.
  EXPECT_EQ(r.task_roles[1].script, "echo <% $script.name %>");
  for (const auto& tr : r.task_roles)
    EXPECT_EQ(tr.script.find("top-secret-value"), std::string::npos);
}

TEST(Render, OverridesAreTypedLikeTheFile) {
  JobFile f = JobFile::parse(kRenderJob, "render.yaml");
  Overrides o;
  o.params = {{"epochs", "20"}, {"lr", "'0.010'"}, {"missing", "\"a b\""}, {"greeting", "hi"}};
  o.virtual_cluster = "other";
  o.name = "renamed";
  pai::job::RenderResult r = pai::job::render(f, o);
  EXPECT_EQ(r.name, "renamed");
  EXPECT_EQ(r.virtual_cluster, "other");
  const std::string& s = r.task_roles[0].script;
  EXPECT_NE(s.find("--epochs 20 --lr 0.010"), std::string::npos) << s;
  EXPECT_NE(s.find("<% $secrets.key %> a b"), std::string::npos) << s;
  EXPECT_NE(s.find(" 2\n"), std::string::npos) << s;  // "hi".length
}

TEST(Render, ExportParamsPrependsQuotedExports) {
  JobFile f = JobFile::parse(kRenderJob, "render.yaml");
  Overrides o;
  o.export_params = true;
  o.params = {{"note", "it's here"}};
  std::vector<std::pair<std::string, std::string>> skipped;
  auto lines = pai::job::export_lines(f, o, &skipped);
  EXPECT_EQ(lines, (std::vector<std::string>{"export epochs=10", "export lr=0.01",
                                             "export text=0.010", "export greeting='hello world'",
                                             "export note='it'\\''s here'"}));
  ASSERT_EQ(skipped.size(), 3u);  // layers, model, empty
  EXPECT_EQ(skipped[0].first, "layers");
  pai::job::RenderResult r = pai::job::render(f, o);
  const std::string& s = r.task_roles[0].script;
  // After the deployment's preCommands, before the task role's commands.
  EXPECT_EQ(s.rfind("pip install -r req.txt\nexport epochs=10\n", 0), 0u) << s;
  EXPECT_EQ(r.task_roles[1].script.rfind("export epochs=10", 0), 0u);
}

TEST(Render, ParameterOverrideTyping) {
  EXPECT_EQ(pai::job::override_value({"x", "10"}).type, pai::job::JsType::Number);
  EXPECT_EQ(pai::job::override_value({"x", "'10'"}).type, pai::job::JsType::String);
  EXPECT_EQ(pai::job::override_value({"x", "\"say \\\"hi\\\"\""}).text, "say \"hi\"");
  EXPECT_EQ(pai::job::override_value({"x", "'it''s'"}).text, "it's");
  EXPECT_EQ(pai::job::override_value({"x", ""}).type, pai::job::JsType::Null);
  auto novalue = pai::job::parse_param("novalue");
  ASSERT_FALSE(novalue.ok());
  EXPECT_FALSE(novalue.error().message.empty());
  EXPECT_FALSE(pai::job::parse_param("=x").ok());
  auto p = pai::job::parse_param("a=b=c");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->value, "b=c");
}

TEST(Render, Utf16Length) {
  EXPECT_EQ(pai::job::utf16_length("abc"), 3u);
  EXPECT_EQ(pai::job::utf16_length("\xC3\xA9"), 1u);          // é
  EXPECT_EQ(pai::job::utf16_length("\xF0\x9F\x98\x80"), 2u);  // an emoji is a surrogate pair
}

}  // namespace

// HiveD and the OpenPAI services as install renders them: the settings read
// from services-configuration.yaml, HiveD's ConfigMap and the per-VC
// KubeSchedulerConfiguration with HiveD as extender.

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "deploy/onprem.h"
#include "deploy/openpai.h"
#include "support/fake_client.h"
#include "yaml/yaml.h"

namespace {

using namespace pai::deploy;

const std::string kTemplates = std::string(PAI_SOURCE_DIR) + "/templates";

std::string write_temp(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() /
             ("paictl-openpai-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto p = (dir / name).string();
  std::ofstream(p) << text;
  return p;
}

const char* kServices = R"(cluster:
  common:
    cluster-id: lab
    data-path: /data
  docker-registry:
    domain: registry.example.com
    namespace: pai
    tag: v1.8.1
rest-server:
  default-pai-admin-username: root
  default-pai-admin-password: "s3cret-pw"
  server-port: 9190
pylon:
  port: 8080
hivedscheduler:
  config: |
    physicalCluster:
      skuTypes:
        V100: {gpu: 1, cpu: 4, memory: 8Gi}
      cellTypes:
        V100-NODE: {childCellType: V100, childCellNumber: 4, isNodeLevel: true}
      physicalCells:
      - cellType: V100-NODE
        cellAddress: w1
    virtualClusters:
      default:
        virtualCells: [{cellType: V100-NODE, cellNumber: 1}]
      Team_B:
        virtualCells: []
)";

TEST(OpenPai, SettingsComeFromServicesConfiguration) {
  auto loaded = load_openpai_settings(write_temp("services-configuration.yaml", kServices));
  ASSERT_TRUE(loaded) << loaded.error().message;
  const OpenPaiSettings& s = *loaded;
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.cluster_id, "lab");
  EXPECT_EQ(s.data_path, "/data");
  EXPECT_EQ(s.image_prefix, "registry.example.com/pai/");
  EXPECT_EQ(s.tag, "v1.8.1");
  EXPECT_EQ(s.admin_user, "root");
  EXPECT_EQ(s.admin_password.reveal(), "s3cret-pw");
  EXPECT_EQ(s.rest_port, 9190);
  EXPECT_EQ(s.pylon_port, 8080);
  EXPECT_EQ(s.webportal_port, 9286);
  EXPECT_EQ(s.vcs, (std::vector<std::string>{"default", "Team_B"}));
  EXPECT_NE(s.hived_config.find("physicalCells"), std::string::npos);
}

TEST(OpenPai, NoServicesFileMeansNoServices) {
  auto s = load_openpai_settings("/nonexistent/services-configuration.yaml");
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->enabled);
}

TEST(OpenPai, BrokenHivedConfigNamesTheLineInTheServicesFile) {
  std::string text = "hivedscheduler:\n  config: |\n    physicalCluster:\n      skuTypes: [a\n";
  auto s = load_openpai_settings(write_temp("bad.yaml", text));
  ASSERT_FALSE(s);
  const std::string& err = s.error().message;
  EXPECT_NE(err.find("bad.yaml:"), std::string::npos) << err;
  EXPECT_NE(err.find("hivedscheduler.config"), std::string::npos) << err;
}

TEST(OpenPai, HivedConfigMapHoldsHivedsFileWithItsWebServer) {
  auto s = load_openpai_settings(write_temp("services-configuration.yaml", kServices));
  ASSERT_TRUE(s);
  auto cm = render_hived_configmap(kTemplates, *s);
  ASSERT_TRUE(cm) << cm.error().message;
  auto doc = pai::yaml::load(*cm);
  ASSERT_FALSE(doc.error);
  ASSERT_EQ(doc.documents.size(), 1u);
  const auto* root = doc.documents[0];
  EXPECT_EQ(root->get("kind")->scalar(), "ConfigMap");
  EXPECT_EQ(root->get("metadata")->get("name")->scalar(), "hivedscheduler-config");
  EXPECT_EQ(root->get("metadata")->get("namespace")->scalar(), "openpai");
  // The file inside is HiveD's config: webServerAddress added, the cluster as written.
  auto inner = pai::yaml::load(root->get("data")->get("hivedscheduler.yaml")->scalar());
  ASSERT_FALSE(inner.error);
  const auto* h = inner.documents[0];
  EXPECT_EQ(h->get("webServerAddress")->scalar(), ":30096");
  EXPECT_EQ(h->get("physicalCluster")
                ->get("cellTypes")
                ->get("V100-NODE")
                ->get("childCellNumber")
                ->scalar(),
            "4");
  EXPECT_EQ(h->get("virtualClusters")->size(), 2u);
}

TEST(OpenPai, SchedulerConfigIsV1WithHivedAsExtender) {
  auto s = load_openpai_settings(write_temp("services-configuration.yaml", kServices));
  ASSERT_TRUE(s);
  EXPECT_EQ(vc_scheduler_name("Team_B"), "hivedscheduler-ds-team-b");
  auto text = render_scheduler_config(kTemplates, *s, "Team_B", "10.0.0.1");
  ASSERT_TRUE(text) << text.error().message;
  auto doc = pai::yaml::load(*text);
  ASSERT_FALSE(doc.error);
  const auto* c = doc.documents[0];
  EXPECT_EQ(c->get("apiVersion")->scalar(), "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(c->get("kind")->scalar(), "KubeSchedulerConfiguration");
  EXPECT_EQ(c->get("algorithmSource"), nullptr);  // the removed Policy API
  ASSERT_EQ(c->get("profiles")->size(), 1u);
  EXPECT_EQ(c->get("profiles")->items()[0]->get("schedulerName")->scalar(),
            "hivedscheduler-ds-team-b");
  EXPECT_EQ(c->get("leaderElection")->get("resourceName")->scalar(), "hivedscheduler-ds-team-b");
  ASSERT_EQ(c->get("extenders")->size(), 1u);
  const auto* e = c->get("extenders")->items()[0];
  EXPECT_EQ(e->get("urlPrefix")->scalar(), "http://10.0.0.1:30096/v1/extender");
  EXPECT_EQ(e->get("filterVerb")->scalar(), "filter");
  EXPECT_EQ(e->get("bindVerb")->scalar(), "bind");
  EXPECT_EQ(e->get("preemptVerb")->scalar(), "preempt");
  EXPECT_EQ(e->get("managedResources")->items()[0]->get("name")->scalar(),
            "hivedscheduler.microsoft.com/pod-scheduling-enable");
}

TEST(OpenPai, Base64) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
}

// The endpoints phase's check: what answered what, through a fake HTTP client.
TEST(Endpoints, GatewayAndHivedAnswersAreReportedWithWhatAnsweredWhat) {
  OpenPaiSettings o;
  o.enabled = true;
  o.hived_port = 30096;
  o.hived_config =
      "physicalCluster:\n  physicalCells:\n  - cellType: P\n    cellChildren:\n"
      "    - cellAddress: w1\n    - cellAddress: \"w2\"\n";
  EXPECT_EQ(hived_config_nodes(o, {"m", "w1", "w2", "w3"}), (std::vector<std::string>{"w1", "w2"}));
  const std::string status =
      R"({"physicalCluster":[{"cellType":"P","cellAddress":"0","cellChildren":[)"
      R"({"cellType":"N","isNodeLevel":true,"cellAddress":"w1","cellHealthiness":"Healthy"},)"
      R"({"cellType":"N","isNodeLevel":true,"cellAddress":"0/w2","cellHealthiness":"HEALTH"}]}],)"
      R"("virtualClusters":{}})";

  pai::http::FakeClient ok;
  ok.add("GET", "/rest-server/api/v2/info", 200,
         R"({"name":"PAI RESTful API","version":"v1.8.0","launcherType":"k8s"})");
  std::string healthy = status;
  healthy.replace(healthy.find("HEALTH"), 6, "Healthy");
  ok.add("GET", "/v1/inspect/clusterstatus", 200, healthy);
  EndpointReport r = check_endpoints(ok, o, "10.0.0.1", {"w1", "w2"});
  EXPECT_TRUE(r.gateway_ok);
  EXPECT_TRUE(r.hived_ok);
  EXPECT_TRUE(r.problems.empty());
  ASSERT_EQ(r.answers.size(), 2u);
  EXPECT_EQ(r.answers[0],
            "GET http://10.0.0.1/rest-server/api/v2/info answered 200 (PAI RESTful API v1.8.0)");
  EXPECT_NE(r.answers[1].find("http://10.0.0.1:30096/v1/inspect/clusterstatus answered 200 (2 node "
                              "cells, 2 of 2 planned nodes healthy)"),
            std::string::npos);

  // The gateway answers 502 on both paths; HiveD shows w2 unhealthy and lacks w3.
  pai::http::FakeClient bad;
  bad.add("GET", "/rest-server/api/v2/info", 502, R"("Bad Gateway")");
  bad.add("GET", "/api/v2/info", 404, R"("NotFound")");
  std::string sick = status;
  sick.replace(sick.find("HEALTH"), 6, "Bad");
  bad.add("GET", "/v1/inspect/clusterstatus", 200, sick);
  r = check_endpoints(bad, o, "10.0.0.1", {"w1", "w2", "w3"});
  EXPECT_FALSE(r.gateway_ok);
  EXPECT_FALSE(r.hived_ok);
  ASSERT_EQ(r.problems.size(), 3u);
  EXPECT_NE(r.problems[0].find("/rest-server/api/v2/info answered 502"), std::string::npos);
  EXPECT_NE(r.problems[1].find("/api/v2/info answered 404"), std::string::npos);
  EXPECT_NE(r.problems[2].find("shows w2 Bad, w3 missing"), std::string::npos);

  // Nothing listens: the transport's error, and HiveD not asked when it is not installed.
  pai::http::FakeClient none;
  o.hived_config.clear();
  r = check_endpoints(none, o, "10.0.0.1", {});
  EXPECT_FALSE(r.gateway_ok);
  EXPECT_EQ(r.answers.size(), 1u);
  EXPECT_EQ(none.requests().size(), 1u);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(
      r.problems[0].find("the gateway's http://10.0.0.1/rest-server/api/v2/info did not answer ("),
      std::string::npos)
      << r.problems[0];
}

}  // namespace

namespace {

using namespace pai::deploy;

// The replicas and the spread of each workload of rendered manifests:
// "Deployment/rest-server" -> "3 spread".
std::map<std::string, std::string> replicas_of(const Manifests& ms) {
  std::map<std::string, std::string> out;
  for (const auto& [what, text] : ms) {
    auto stream = pai::yaml::load(text);
    for (const auto* d : stream.documents) {
      if (!d || !d->get("kind") || !d->get("spec") || !d->get("spec")->get("replicas")) continue;
      const auto* pod = d->get("spec")->get("template")->get("spec");
      out[d->get("kind")->scalar() + "/" + d->get("metadata")->get("name")->scalar()] =
          d->get("spec")->get("replicas")->scalar() +
          (pod->get("topologySpreadConstraints") ? " spread" : "");
    }
  }
  return out;
}

}  // namespace

TEST(OpenPai, SeveralMastersRunTheStatelessServicesOnEachAndHivedBehindItsService) {
  auto loaded = load_openpai_settings(write_temp("services-configuration.yaml", kServices));
  ASSERT_TRUE(loaded);
  InstallSettings s;
  s.templates_dir = kTemplates;
  s.openpai = *loaded;
  HostSpec m;
  m.name = "m1";
  m.address = "10.0.0.1";
  m.master = true;
  auto one = render_install_manifests(s, m, 1500);
  ASSERT_TRUE(one) << one.error().message;
  auto r1 = replicas_of(*one);
  EXPECT_EQ(r1["Deployment/rest-server"], "1");
  EXPECT_EQ(r1["StatefulSet/hivedscheduler-hs"], "1");
  s.masters = {{"m1", "10.0.0.1"}, {"m2", "10.0.0.2"}, {"m3", "10.0.0.3"}};
  auto three = render_install_manifests(s, m, 1500);
  ASSERT_TRUE(three) << three.error().message;
  auto r3 = replicas_of(*three);
  EXPECT_EQ(r3["Deployment/rest-server"], "3 spread");
  EXPECT_EQ(r3["Deployment/webportal"], "3 spread");
  EXPECT_EQ(r3["Deployment/pylon"], "3 spread");
  EXPECT_EQ(r3["StatefulSet/frameworkcontroller"], "1");
  EXPECT_EQ(r3["StatefulSet/postgresql"], "1");
  EXPECT_EQ(r3["StatefulSet/hivedscheduler-hs"], "1");
  // The VC schedulers find HiveD wherever it runs: through its Service.
  bool service = false;
  for (const auto& [what, text] : *three)
    service |=
        text.find("urlPrefix: http://hivedscheduler-service.openpai.svc:30096/v1/extender") !=
        std::string::npos;
  EXPECT_TRUE(service);
}

// check cluster (deploy::check_cluster: the cluster directory prepared as
// install prepares it, then check::check_cluster) over the scripted transport
// (the master's one read: the API server through curl, etcd's health) and
// http::FakeClient (HiveD): a finding per part of the report, and the parts
// that cannot be read reported as such.

#include "check/cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "check/certs.h"
#include "deploy/cluster_check.h"
#include "deploy/cluster_files.h"
#include "deploy/usecases/usecase_fixture.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "kube/cluster_files.h"
#include "scheduler/hived.h"
#include "scheduler/hived_state.h"
#include "support/fake_client.h"
#include "support/scripted_transport.h"
#include "util/fs.h"

namespace pai::check {
namespace {

using deploy::usecase_test::TempCluster;
const std::string kClusterHivedUrl = "http://hived.test:30096";
constexpr double kClusterNow = 1796500000;  // 2026-12-05

nlohmann::json cluster_node_json(const std::string& name, const std::string& ready = "True",
                                 int gpus = 4, const std::string& version = "v1.30.10") {
  nlohmann::json n = {{"metadata", {{"name", name}}},
                      {"spec", nlohmann::json::object()},
                      {"status",
                       {{"nodeInfo", {{"kubeletVersion", version}}},
                        {"conditions",
                         {{{"type", "Ready"},
                           {"status", ready},
                           {"reason", ready == "True" ? "KubeletReady" : "NodeStatusUnknown"},
                           {"message", ready == "True" ? "kubelet is posting ready status"
                                                       : "Kubelet stopped posting node status."}}}},
                        {"allocatable", {{"cpu", "24"}}}}}};
  if (gpus > 0) n["status"]["allocatable"]["nvidia.com/gpu"] = std::to_string(gpus);
  return n;
}

// What the master's cluster holds and answers.
struct ClusterMaster {
  std::string version = "v1.30.10";
  std::vector<nlohmann::json> nodes;
  kube::ClusterFiles files;  // empty: 404 for both objects
  std::string etcd =
      "https://10.0.0.1:2379 is healthy: successfully committed proposal: took = "
      "2.1ms\n@@paictl-etcd-rc 0\n";
  std::string nodes_code = "200";

  std::string answer() const {
    std::string out;
    auto add = [&out](const std::string& body, const std::string& code) {
      out += body + "\n@@paictl-api " + code + "\n";
    };
    add(nlohmann::json{{"major", "1"}, {"gitVersion", version}}.dump(), "200");
    nlohmann::json list = {{"kind", "NodeList"}, {"apiVersion", "v1"}, {"items", nodes}};
    add(list.dump(), nodes_code);
    std::string manifest = deploy::cluster_files_manifest(files, "openpai");
    auto nl = manifest.find('\n');
    nlohmann::json cm = nlohmann::json::parse(manifest.substr(0, nl));
    nlohmann::json secret =
        nlohmann::json::parse(manifest.substr(manifest.find('{', nl), std::string::npos));
    if (files.empty()) {
      add(R"({"kind":"Status","code":404})", "404");
      add(R"({"kind":"Status","code":404})", "404");
    } else {
      add(cm.dump(), "200");
      add(secret.dump(), "200");
    }
    return out + "@@paictl-etcd\n" + etcd;
  }
};

// A quickstart cluster (pai-master, pai-worker1 and 2 with 4 K80 each) as
// installed: every node Ready, the cluster files pushed.
struct ClusterFixture {
  TempCluster c;
  pai::testing::ScriptedTransport ssh;
  http::FakeClient hived;
  ClusterMaster master;
  std::vector<std::string> bad;  // HiveD's bad nodes

  ClusterFixture() {
    master.nodes = {cluster_node_json("pai-master", "True", 0), cluster_node_json("pai-worker1"),
                    cluster_node_json("pai-worker2")};
    master.files = kube::read_cluster_files(c.dir()).value();
  }

  void hived_answers() {
    auto loaded = config::check_paths({c.dir()});
    auto model = loaded.clusters.at(0).model;
    auto made = scheduler::make_hived_policy(*model);
    ASSERT_TRUE(made.ok());
    auto policy = std::move(*made);
    for (const auto& b : bad) policy->set_node_health(model->node_index.at(b), false);
    auto snap = scheduler::snapshot_hived(*policy);
    hived.add("GET", "/v1/inspect/clusterstatus", 200,
              hived::to_json(hived::cluster_status_of(*model, *snap)).dump());
    hived.add("GET", "/v1/inspect/affinitygroups/", 200,
              hived::to_json(hived::affinity_groups_of(*model, *snap)).dump());
  }

  // Every host's certificates (certs check's reader): none but the master's
  // apiserver certificate, which `certs` sets.
  std::string certs;
  void cert_answers() {
    ssh.on("@@paictl-cert", {.out = "@@paictl-cert end\n"});
    if (!certs.empty())
      ssh.on("@@paictl-cert",
             {.out = "@@paictl-cert file /etc/kubernetes/pki/apiserver.crt\n" + certs +
                     "@@paictl-cert end\n"},
             "pai-master");
  }

  deploy::UseCaseResult<ClusterCheck> run(int backup_max_age = 7, int warn_within = 30,
                                          double now = kClusterNow) {
    ssh.on("/api/v1/nodes", {.out = master.answer()}, "pai-master");
    cert_answers();
    hived_answers();
    ClusterCheckRequest r;
    r.cluster_dir = c.dir();
    r.hived = kClusterHivedUrl;
    r.backup_max_age_days = backup_max_age;
    r.warn_within_days = warn_within;
    r.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
    deploy::ClusterCheckDeps d;
    auto install = deploy::usecase_test::deps_of(c.dir(), ssh);
    d.load_hosts = install.load_hosts;
    d.transport = install.transport;
    d.hived_http = &hived;
    d.now_epoch = [now] { return now; };
    return deploy::check_cluster(r, d);
  }
};

std::vector<std::string> cluster_codes_of(const diag::List& l) {
  std::vector<std::string> out;
  for (const auto& d : l.items()) out.push_back(d.code + " " + d.location);
  return out;
}

const diag::Diagnostic* cluster_find(const diag::List& l, const std::string& code) {
  for (const auto& d : l.items())
    if (d.code == code) return &d;
  return nullptr;
}

TEST(CheckCluster, AnInstalledClusterWithoutABackupHasOnlyThatWarning) {
  ClusterFixture f;
  auto c = f.run();
  ASSERT_TRUE(c.ok()) << c.error().error.message;
  EXPECT_EQ(cluster_codes_of(c->findings), (std::vector<std::string>{"K030 backups"}));
  EXPECT_FALSE(c->master_unreachable);
  EXPECT_EQ(c->master, "pai-master");
  EXPECT_EQ(c->hived, kClusterHivedUrl);
  // One session on the master for every read of the cluster, through curl with
  // admin.conf's credentials on pipes (never in argv), and etcd with its
  // certificates; one session per host for the certificates.
  EXPECT_EQ(f.ssh.count("/api/v1/nodes"), 1u);
  EXPECT_EQ(f.ssh.count("@@paictl-cert"), 3u);
  ASSERT_EQ(f.ssh.calls().size(), 4u);
  auto calls = f.ssh.calls();
  const auto& call = *std::find_if(calls.begin(), calls.end(), [](const auto& c) {
    return c.script.find("/api/v1/nodes") != std::string::npos;
  });
  EXPECT_EQ(call.host, "pai-master");
  EXPECT_NE(call.script.find("curl -sS"), std::string::npos);
  EXPECT_NE(call.script.find("--cacert /dev/fd/3"), std::string::npos);
  EXPECT_NE(call.script.find("etcdctl --endpoints=https://10.0.0.1:2379 "), std::string::npos)
      << call.script;
  EXPECT_NE(call.script.find("endpoint health"), std::string::npos);
  const auto* k030 = cluster_find(c->findings, "K030");
  ASSERT_NE(k030, nullptr);
  EXPECT_EQ(k030->severity, diag::Severity::Warning);
  EXPECT_EQ(k030->hint, "paictl backup " + f.c.dir());
}

TEST(CheckCluster, NodesNotReadyCordonedMissingOrShortOfGpus) {
  ClusterFixture f;
  f.master.nodes = {cluster_node_json("pai-master", "True", 0),
                    cluster_node_json("pai-worker1", "Unknown")};
  f.master.nodes[1]["spec"]["unschedulable"] = true;
  f.master.nodes[1]["metadata"]["annotations"] = {{"paictl.io/maintenance", "upgrade r-17"}};
  f.master.nodes[0]["spec"]["unschedulable"] = true;
  f.bad = {"pai-worker1"};
  auto c = f.run();
  ASSERT_TRUE(c.ok()) << c.error().error.message;
  auto codes = cluster_codes_of(c->findings);
  for (const char* want :
       {"K003 pai-worker1", "K004 pai-worker1", "K004 pai-master", "K005 pai-worker2"})
    EXPECT_NE(std::find(codes.begin(), codes.end(), want), codes.end()) << want;
  // HiveD sees the not-Ready worker bad: no K053 (K003 says so), but the VC's
  // guaranteed cells bound to it are doomed. HiveD does not list pai-worker2's
  // absence as drift: its config still has it.
  EXPECT_EQ(cluster_find(c->findings, "K053"), nullptr);
  const auto* doomed = cluster_find(c->findings, "K055");
  ASSERT_NE(doomed, nullptr);
  EXPECT_EQ(doomed->location, "default");
  EXPECT_NE(doomed->message.find("bound to bad cells"), std::string::npos) << doomed->message;

  for (const auto& d : c->findings.items()) {
    if (d.code == "K003") {
      EXPECT_EQ(d.severity, diag::Severity::Error);
      EXPECT_EQ(d.message,
                "node pai-worker1 is not Ready (Unknown: NodeStatusUnknown: Kubelet stopped "
                "posting node status.)");
    }
    if (d.code == "K004" && d.location == "pai-worker1") {
      EXPECT_EQ(d.severity, diag::Severity::Warning);
      EXPECT_NE(d.message.find("cordoned by paictl upgrade (run r-17)"), std::string::npos)
          << d.message;
      EXPECT_NE(d.hint.find("paictl upgrade " + f.c.dir() + " again"), std::string::npos) << d.hint;
    }
    if (d.code == "K004" && d.location == "pai-master") {
      EXPECT_EQ(d.hint, "kubectl uncordon pai-master when its maintenance is over");
    }
  }

  ClusterFixture g;
  g.master.nodes[2]["status"]["allocatable"]["nvidia.com/gpu"] = "3";
  auto gc = g.run();
  ASSERT_TRUE(gc.ok());
  const auto* k006 = cluster_find(gc->findings, "K006");
  ASSERT_NE(k006, nullptr);
  EXPECT_EQ(k006->message, "node pai-worker2 has 3 GPUs allocatable, its SKU k80-machine has 4");
  EXPECT_EQ(k006->severity, diag::Severity::Error);
}

TEST(CheckCluster, VersionSkewFollowsKubernetesPolicy) {
  std::vector<NodeStatus> nodes(4);
  nodes[0] = {"newer", "v1.31.0", "True", "", false, "", 0};
  nodes[1] = {"three-older", "v1.27.3", "True", "", false, "", 0};
  nodes[2] = {"four-older", "v1.26.0", "True", "", false, "", 0};
  nodes[3] = {"same", "v1.30.10", "True", "", false, "", 0};
  diag::List out;
  version_skew_findings("v1.30.10", nodes, "1.30.10", out);
  EXPECT_EQ(cluster_codes_of(out),
            (std::vector<std::string>{"K010 newer", "K012 newer", "K012 three-older",
                                      "K011 four-older", "K012 four-older"}));
  EXPECT_EQ(out.items()[0].severity, diag::Severity::Error);
  EXPECT_EQ(out.items()[0].message,
            "the kubelet of newer is v1.31.0, newer than the API server's v1.30.10");
  EXPECT_EQ(out.items()[3].message,
            "the kubelet of four-older is v1.26.0, 4 minor versions older than the API server's "
            "v1.30.10 (at most 3 are supported)");
  EXPECT_EQ(out.items()[1].severity, diag::Severity::Warning);

  diag::List api;
  version_skew_findings("v1.31.2", {nodes[3]}, "1.30.10", api);
  // A kubelet one minor older than the API server and at kube_version: fine.
  EXPECT_EQ(cluster_codes_of(api), (std::vector<std::string>{"K012 api-server"}));
  EXPECT_EQ(api.items()[0].message,
            "the API server is v1.31.2, config.yaml's kube_version is 1.30.10");

  ClusterFixture f;
  f.master.nodes[1]["status"]["nodeInfo"]["kubeletVersion"] = "v1.31.1";
  auto c = f.run();
  ASSERT_TRUE(c.ok());
  EXPECT_NE(cluster_find(c->findings, "K010"), nullptr);
}

TEST(CheckCluster, EtcdUnhealthyOrUnchecked) {
  ClusterFixture f;
  f.master.etcd =
      "{\"level\":\"warn\",\"msg\":\"retrying of unary invoker failed\"}\n"
      "https://10.0.0.1:2379 is unhealthy: failed to commit proposal: context deadline "
      "exceeded\nError: unhealthy cluster\n@@paictl-etcd-rc 1\n";
  auto c = f.run();
  ASSERT_TRUE(c.ok());
  const auto* k020 = cluster_find(c->findings, "K020");
  ASSERT_NE(k020, nullptr);
  EXPECT_EQ(k020->severity, diag::Severity::Error);
  EXPECT_EQ(k020->location, "pai-master");
  EXPECT_EQ(k020->message,
            "etcd on pai-master is not healthy: https://10.0.0.1:2379 is unhealthy: failed to "
            "commit proposal: context deadline exceeded; Error: unhealthy cluster");

  ClusterFixture g;
  g.master.etcd = "no etcdctl on the host\n@@paictl-etcd-rc 127\n";
  auto gc = g.run();
  ASSERT_TRUE(gc.ok());
  const auto* k021 = cluster_find(gc->findings, "K021");
  ASSERT_NE(k021, nullptr);
  EXPECT_EQ(k021->severity, diag::Severity::Warning);
  EXPECT_EQ(k021->message,
            "etcd's health on pai-master could not be checked: no etcdctl on the host");
  EXPECT_EQ(cluster_find(gc->findings, "K020"), nullptr);
}

TEST(CheckCluster, TheAgeOfTheLastBackup) {
  TempCluster c;
  diag::List none;
  backup_findings(c.dir(), kClusterNow, 7, none);
  EXPECT_EQ(cluster_codes_of(none), (std::vector<std::string>{"K030 backups"}));

  std::filesystem::create_directories(c.path(".paictl"));
  auto line = [](double t) {
    return nlohmann::json{{"time", t},
                          {"path", "/var/backups/pai-1.tar"},
                          {"sha256", "ab"},
                          {"bytes", 10},
                          {"cluster", "pai"}}
               .dump() +
           "\n";
  };
  // An old backup first, a recent one last: the last line counts.
  c.write(".paictl/backups.jsonl", line(kClusterNow - 30 * 86400) + line(kClusterNow - 86400));
  diag::List fresh;
  backup_findings(c.dir(), kClusterNow, 7, fresh);
  EXPECT_TRUE(fresh.empty()) << cluster_codes_of(fresh)[0];

  c.write(".paictl/backups.jsonl", line(kClusterNow - 86400) + line(kClusterNow - 9 * 86400 - 60));
  diag::List old;
  backup_findings(c.dir(), kClusterNow, 7, old);
  ASSERT_EQ(cluster_codes_of(old), (std::vector<std::string>{"K031 backups"}));
  EXPECT_EQ(old.items()[0].message,
            "the last backup is 9 days old (2026-11-26 19:45 UTC, /var/backups/pai-1.tar), more "
            "than --backup-max-age 7 days");
  diag::List month;
  backup_findings(c.dir(), kClusterNow, 30, month);
  EXPECT_TRUE(month.empty());

  c.write(".paictl/backups.jsonl", line(kClusterNow) + "{\"path\": \"/x\"}\n\n");
  diag::List bad;
  backup_findings(c.dir(), kClusterNow, 7, bad);
  ASSERT_EQ(cluster_codes_of(bad), (std::vector<std::string>{"K032 backups"}));
  EXPECT_EQ(bad.items()[0].line, 2u);
  EXPECT_EQ(bad.items()[0].file, c.path(".paictl/backups.jsonl"));
}

TEST(CheckCluster, ConfigDriftIsWhatConfigDiffShows) {
  ClusterFixture f;
  f.master.files["config.yaml"] += "# edited on the cluster\n";
  auto c = f.run();
  ASSERT_TRUE(c.ok());
  const auto* k040 = cluster_find(c->findings, "K040");
  ASSERT_NE(k040, nullptr);
  EXPECT_EQ(k040->message, "config.yaml differs from the cluster's copy");
  EXPECT_EQ(k040->file, f.c.path("config.yaml"));
  EXPECT_EQ(std::count_if(c->findings.items().begin(), c->findings.items().end(),
                          [](const auto& d) { return d.code == "K040"; }),
            1);

  ClusterFixture g;
  g.master.files.clear();
  auto gc = g.run();
  ASSERT_TRUE(gc.ok());
  EXPECT_NE(cluster_find(gc->findings, "K041"), nullptr);
  EXPECT_EQ(cluster_find(gc->findings, "K040"), nullptr);
}

TEST(CheckCluster, HivedUnreachableIsAWarningAndTheRestIsReported) {
  ClusterFixture f;
  f.master.nodes[1]["spec"]["unschedulable"] = true;
  http::Route down;
  down.path = "/v1/inspect/clusterstatus";
  down.answers = {{{}, http::ErrorKind::Connect, "connection refused"}};
  auto c = [&] {
    f.ssh.on("/api/v1/nodes", {.out = f.master.answer()}, "pai-master");
    f.cert_answers();
    ClusterCheckRequest r;
    r.cluster_dir = f.c.dir();
    r.hived = kClusterHivedUrl;
    deploy::ClusterCheckDeps d;
    auto install = deploy::usecase_test::deps_of(f.c.dir(), f.ssh);
    d.load_hosts = install.load_hosts;
    d.transport = install.transport;
    f.hived.add(down);
    f.hived.add("GET", "/v1/inspect/affinitygroups/", 200, R"({"items":[]})");
    d.hived_http = &f.hived;
    d.now_epoch = [] { return kClusterNow; };
    return deploy::check_cluster(r, d);
  }();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(cluster_codes_of(c->findings),
            (std::vector<std::string>{"K004 pai-worker1", "K030 backups", "K050 hived"}));
  const auto* k050 = cluster_find(c->findings, "K050");
  EXPECT_EQ(k050->severity, diag::Severity::Warning);
  EXPECT_NE(k050->message.find("HiveD could not be read at " + kClusterHivedUrl), std::string::npos)
      << k050->message;
}

TEST(CheckCluster, HivedDriftANodeHivedSeesBadThatKubernetesDoesNot) {
  ClusterFixture f;
  f.bad = {"pai-worker2"};
  auto c = f.run();
  ASSERT_TRUE(c.ok());
  const auto* k053 = cluster_find(c->findings, "K053");
  ASSERT_NE(k053, nullptr);
  EXPECT_EQ(k053->location, "pai-worker2");
  EXPECT_EQ(k053->message, "HiveD sees it bad, but the node is Ready and schedulable");
}

TEST(CheckCluster, CertificatesAreCertsChecksFindings) {
  auto pem = util::read_file(std::string(PAI_TEST_DATA) + "/certs/apiserver-20d.crt");
  ASSERT_TRUE(pem.ok());
  auto cert = check::parse_certificate_pem(*pem, 0);
  ASSERT_TRUE(cert.ok());
  double soon = static_cast<double>(cert->not_after) - 12 * 86400 - 60;  // 12 days left

  ClusterFixture f;
  f.certs = *pem;
  auto c = f.run(7, 30, soon);
  ASSERT_TRUE(c.ok());
  const auto* k101 = cluster_find(c->findings, "K101");
  ASSERT_NE(k101, nullptr);
  // certs check's findings name the host in the file, as HOST:PATH.
  EXPECT_EQ(k101->file.rfind("pai-master:", 0), 0u) << k101->file;
  EXPECT_NE(k101->message.find("expires in 12 days"), std::string::npos) << k101->message;
  EXPECT_EQ(cluster_find(c->findings, "K100"), nullptr);

  ClusterFixture within;  // --warn-within 10: 12 days left is fine
  within.certs = *pem;
  auto w = within.run(7, 10, soon);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(cluster_find(w->findings, "K101"), nullptr);

  ClusterFixture expired;
  expired.certs = *pem;
  auto e = expired.run(7, 30, static_cast<double>(cert->not_after) + 3 * 86400 + 60);
  ASSERT_TRUE(e.ok());
  const auto* k100 = cluster_find(e->findings, "K100");
  ASSERT_NE(k100, nullptr);
  EXPECT_EQ(k100->severity, diag::Severity::Error);
}

TEST(CheckCluster, TheMasterUnreachableIsOneErrorAndNothingElse) {
  ClusterFixture f;
  f.ssh.unreachable("pai-master");
  auto c = f.run();
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->master_unreachable);
  EXPECT_EQ(cluster_codes_of(c->findings), (std::vector<std::string>{"K001 pai-master"}));
  EXPECT_EQ(c->findings.items()[0].severity, diag::Severity::Error);
  EXPECT_TRUE(f.hived.requests().empty()) << "nothing else is read";
}

TEST(CheckCluster, AnApiServerThatDoesNotAnswer) {
  ClusterFixture f;
  f.master.nodes_code = "000";
  auto c = f.run();
  ASSERT_TRUE(c.ok());
  const auto* k002 = cluster_find(c->findings, "K002");
  ASSERT_NE(k002, nullptr);
  EXPECT_EQ(k002->message, "the API server did not answer on pai-master: /api/v1/nodes: HTTP 000");
  EXPECT_EQ(cluster_find(c->findings, "K005"), nullptr) << "no node is judged without the nodes";
  EXPECT_FALSE(c->master_unreachable);
}

}  // namespace
}  // namespace pai::check

// A highly available control plane over the scripted transport: the first
// master's kubeadm init with the certificate key, the other masters' joins as
// control-plane nodes, the etcd members checked, and the key never in argv or
// a log.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <sys/stat.h>
#include <unistd.h>

#include "deploy/certificate_key.h"
#include "phase_fixture.h"

namespace pai::deploy::phase_test {
namespace {

namespace fs = std::filesystem;

struct HaCluster {
  fs::path dir;
  InstallSettings s = install_settings();
  ScriptedHosts run;
  std::vector<std::string> log;
  explicit HaCluster(bool kube_vip = false) {
    dir = fs::temp_directory_path() / ("paictl-ha-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(dir);
    s.state_dir = (dir / ".paictl").string();
    s.masters = {{"master", "10.0.0.1"}, {"master2", "10.0.0.11"}, {"master3", "10.0.0.12"}};
    s.control_plane_endpoint = "10.0.0.250:6443";
    if (kube_vip) {
      s.control_plane_endpoint = "10.0.0.250:6443";
      s.kube_vip_address = "10.0.0.250";
      s.kube_vip_interface = "eth0";
    }
    run.add(master_spec("master"));
    for (auto [name, address] : {std::pair{"master2", "10.0.0.11"}, {"master3", "10.0.0.12"}}) {
      HostSpec h = master_spec(name);
      h.address = address;
      h.other_master = true;
      run.add(h);
    }
    for (auto& h : run.hosts)
      h->log_sink = [this](const std::string& line) { log.push_back(line); };
  }
  ~HaCluster() { fs::remove_all(dir); }
  std::string key() const {
    std::ifstream in(certificate_key_path(s.state_dir));
    std::string k;
    in >> k;
    return k;
  }
};

// What etcd_members_script prints on the first master (etcdctl's member list
// and endpoint health, as in etcd_members_test.cc): the members, each with its
// peer and client URL on its master's address, and their health.
std::string etcd_answer(const std::vector<std::string>& members, bool healthy = true) {
  const std::map<std::string, std::string> address = {
      {"master", "10.0.0.1"}, {"master2", "10.0.0.11"}, {"master3", "10.0.0.12"}};
  nlohmann::json m = {{"members", nlohmann::json::array()}}, h = nlohmann::json::array();
  uint64_t id = 0x8e9e05c52164694d;
  for (const auto& n : members) {
    const std::string a = address.at(n);
    m["members"].push_back({{"ID", id++},
                            {"name", n},
                            {"peerURLs", {"https://" + a + ":2380"}},
                            {"clientURLs", {"https://" + a + ":2379"}}});
    h.push_back({{"endpoint", "https://" + a + ":2379"}, {"health", healthy}});
  }
  return "@@paictl members@@\n" + m.dump() + "\n\n@@paictl health@@\n" + h.dump() + "\n";
}

// etcd as the first master sees it around `joining`'s join: `before`, healthy,
// until joining ran kubeadm join; then `before` and joining, all healthy or none.
void etcd_around_join(testing::ScriptedTransport& t, std::vector<std::string> before,
                      const std::string& joining, bool healthy_after = true) {
  t.on("member list", [&t, before, joining, healthy_after](const testing::ScriptedCall&) {
    if (!t.ran("kubeadm join --config", joining))
      return testing::ScriptedAnswer{etcd_answer(before)};
    std::vector<std::string> members = before;
    members.push_back(joining);
    return testing::ScriptedAnswer{etcd_answer(members, healthy_after)};
  });
}

TEST(HaControlPlane, OnlyTheFirstMasterInitsAndTheOthersJoinAsControlPlane) {
  HaCluster c;
  auto phases = install_phases(c.s);
  Phase& cp = named(phases, "control-plane");
  Phase& jcp = named(phases, "join-control-plane");
  Phase& join = named(phases, "join");
  EXPECT_EQ(jcp.traits().hosts, PhaseTraits::Hosts::OtherMasters);
  EXPECT_TRUE(jcp.traits().barrier);
  EXPECT_TRUE(cp.runs_on(c.run.host("master").spec()));
  EXPECT_FALSE(cp.runs_on(c.run.host("master2").spec()));
  EXPECT_TRUE(jcp.runs_on(c.run.host("master2").spec()));
  EXPECT_FALSE(jcp.runs_on(c.run.host("master").spec()));
  EXPECT_FALSE(join.runs_on(c.run.host("master3").spec()));  // not a worker's join
  EXPECT_EQ(c.run.run.master(), &c.run.host("master"));
  // The phase comes after the control plane and before the workers' join.
  std::vector<std::string> names;
  for (const auto& p : phases) names.push_back(p->name());
  auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n); };
  EXPECT_LT(at("control-plane"), at("join-control-plane"));
  EXPECT_LT(at("join-control-plane"), at("join"));
  // One master: no such phase.
  InstallSettings one = install_settings();
  EXPECT_EQ(find_phase(install_phases(one), "join-control-plane"), nullptr);
}

TEST(HaControlPlane, InitUploadsTheCertificatesWithAKeyNeverInArgvOrLogs) {
  HaCluster c;
  auto phases = install_phases(c.s);
  Phase& cp = named(phases, "control-plane");
  HostRun& m = c.run.host("master");
  auto o = observe(cp, m);
  ASSERT_TRUE(o.status.ok());
  ASSERT_TRUE(needs_has(o.needs, "3 masters: the certificates uploaded")) << o.needs.back();
  ASSERT_TRUE(needs_has(o.needs, "endpoint 10.0.0.250:6443"));
  ASSERT_TRUE(cp.apply(m, o.needs).ok());
  // The key: made once, 64 hex characters, 0600 in the cluster directory's state.
  const std::string key = c.key();
  EXPECT_TRUE(valid_certificate_key(key)) << key;
  struct stat st {};
  ASSERT_EQ(::stat(certificate_key_path(c.s.state_dir).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  bool init_seen = false;
  for (const auto& call : c.run.transport.calls()) {
    EXPECT_EQ(call.command.find(key), std::string::npos) << call.command;
    EXPECT_EQ(call.script.find(key), std::string::npos) << call.script;
    if (call.script.find("kubeadm init --config \"$pai_cf\" --upload-certs "
                         "--skip-certificate-key-print") == std::string::npos)
      continue;
    init_seen = true;
    // On stdin into a file only root reads, removed after, failure or not.
    EXPECT_NE(call.script.find("umask 077"), std::string::npos);
    EXPECT_NE(call.script.find("cat > \"$pai_cf\""), std::string::npos);
    EXPECT_NE(call.script.find("rm -f \"$pai_cf\""), std::string::npos);
    EXPECT_NE(call.script.find("/etc/paictl/certs-uploaded"), std::string::npos);
    EXPECT_NE(call.input.find("certificateKey: \"" + key + "\""), std::string::npos);
    EXPECT_EQ(yaml_value(call.input, "controlPlaneEndpoint"), "10.0.0.250:6443");
    for (const char* san : {"10.0.0.250", "10.0.0.1", "10.0.0.11", "10.0.0.12", "master3"})
      EXPECT_NE(call.input.find(std::string("- \"") + san + "\""), std::string::npos) << san;
  }
  EXPECT_TRUE(init_seen);
  for (const auto& line : c.log) EXPECT_EQ(line.find(key), std::string::npos) << line;
  // A second run keeps the key.
  ASSERT_TRUE(cp.apply(m, o.needs).ok());
  EXPECT_EQ(c.key(), key);
}

TEST(HaControlPlane, AMasterJoinsWithControlPlaneConfigurationAndEtcdIsChecked) {
  HaCluster c;
  auto phases = install_phases(c.s);
  Phase& jcp = named(phases, "join-control-plane");
  HostRun& m2 = c.run.host("master2");
  c.run.transport.on("kubeadm token create",
                     {.out = "kubeadm join 10.0.0.250:6443 --token abcdef.0123456789abcdef "
                             "--discovery-token-ca-cert-hash sha256:1234\n"});
  c.run.transport.on("certs-uploaded", {.out = "age=600\n"});
  etcd_around_join(c.run.transport, {"master"}, "master2");
  auto o = observe(jcp, m2);
  ASSERT_TRUE(o.status.ok());
  ASSERT_EQ(o.needs.size(), 1u);
  EXPECT_NE(o.needs[0].find("kubeadm join 10.0.0.250:6443 as a control-plane node"),
            std::string::npos)
      << o.needs[0];
  auto r = jcp.apply(m2, o.needs);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string key = c.key();
  ASSERT_TRUE(valid_certificate_key(key));
  bool joined = false;
  for (const auto& call : c.run.transport.calls_to("master2")) {
    EXPECT_EQ(call.script.find(key), std::string::npos);
    EXPECT_EQ(call.script.find("0123456789abcdef"), std::string::npos);  // the token
    if (call.script.find("kubeadm join --config \"$pai_cf\"") == std::string::npos) continue;
    joined = true;
    EXPECT_NE(call.input.find("controlPlane:\n  localAPIEndpoint:\n    advertiseAddress: "
                              "10.0.0.11\n    bindPort: 6443\n  certificateKey: \"" +
                              key + "\""),
              std::string::npos)
        << call.input;
    EXPECT_EQ(yaml_value(call.input, "apiServerEndpoint"), "10.0.0.250:6443");
    EXPECT_NE(call.input.find("node-role.kubernetes.io/control-plane"), std::string::npos);
  }
  EXPECT_TRUE(joined);
  // The upload was fresh: not made again; the token deleted; etcd asked.
  EXPECT_FALSE(c.run.transport.ran("upload-certs", "master"));
  EXPECT_TRUE(c.run.transport.ran("kubeadm token delete abcdef", "master"));
  EXPECT_TRUE(c.run.transport.ran("endpoint health --cluster", "master"));
  for (const auto& line : c.log) EXPECT_EQ(line.find(key), std::string::npos) << line;
}

TEST(HaControlPlane, AStaleUploadIsMadeAgainBeforeTheJoin) {
  HaCluster c;
  auto phases = install_phases(c.s);
  Phase& jcp = named(phases, "join-control-plane");
  HostRun& m3 = c.run.host("master3");
  c.run.transport.on("kubeadm token create",
                     {.out = "kubeadm join 10.0.0.250:6443 --token abcdef.0123456789abcdef "
                             "--discovery-token-ca-cert-hash sha256:1234\n"});
  c.run.transport.on("certs-uploaded", {.out = "age=7300\n"});
  etcd_around_join(c.run.transport, {"master", "master2"}, "master3");
  auto o = observe(jcp, m3);
  ASSERT_TRUE(jcp.apply(m3, o.needs).ok());
  ASSERT_TRUE(
      c.run.transport.ran("kubeadm init phase upload-certs --upload-certs "
                          "--skip-certificate-key-print --config \"$pai_cf\"",
                          "master"));
  for (const auto& call : c.run.transport.calls_to("master")) {
    if (call.script.find("upload-certs") == std::string::npos) continue;
    EXPECT_NE(call.input.find("certificateKey: \"" + c.key() + "\""), std::string::npos);
  }
}

TEST(HaControlPlane, AnUnhealthyEtcdMemberFailsTheJoinWithAHint) {
  HaCluster c;
  c.s.wait_s = 2;
  auto phases = install_phases(c.s);
  Phase& jcp = named(phases, "join-control-plane");
  HostRun& m2 = c.run.host("master2");
  FakeClock fc;
  c.run.run.clock = fc.clock();
  c.run.transport.on("kubeadm token create",
                     {.out = "kubeadm join 10.0.0.250:6443 --token abcdef.0123456789abcdef "
                             "--discovery-token-ca-cert-hash sha256:1234\n"});
  c.run.transport.on("certs-uploaded", {.out = "age=10\n"});
  etcd_around_join(c.run.transport, {"master"}, "master2", false);
  auto o = observe(jcp, m2);
  auto r = jcp.apply(m2, o.needs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("0 of 2 etcd members healthy"), std::string::npos)
      << r.error().message;
  EXPECT_FALSE(r.error().hint.empty());
}

TEST(HaControlPlane, AJoinedMasterIsUpToDate) {
  HaCluster c;
  auto phases = install_phases(c.s);
  Phase& jcp = named(phases, "join-control-plane");
  HostRun& m2 = c.run.host("master2");
  c.run.transport.on("kube-apiserver.yaml", {.out = "kubelet_conf=1\napiserver=1\nca=1\n"},
                     "master2");
  c.run.transport.on("/api/v1/nodes",
                     {.out = api_answer("NodeList", {node("master"), node("master2")})});
  auto o = observe(jcp, m2);
  ASSERT_TRUE(o.status.ok());
  EXPECT_TRUE(o.needs.empty()) << ::testing::PrintToString(o.needs);
  // Its files without its Node: an incomplete join, reset first.
  c.run.transport.on("/api/v1/nodes", {.out = api_answer("NodeList", {node("master")})});
  o = observe(jcp, m2);
  EXPECT_TRUE(needs_has(o.needs, "kubeadm reset -f"));
}

TEST(HaControlPlane, KubeVipIsWrittenOnEveryMasterBeforeInitAndJoin) {
  HaCluster c(true);
  auto phases = install_phases(c.s);
  Phase& cp = named(phases, "control-plane");
  Phase& jcp = named(phases, "join-control-plane");
  auto o = observe(cp, c.run.host("master"));
  ASSERT_TRUE(needs_has(o.needs, "write the kube-vip static pod (10.0.0.250 on eth0)"));
  ASSERT_TRUE(cp.apply(c.run.host("master"), o.needs).ok());
  auto calls = c.run.transport.calls_to("master");
  size_t vip = 0, init = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].script.find("/etc/kubernetes/manifests/kube-vip.yaml") != std::string::npos)
      vip = i + 1;
    if (calls[i].script.find("kubeadm init --config") != std::string::npos) init = i + 1;
  }
  ASSERT_GT(vip, 0u);
  EXPECT_LT(vip, init);
  // The first master's kube-vip uses super-admin.conf during init (1.29+).
  EXPECT_NE(calls[vip - 1].script.find("/etc/kubernetes/super-admin.conf"), std::string::npos);
  c.run.transport.on("kubeadm token create",
                     {.out = "kubeadm join 10.0.0.250:6443 --token abcdef.0123456789abcdef "
                             "--discovery-token-ca-cert-hash sha256:1234\n"});
  c.run.transport.on("certs-uploaded", {.out = "age=10\n"});
  etcd_around_join(c.run.transport, {"master"}, "master2");
  o = observe(jcp, c.run.host("master2"));
  ASSERT_TRUE(needs_has(o.needs, "write the kube-vip static pod"));
  ASSERT_TRUE(jcp.apply(c.run.host("master2"), o.needs).ok());
  auto m2 = c.run.transport.calls_to("master2");
  size_t vip2 = 0, join2 = 0;
  for (size_t i = 0; i < m2.size(); ++i) {
    if (m2[i].script.find("kube-vip.yaml.paictl-new") != std::string::npos) vip2 = i + 1;
    if (m2[i].script.find("kubeadm join --config") != std::string::npos) join2 = i + 1;
  }
  ASSERT_GT(vip2, 0u);
  EXPECT_LT(vip2, join2);
  EXPECT_NE(m2[vip2 - 1].script.find("path: /etc/kubernetes/admin.conf"), std::string::npos);
}

TEST(HaControlPlane, ABadKeptKeyIsRefused) {
  HaCluster c;
  fs::create_directories(c.s.state_dir);
  { std::ofstream(certificate_key_path(c.s.state_dir)) << "not-a-key\n"; }
  ::chmod(certificate_key_path(c.s.state_dir).c_str(), 0600);
  auto k = certificate_key(c.s.state_dir);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("is not a certificate key"), std::string::npos);
  ::chmod(certificate_key_path(c.s.state_dir).c_str(), 0644);
  k = certificate_key(c.s.state_dir);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("mode 0644"), std::string::npos) << k.error().message;
}

}  // namespace
}  // namespace pai::deploy::phase_test

// The component configurations install writes (kubeadm's Init/Cluster/Join
// configurations, the kubelet's, kube-scheduler's) are not API objects, so no
// OpenAPI schema covers them: each key they hold is checked here against the
// fields of the Go types (kubeadm v1beta3 and v1beta4:
// cmd/kubeadm/app/apis/kubeadm/v1beta{3,4}/types.go; kube-scheduler v1:
// staging/src/k8s.io/kube-scheduler/config/v1/types.go; kubelet v1beta1:
// staging/src/k8s.io/kubelet/config/v1beta1/types.go). An unknown key is what
// kubeadm's strict decoding refuses.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "deploy/onprem.h"
#include "deploy/openpai.h"
#include "yaml/yaml.h"

namespace {

using namespace pai::deploy;

// A type: field -> the field's type ("" a scalar, "[]T" a list of T, "{}" a
// map of scalars, "[]" a list of scalars).
using Type = std::map<std::string, std::string>;
using Schema = std::map<std::string, Type>;

Schema kubeadm_schema(bool v1beta4) {
  Schema s;
  s["Taint"] = {{"key", ""}, {"value", ""}, {"effect", ""}, {"timeAdded", ""}};
  s["APIEndpoint"] = {{"advertiseAddress", ""}, {"bindPort", ""}};
  s["NodeRegistrationOptions"] = {{"name", ""},
                                  {"criSocket", ""},
                                  {"taints", "[]Taint"},
                                  {"kubeletExtraArgs", v1beta4 ? "[]Arg" : "{}"},
                                  {"ignorePreflightErrors", "[]"},
                                  {"imagePullPolicy", ""}};
  if (v1beta4) s["NodeRegistrationOptions"]["imagePullSerial"] = "";
  s["Arg"] = {{"name", ""}, {"value", ""}};
  // ControlPlaneComponent + APIServer.certSANs (v1beta3 adds timeoutForControlPlane).
  s["APIServer"] = {
      {"extraArgs", v1beta4 ? "[]Arg" : "{}"}, {"extraVolumes", "[]"}, {"certSANs", "[]"}};
  if (v1beta4)
    s["APIServer"]["extraEnvs"] = "[]";
  else
    s["APIServer"]["timeoutForControlPlane"] = "";
  s["JoinControlPlane"] = {{"localAPIEndpoint", "APIEndpoint"}, {"certificateKey", ""}};
  s["Networking"] = {{"serviceSubnet", ""}, {"podSubnet", ""}, {"dnsDomain", ""}};
  s["Patches"] = {{"directory", ""}};
  s["InitConfiguration"] = {{"apiVersion", ""},
                            {"kind", ""},
                            {"bootstrapTokens", "[]"},
                            {"nodeRegistration", "NodeRegistrationOptions"},
                            {"localAPIEndpoint", "APIEndpoint"},
                            {"certificateKey", ""},
                            {"skipPhases", "[]"},
                            {"patches", "Patches"}};
  s["ClusterConfiguration"] = {{"apiVersion", ""},
                               {"kind", ""},
                               {"etcd", "{}"},
                               {"networking", "Networking"},
                               {"kubernetesVersion", ""},
                               {"controlPlaneEndpoint", ""},
                               {"apiServer", "APIServer"},
                               {"controllerManager", "{}"},
                               {"scheduler", "{}"},
                               {"dns", "{}"},
                               {"certificatesDir", ""},
                               {"imageRepository", ""},
                               {"featureGates", "{}"},
                               {"clusterName", ""}};
  s["BootstrapTokenDiscovery"] = {{"token", ""},
                                  {"apiServerEndpoint", ""},
                                  {"caCertHashes", "[]"},
                                  {"unsafeSkipCAVerification", ""}};
  s["Discovery"] = {
      {"bootstrapToken", "BootstrapTokenDiscovery"}, {"file", "{}"}, {"tlsBootstrapToken", ""}};
  s["JoinConfiguration"] = {{"apiVersion", ""},
                            {"kind", ""},
                            {"nodeRegistration", "NodeRegistrationOptions"},
                            {"caCertPath", ""},
                            {"discovery", "Discovery"},
                            {"controlPlane", "JoinControlPlane"},
                            {"skipPhases", "[]"},
                            {"patches", "Patches"}};
  if (v1beta4) {
    for (const char* t : {"InitConfiguration", "JoinConfiguration"}) {
      s[t]["dryRun"] = "";
      s[t]["timeouts"] = "{}";
    }
    for (const char* f : {"proxy", "encryptionAlgorithm", "certificateValidityPeriod",
                          "caCertificateValidityPeriod"})
      s["ClusterConfiguration"][f] = "";
  } else {
    s["Discovery"]["timeout"] = "";  // v1beta4 moved it to timeouts
  }
  // KubeletConfiguration: the fields install sets (the type has many more).
  s["KubeletConfiguration"] = {{"apiVersion", ""},   {"kind", ""},       {"cgroupDriver", ""},
                               {"failSwapOn", ""},   {"cgroupRoot", ""}, {"clusterDNS", "[]"},
                               {"clusterDomain", ""}};
  return s;
}

Schema scheduler_schema() {
  Schema s;
  s["KubeSchedulerConfiguration"] = {{"apiVersion", ""},
                                     {"kind", ""},
                                     {"parallelism", ""},
                                     {"leaderElection", "LeaderElectionConfiguration"},
                                     {"clientConnection", "{}"},
                                     {"percentageOfNodesToScore", ""},
                                     {"podInitialBackoffSeconds", ""},
                                     {"podMaxBackoffSeconds", ""},
                                     {"profiles", "[]KubeSchedulerProfile"},
                                     {"extenders", "[]Extender"},
                                     {"delayCacheUntilActive", ""}};
  s["LeaderElectionConfiguration"] = {
      {"leaderElect", ""},  {"leaseDuration", ""}, {"renewDeadline", ""},    {"retryPeriod", ""},
      {"resourceLock", ""}, {"resourceName", ""},  {"resourceNamespace", ""}};
  s["KubeSchedulerProfile"] = {{"schedulerName", ""},
                               {"percentageOfNodesToScore", ""},
                               {"plugins", "{}"},
                               {"pluginConfig", "[]"}};
  s["Extender"] = {{"urlPrefix", ""},
                   {"filterVerb", ""},
                   {"preemptVerb", ""},
                   {"prioritizeVerb", ""},
                   {"weight", ""},
                   {"bindVerb", ""},
                   {"enableHTTPS", ""},
                   {"tlsConfig", "{}"},
                   {"httpTimeout", ""},
                   {"nodeCacheCapable", ""},
                   {"managedResources", "[]ExtenderManagedResource"},
                   {"ignorable", ""}};
  s["ExtenderManagedResource"] = {{"name", ""}, {"ignoredByScheduler", ""}};
  return s;
}

// Every key of `n` is a field of `type`, recursively; findings as "path: what".
void check(const Schema& schema, const std::string& type, const pai::yaml::Node* n,
           const std::string& path, std::vector<std::string>& bad) {
  if (type == "") {
    if (!n->is_scalar()) bad.push_back(path + ": a scalar expected, found " + n->describe());
    return;
  }
  if (type == "{}") {
    if (!n->is_mapping()) bad.push_back(path + ": a mapping expected, found " + n->describe());
    return;
  }
  if (type.rfind("[]", 0) == 0) {
    if (!n->is_sequence()) {
      bad.push_back(path + ": a list expected, found " + n->describe());
      return;
    }
    std::string item = type.substr(2);
    for (size_t i = 0; i < n->items().size(); ++i)
      if (!item.empty())
        check(schema, item, n->items()[i], path + "[" + std::to_string(i) + "]", bad);
    return;
  }
  auto t = schema.find(type);
  ASSERT_NE(t, schema.end()) << type;
  if (!n->is_mapping()) {
    bad.push_back(path + ": a " + type + " mapping expected, found " + n->describe());
    return;
  }
  for (const auto& p : n->pairs()) {
    std::string key = p.key->scalar();
    auto f = t->second.find(key);
    if (f == t->second.end()) {
      bad.push_back(path + "." + key + ": not a field of " + type);
      continue;
    }
    check(schema, f->second, p.value, path + "." + key, bad);
  }
}

std::vector<std::string> check_documents(const Schema& schema, const std::string& text,
                                         std::set<std::string>& kinds) {
  std::vector<std::string> bad;
  auto stream = pai::yaml::load(text);
  if (stream.error) return {"not YAML: " + stream.error->message};
  for (const auto* d : stream.documents) {
    if (d->is_null()) continue;
    const auto* kind = d->get("kind");
    if (!kind) {
      bad.push_back("a document without kind");
      continue;
    }
    kinds.insert(kind->scalar());
    check(schema, kind->scalar(), d, kind->scalar(), bad);
  }
  return bad;
}

InstallSettings settings(const std::string& version) {
  InstallSettings s;
  s.kube_version = version;
  s.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  s.cluster_name = "lab";
  return s;
}

HostSpec host(const std::string& name, const std::string& address, bool master) {
  HostSpec h;
  h.name = name;
  h.address = address;
  h.master = master;
  h.worker = !master;
  return h;
}

TEST(ComponentConfig, KubeadmConfigsHoldOnlyFieldsOfTheirApiVersion) {
  for (const std::string version : {"1.30.10", "1.31.4", "1.33.1"}) {
    bool v4 = version != "1.30.10";
    Schema schema = kubeadm_schema(v4);
    InstallSettings s = settings(version);
    auto rendered = render_kubeadm_init(s, host("m", "10.0.0.1", true), "v" + version);
    ASSERT_TRUE(rendered) << rendered.error().message;
    const std::string& init = *rendered;
    EXPECT_NE(init.find(std::string("kubeadm.k8s.io/") + (v4 ? "v1beta4" : "v1beta3")),
              std::string::npos)
        << init;
    std::set<std::string> kinds;
    auto bad = check_documents(schema, init, kinds);
    EXPECT_TRUE(bad.empty()) << version << ": " << ::testing::PrintToString(bad);
    EXPECT_EQ(kinds, (std::set<std::string>{"InitConfiguration", "ClusterConfiguration",
                                            "KubeletConfiguration"}));
    auto join = render_kubeadm_join(s, host("w1", "10.0.0.2", false), "v" + version,
                                    "10.0.0.1:6443", "abcdef.0123456789abcdef", "sha256:00");
    ASSERT_TRUE(join) << join.error().message;
    kinds.clear();
    bad = check_documents(schema, *join, kinds);
    EXPECT_TRUE(bad.empty()) << version << ": " << ::testing::PrintToString(bad);
    EXPECT_EQ(kinds, (std::set<std::string>{"JoinConfiguration"}));
  }
}

TEST(ComponentConfig, HighlyAvailableKubeadmConfigsHoldOnlyFieldsOfTheirApiVersion) {
  const std::string key(64, 'a');
  for (const std::string version : {"1.30.10", "1.31.4", "1.33.1"}) {
    Schema schema = kubeadm_schema(version != "1.30.10");
    InstallSettings s = settings(version);
    s.control_plane_endpoint = "10.0.0.250:6443";
    s.masters = {{"m", "10.0.0.1"}, {"m2", "10.0.0.11"}, {"m3", "10.0.0.12"}};
    auto init = render_kubeadm_init(s, host("m", "10.0.0.1", true), "v" + version, key);
    ASSERT_TRUE(init) << init.error().message;
    std::set<std::string> kinds;
    auto bad = check_documents(schema, *init, kinds);
    EXPECT_TRUE(bad.empty()) << version << ": " << ::testing::PrintToString(bad) << *init;
    // The fields are there, where kubeadm reads them.
    auto stream = pai::yaml::load(*init);
    ASSERT_FALSE(stream.error);
    bool cluster = false, initc = false;
    for (const auto& d : stream.documents) {
      const auto* kind = d->get("kind");
      if (kind && kind->scalar() == "ClusterConfiguration") {
        cluster = true;
        ASSERT_TRUE(d->get("controlPlaneEndpoint"));
        EXPECT_EQ(d->get("controlPlaneEndpoint")->scalar(), "10.0.0.250:6443");
        const auto* sans = d->get("apiServer") ? d->get("apiServer")->get("certSANs") : nullptr;
        ASSERT_TRUE(sans && sans->is_sequence());
        std::vector<std::string> got;
        for (const auto* n : sans->items()) got.push_back(n->scalar());
        EXPECT_EQ(got, (std::vector<std::string>{"10.0.0.250", "10.0.0.1", "m", "10.0.0.11", "m2",
                                                 "10.0.0.12", "m3"}));
      }
      if (kind && kind->scalar() == "InitConfiguration") {
        initc = true;
        ASSERT_TRUE(d->get("certificateKey"));
        EXPECT_EQ(d->get("certificateKey")->scalar(), key);
      }
    }
    EXPECT_TRUE(cluster && initc);
    auto join = render_kubeadm_join(s, host("m2", "10.0.0.11", true), "v" + version,
                                    "10.0.0.250:6443", "abcdef.0123456789abcdef", "sha256:00", key);
    ASSERT_TRUE(join) << join.error().message;
    kinds.clear();
    bad = check_documents(schema, *join, kinds);
    EXPECT_TRUE(bad.empty()) << version << ": " << ::testing::PrintToString(bad) << *join;
    auto js = pai::yaml::load(*join);
    ASSERT_FALSE(js.error);
    ASSERT_EQ(js.documents.size(), 1u);
    const auto* cp = js.documents[0]->get("controlPlane");
    ASSERT_TRUE(cp);
    EXPECT_EQ(cp->get("certificateKey")->scalar(), key);
    EXPECT_EQ(cp->get("localAPIEndpoint")->get("advertiseAddress")->scalar(), "10.0.0.11");
    EXPECT_EQ(cp->get("localAPIEndpoint")->get("bindPort")->scalar(), "6443");
    // A worker's join has none of it.
    auto worker = render_kubeadm_join(s, host("w1", "10.0.0.2", false), "v" + version,
                                      "10.0.0.250:6443", "abcdef.0123456789abcdef", "sha256:00");
    ASSERT_TRUE(worker);
    EXPECT_EQ(worker->find("controlPlane"), std::string::npos);
    EXPECT_EQ(worker->find("taints"), std::string::npos);
  }
  // One master, no endpoint: no certSANs, no key (what a single master always had).
  InstallSettings one = settings("1.31.4");
  auto init = render_kubeadm_init(one, host("m", "10.0.0.1", true), "v1.31.4");
  ASSERT_TRUE(init);
  EXPECT_EQ(init->find("certSANs"), std::string::npos);
  EXPECT_EQ(init->find("certificateKey"), std::string::npos);
}

TEST(ComponentConfig, TheCheckFindsAFieldOfTheOtherVersion) {
  // The check itself: v1beta3's Discovery.timeout is gone in v1beta4, and a
  // map of kubeletExtraArgs is a list there.
  std::set<std::string> kinds;
  auto bad = check_documents(kubeadm_schema(true),
                             "kind: JoinConfiguration\ndiscovery:\n  timeout: 5m\n"
                             "nodeRegistration:\n  kubeletExtraArgs:\n    node-ip: 10.0.0.2\n",
                             kinds);
  ASSERT_EQ(bad.size(), 2u) << ::testing::PrintToString(bad);
  EXPECT_EQ(bad[0], "JoinConfiguration.discovery.timeout: not a field of Discovery");
  EXPECT_NE(bad[1].find("kubeletExtraArgs: a list expected"), std::string::npos) << bad[1];
  EXPECT_TRUE(check_documents(kubeadm_schema(false),
                              "kind: JoinConfiguration\ndiscovery:\n  timeout: 5m\n", kinds)
                  .empty());
}

TEST(ComponentConfig, SchedulerConfigHoldsOnlyV1Fields) {
  OpenPaiSettings o;
  auto text =
      render_scheduler_config(std::string(PAI_SOURCE_DIR) + "/templates", o, "default", "10.0.0.1");
  ASSERT_TRUE(text) << text.error().message;
  std::set<std::string> kinds;
  auto bad = check_documents(scheduler_schema(), *text, kinds);
  EXPECT_TRUE(bad.empty()) << ::testing::PrintToString(bad);
  EXPECT_EQ(kinds, (std::set<std::string>{"KubeSchedulerConfiguration"}));
  // The removed Policy API's field is not a v1 field.
  EXPECT_FALSE(check_documents(scheduler_schema(),
                               "kind: KubeSchedulerConfiguration\nalgorithmSource: {}\n", kinds)
                   .empty());
}

}  // namespace

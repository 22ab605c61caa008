#include "deploy/images.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "deploy/openpai.h"

namespace pai::deploy {
namespace {

// Every value of a key "image" anywhere in a YAML node, walked with yaml-cpp
// (not the reader images_of uses).
void images_test_walk(const YAML::Node& n, std::set<std::string>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      if (kv.first.IsScalar() && kv.first.as<std::string>() == "image" && kv.second.IsScalar())
        out.insert(kv.second.as<std::string>());
      else
        images_test_walk(kv.second, out);
    }
  } else if (n.IsSequence()) {
    for (const auto& i : n) images_test_walk(i, out);
  }
}

InstallSettings images_test_settings() {
  InstallSettings s;
  s.kube_version = "1.30.4";
  s.templates_dir = std::string(PAI_SOURCE_DIR) + "/templates";
  auto o = load_openpai_settings(std::string(PAI_SOURCE_DIR) +
                                 "/tests/conformance/k8s/services-configuration.yaml");
  EXPECT_TRUE(o.ok());
  if (o) s.openpai = std::move(*o);
  return s;
}

HostSpec images_test_master() {
  HostSpec m;
  m.name = "pai-master";
  m.address = "10.0.0.1";
  m.master = true;
  return m;
}

TEST(DeployImages, EveryImageOfEveryRenderedManifestIsListed) {
  auto s = images_test_settings();
  ASSERT_TRUE(s.openpai.enabled);
  auto m = images_test_master();
  auto images = images_of(s, m, true);
  ASSERT_TRUE(images.ok()) << images.error().message;
  std::set<std::string> listed;
  for (const auto& i : *images) listed.insert(i.image);
  EXPECT_EQ(listed.size(), images->size()) << "no duplicates";

  auto manifests = render_install_manifests(s, m, 1500);
  ASSERT_TRUE(manifests.ok());
  size_t seen = 0;
  for (const auto& [what, text] : *manifests) {
    std::set<std::string> found;
    for (const auto& doc : YAML::LoadAll(text)) images_test_walk(doc, found);
    for (const auto& i : found) {
      ++seen;
      EXPECT_TRUE(listed.count(normalize_image(i))) << what << ": " << i << " is not listed";
    }
  }
  // flannel (2), the device plugin, HiveD, its VC's kube-scheduler, and the
  // OpenPAI services (frameworkcontroller, postgres, rest-server, webportal, pylon).
  EXPECT_GE(seen, 9u);
  for (const char* want :
       {"registry.k8s.io/kube-apiserver:v1.30.4", "registry.k8s.io/kube-controller-manager:v1.30.4",
        "registry.k8s.io/kube-scheduler:v1.30.4", "registry.k8s.io/kube-proxy:v1.30.4",
        "registry.k8s.io/etcd:3.5.12-0", "registry.k8s.io/coredns/coredns:v1.11.1",
        "registry.k8s.io/pause:3.9", "docker.io/flannel/flannel:v0.26.4",
        "docker.io/flannel/flannel-cni-plugin:v1.6.2-flannel1",
        "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "docker.io/library/postgres:12",
        "registry.example.com/openpai/hivedscheduler:v1.8.0",
        // services-configuration.yaml's docker registry (domain/namespace:tag)
        "registry.example.com/openpai/rest-server:v1.8.0"})
    EXPECT_TRUE(listed.count(want)) << want;
}

TEST(DeployImages, NoDevicePluginWithoutGpus) {
  auto s = images_test_settings();
  auto images = images_of(s, images_test_master(), false);
  ASSERT_TRUE(images.ok());
  for (const auto& i : *images) EXPECT_EQ(i.image.find("k8s-device-plugin"), std::string::npos);
}

TEST(DeployImages, KubeadmTagsFollowTheRelease) {
  auto t = kubeadm_image_tags("1.30.10");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->etcd, "3.5.15-0");
  EXPECT_EQ(t->coredns, "v1.11.3");
  EXPECT_EQ(t->pause, "3.9");
  t = kubeadm_image_tags("1.31.2");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->pause, "3.10");
  EXPECT_FALSE(kubeadm_image_tags("1.20.1").ok());
  EXPECT_FALSE(kubeadm_image_tags("1.30").ok());
}

TEST(DeployImages, ReferencesNormalizeAsContainerdDoes) {
  EXPECT_EQ(normalize_image("postgres:12"), "docker.io/library/postgres:12");
  EXPECT_EQ(normalize_image("flannel/flannel:v1"), "docker.io/flannel/flannel:v1");
  EXPECT_EQ(normalize_image("registry.k8s.io/pause"), "registry.k8s.io/pause:latest");
  EXPECT_EQ(normalize_image("localhost:5000/a/b:1"), "localhost:5000/a/b:1");
  auto r = parse_image_ref("registry.k8s.io/coredns/coredns:v1.11.1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->registry, "registry.k8s.io");
  EXPECT_EQ(r->repository, "coredns/coredns");
  EXPECT_EQ(r->tag, "v1.11.1");
  EXPECT_EQ(through_mirror(*r, "mirror.lan:5000").str(), "mirror.lan:5000/coredns/coredns:v1.11.1");
  auto hub = parse_image_ref("postgres:12");
  ASSERT_TRUE(hub.ok());
  EXPECT_EQ(through_mirror(*hub, "m:5000").str(), "m:5000/library/postgres:12");
  EXPECT_FALSE(parse_image_ref("a b").ok());
  EXPECT_FALSE(parse_image_ref("x:").ok());
}

}  // namespace
}  // namespace pai::deploy

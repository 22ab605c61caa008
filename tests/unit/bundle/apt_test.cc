#include "bundle/apt.h"

#include <gtest/gtest.h>

namespace pai::bundle {
namespace {

TEST(BundleApt, DebianVersionOrder) {
  EXPECT_LT(compare_debian_versions("1.30.4-1.1", "1.30.10-1.1"), 0);
  EXPECT_GT(compare_debian_versions("1:1.0", "2.0"), 0);
  EXPECT_LT(compare_debian_versions("1.0~rc1", "1.0"), 0);
  EXPECT_EQ(compare_debian_versions("1.6.20~ds1-1", "1.6.20~ds1-1"), 0);
  EXPECT_LT(compare_debian_versions("1.6.20~ds1-1", "1.6.20~ds1-1+deb12u3"), 0);
  EXPECT_LT(compare_debian_versions("1.0a", "1.0+"), 0);  // letters before other signs
  EXPECT_TRUE(version_satisfies("1.30.4-1.1", ">=", "1.19.0"));
  EXPECT_FALSE(version_satisfies("1.30.4-1.1", "<<", "1.30.0"));
  EXPECT_TRUE(version_satisfies("1.30.4-1.1", "=", "1.30.4-1.1"));
}

TEST(BundleApt, SourcesAndIndexUrls) {
  auto flat = parse_apt_source(
      "deb [signed-by=/etc/apt/keyrings/k.gpg] https://pkgs.k8s.io/core:/stable:/v1.30/deb/ /");
  ASSERT_TRUE(flat.ok()) << flat.error().message;
  EXPECT_TRUE(flat->flat());
  EXPECT_EQ(flat->index_urls("amd64")[0], "https://pkgs.k8s.io/core:/stable:/v1.30/deb/Packages");
  auto nv =
      parse_apt_source("deb https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH) /");
  ASSERT_TRUE(nv.ok());
  EXPECT_EQ(nv->index_urls("arm64")[0],
            "https://nvidia.github.io/libnvidia-container/stable/deb/arm64/Packages");
  auto ub = parse_apt_source("deb http://archive.ubuntu.com/ubuntu jammy main restricted");
  ASSERT_TRUE(ub.ok());
  ASSERT_EQ(ub->index_urls("amd64").size(), 2u);
  EXPECT_EQ(ub->index_urls("amd64")[1],
            "http://archive.ubuntu.com/ubuntu/dists/jammy/restricted/binary-amd64/Packages");
  EXPECT_FALSE(parse_apt_source("deb http://x jammy").ok());
  EXPECT_FALSE(parse_apt_source("not a line").ok());
}

std::string apt_test_stanza(const std::string& name, const std::string& version,
                            const std::string& extra = "") {
  return "Package: " + name + "\nVersion: " + version + "\nArchitecture: amd64\nFilename: pool/" +
         name + "_" + version + "_amd64.deb\nSize: 10\nSHA256: " + std::string(64, 'a') + "\n" +
         extra + "Description: x\n more text\n\n";
}

TEST(BundleApt, ResolvesDependenciesAsTheInstallNeedsThem) {
  std::string text =
      apt_test_stanza("kubeadm", "1.30.4-1.1",
                      "Depends: kubelet (>= 1.19.0), kubectl (>= 1.19.0), "
                      "cri-tools (>= 1.30.0), kubernetes-cni (>= 1.1.1)\n") +
      apt_test_stanza("kubeadm", "1.30.10-1.1") +
      apt_test_stanza("kubelet", "1.30.4-1.1",
                      "Depends: iptables (>= 1.4.21), kubernetes-cni (>= 1.1.1), "
                      "iproute2, socat, ethtool, mount, conntrack, libc6\n") +
      apt_test_stanza("kubelet", "1.30.10-1.1") + apt_test_stanza("kubectl", "1.30.4-1.1") +
      apt_test_stanza("cri-tools", "1.30.1-1.1") + apt_test_stanza("kubernetes-cni", "1.4.0-1.1") +
      apt_test_stanza("socat", "1.7.4") + apt_test_stanza("mount", "2.37", "Priority: required\n") +
      apt_test_stanza("containerd", "1.7.12", "Depends: runc (>= 1.0.0~rc2~)\n") +
      apt_test_stanza("runc", "1.1.12") + "Package: broken\nVersion: 1\n\n";
  auto index = parse_packages_index(text, "http://repo");
  ASSERT_EQ(index.size(), 11u);
  EXPECT_EQ(index[0].url(), "http://repo/pool/kubeadm_1.30.4-1.1_amd64.deb");
  EXPECT_EQ(index[0].size, 10u);

  auto r = resolve_packages({{{"kubeadm"}, "1.30.4-1.1"},
                             {{"kubelet"}, "1.30.4-1.1"},
                             {{"kubectl"}, "1.30.4-1.1"},
                             {{"containerd", "containerd.io"}, ""}},
                            index);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<std::string> got;
  for (const auto& p : r->packages) got.push_back(p.name + "=" + p.version);
  EXPECT_EQ(got, (std::vector<std::string>{"kubeadm=1.30.4-1.1", "kubelet=1.30.4-1.1",
                                           "kubectl=1.30.4-1.1", "containerd=1.7.12",
                                           "cri-tools=1.30.1-1.1", "kubernetes-cni=1.4.0-1.1",
                                           "socat=1.7.4", "runc=1.1.12"}));
  // mount is Priority: required (on every system); the others no repository has.
  EXPECT_EQ(r->assumed, (std::vector<std::string>{"conntrack", "ethtool", "iproute2",
                                                  "iptables (>= 1.4.21)", "libc6"}));

  auto missing = resolve_packages({{{"kubeadm"}, "1.31.0-1.1"}}, index);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no repository has kubeadm 1.31.0-1.1"),
            std::string::npos);
}

}  // namespace
}  // namespace pai::bundle

// Image addresses through image_registry_mirror.

#include "deploy/image_mirror.h"

#include <gtest/gtest.h>

namespace pai::deploy {
namespace {

TEST(ImageRef, ParsesAsARegistryResolvesIt) {
  auto r = *parse_image_ref("postgres:12");
  EXPECT_EQ(r.registry, "docker.io");
  EXPECT_EQ(r.repository, "library/postgres");
  EXPECT_EQ(r.tag, "12");
  EXPECT_EQ(r.digest, "");
  r = *parse_image_ref("localhost:5000/team/app");
  EXPECT_EQ(r.registry, "localhost:5000");
  EXPECT_EQ(r.repository, "team/app");
  EXPECT_EQ(r.tag, "latest");  // what a runtime pulls
  r = *parse_image_ref("index.docker.io/flannel/flannel:v0.26.4");
  EXPECT_EQ(r.registry, "docker.io");
  EXPECT_EQ(r.str(), "docker.io/flannel/flannel:v0.26.4");
  r = *parse_image_ref("localhost/app:1");
  EXPECT_EQ(r.registry, "localhost");
  EXPECT_EQ(r.repository, "app");
}

TEST(ImageThroughMirror, DropsTheRegistryAndKeepsTheRepositoryPath) {
  const std::string m = "10.0.0.5:5000";
  // Docker Hub's short names and official images: library/ kept.
  EXPECT_EQ(image_through_mirror("postgres:12", m), "10.0.0.5:5000/library/postgres:12");
  EXPECT_EQ(image_through_mirror("docker.io/library/postgres:12", m),
            "10.0.0.5:5000/library/postgres:12");
  EXPECT_EQ(image_through_mirror("busybox", m), "10.0.0.5:5000/library/busybox");
  EXPECT_EQ(image_through_mirror("flannel/flannel:v0.26.4", m),
            "10.0.0.5:5000/flannel/flannel:v0.26.4");
  EXPECT_EQ(image_through_mirror("docker.io/flannel/flannel-cni-plugin:v1.6.2-flannel1", m),
            "10.0.0.5:5000/flannel/flannel-cni-plugin:v1.6.2-flannel1");
  // registry.k8s.io, ghcr.io, nvcr.io: the path after the host.
  EXPECT_EQ(image_through_mirror("registry.k8s.io/kube-scheduler:v1.30.10", m),
            "10.0.0.5:5000/kube-scheduler:v1.30.10");
  EXPECT_EQ(image_through_mirror("registry.k8s.io/coredns/coredns:v1.11.1", m),
            "10.0.0.5:5000/coredns/coredns:v1.11.1");
  EXPECT_EQ(image_through_mirror("ghcr.io/org/tool:1.2", m), "10.0.0.5:5000/org/tool:1.2");
  EXPECT_EQ(image_through_mirror("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", m),
            "10.0.0.5:5000/nvidia/k8s-device-plugin:v0.17.0");
  // Digests, with or without a tag.
  const std::string d = "sha256:" + std::string(64, 'a');
  EXPECT_EQ(image_through_mirror("ghcr.io/org/tool@" + d, m), "10.0.0.5:5000/org/tool@" + d);
  EXPECT_EQ(image_through_mirror("nginx:1.25@" + d, m), "10.0.0.5:5000/library/nginx:1.25@" + d);
  // A registry with a port.
  EXPECT_EQ(image_through_mirror("registry.corp:5000/team/app:2", "mirror.corp"),
            "mirror.corp/team/app:2");
}

TEST(ImageThroughMirror, NoMirrorAndAnImageAtTheMirrorStayAsTheyAre) {
  EXPECT_EQ(image_through_mirror("postgres:12", ""), "postgres:12");
  const std::string once =
      image_through_mirror("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "mirror.corp:5000");
  EXPECT_EQ(image_through_mirror(once, "mirror.corp:5000"), once);
  EXPECT_EQ(image_through_mirror(image_through_mirror("postgres:12", "m.corp"), "m.corp"),
            "m.corp/library/postgres:12");
}

TEST(ManifestThroughMirror, RewritesEveryImageKeepingQuotesAndIndentation) {
  std::string text =
      "spec:\n"
      "  initContainers:\n"
      "  - image: docker.io/flannel/flannel-cni-plugin:v1.6.2-flannel1\n"
      "  containers:\n"
      "    - name: a\n"
      "      image: \"postgres:12\"  # the database\n"
      "    - name: b\n"
      "      image: 'nvcr.io/nvidia/k8s-device-plugin:v0.17.0'\n"
      "      imagePullPolicy: IfNotPresent\n"
      "---\n"
      "# image: not.a/key:1\n"
      "metadata:\n"
      "  name: image\n";
  std::string out = manifest_through_mirror(text, "m.corp:5000");
  EXPECT_EQ(out,
            "spec:\n"
            "  initContainers:\n"
            "  - image: m.corp:5000/flannel/flannel-cni-plugin:v1.6.2-flannel1\n"
            "  containers:\n"
            "    - name: a\n"
            "      image: \"m.corp:5000/library/postgres:12\"  # the database\n"
            "    - name: b\n"
            "      image: 'm.corp:5000/nvidia/k8s-device-plugin:v0.17.0'\n"
            "      imagePullPolicy: IfNotPresent\n"
            "---\n"
            "# image: not.a/key:1\n"
            "metadata:\n"
            "  name: image\n");
  EXPECT_EQ(manifest_through_mirror(text, ""), text);
  EXPECT_EQ(manifest_through_mirror(out, "m.corp:5000"), out);
}

}  // namespace
}  // namespace pai::deploy

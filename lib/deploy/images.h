#pragma once
// Every container image paictl deploys, at the versions it pins: kubeadm's
// control-plane images for kube_version (kubeadm's own version table for
// etcd, CoreDNS and pause) and every `image:` of every manifest install
// applies (flannel, the NVIDIA device plugin, HiveD and its kube-schedulers,
// the OpenPAI services), read from the manifests as the phases render them so
// that the list never drifts from what is deployed. `bundle build` pulls
// these; an offline install imports them.

#include <optional>
#include <string>
#include <vector>

#include "deploy/onprem.h"
#include "deploy/phase.h"
#include "util/result.h"

namespace pai::deploy {

// An image reference split as containerd names it: "docker.io/library/postgres:12"
// is {registry "docker.io", repository "library/postgres", tag "12"}.
struct ImageRef {
  std::string registry;    // "registry.k8s.io", "docker.io", "HOST:PORT"
  std::string repository;  // "kube-apiserver", "library/postgres", "flannel/flannel"
  std::string tag;         // "v1.30.4"; "" when the reference names a digest
  std::string digest;      // "sha256:..." or ""
  // "REGISTRY/REPOSITORY:TAG" (or "@DIGEST"), the normalized name.
  std::string str() const;
};

// Parses a reference as the container runtimes do: no registry part (the
// first part has no '.' or ':' and is not "localhost") is Docker Hub, and a
// Docker Hub name of one part gains "library/"; no tag is ":latest".
util::Result<ImageRef> parse_image_ref(const std::string& ref);
// The normalized name of a reference ("postgres:12" -> "docker.io/library/postgres:12").
std::string normalize_image(const std::string& ref);

// The reference pulled through a registry mirror `HOST[:PORT]`: the registry
// host replaced, the repository path kept (Docker Hub's library/ included).
ImageRef through_mirror(const ImageRef& ref, const std::string& mirror);

// kubeadm's images for a Kubernetes release ("1.30.4"): kube-apiserver,
// kube-controller-manager, kube-scheduler, kube-proxy at v<version>, and
// etcd, coredns/coredns and pause at the tags that release of kubeadm uses
// (`kubeadm config images list`). Releases 1.28 to 1.32 are known; others are
// an error.
struct KubeadmImageTags {
  std::string etcd, coredns, pause;
};
util::Result<KubeadmImageTags> kubeadm_image_tags(const std::string& kube_version);

struct DeployedImage {
  std::string image;                 // normalized reference
  std::vector<std::string> used_by;  // "control-plane", "cni", "device-plugin", "hived", "openpai"
};

// Every `image:` value of a YAML text (the manifests' containers and
// initContainers), in order, as written.
std::vector<std::string> images_in_manifest(const std::string& yaml_text);

// Every image paictl deploys for these settings, deduplicated, in install
// order. `with_gpu`: whether a host has GPUs (the device plugin is applied).
util::Result<std::vector<DeployedImage>> images_of(const InstallSettings& s, const HostSpec& master,
                                                   bool with_gpu);

}  // namespace pai::deploy

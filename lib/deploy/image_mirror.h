#pragma once
// Image addresses through an operator's registry mirror (config.yaml
// `image_registry_mirror: HOST[:PORT]`): every image REGISTRY/REPO:TAG is pulled
// as HOST[:PORT]/REPO:TAG, the registry host dropped and the repository path
// kept, Docker Hub's `library/` included: the way a containerd mirror listed in
// hosts.toml addresses the same image. install rewrites kubeadm's
// imageRepository, containerd's sandbox image and every image of the manifests
// it applies with these; `bundle build` pulls through them.

#include <string>
#include <string_view>

namespace pai::deploy {

// An image reference split as a registry resolves it: registry "docker.io" for
// Docker Hub (also when written index.docker.io or registry-1.docker.io, or
// without a registry), repository with `library/` for Docker Hub's official
// images, and the tag (":v1") and/or digest ("@sha256:...") as written.
struct ImageRef {
  std::string registry;    // "registry.k8s.io", "docker.io", "10.0.0.5:5000"
  std::string repository;  // "kube-apiserver", "library/postgres", "nvidia/k8s-device-plugin"
  std::string tag;         // "v1.30.4", "" when none
  std::string digest;      // "sha256:...", "" when none
  // registry/repository[:tag][@digest]
  std::string str() const;
};

// `image` parsed as Docker's reference grammar does (the first path component
// is a registry when it holds a '.' or a ':' or is "localhost").
ImageRef parse_image_ref(std::string_view image);

// `image` as pulled through `mirror` (HOST[:PORT]): mirror/repository[:tag][@digest].
// An empty mirror gives the image unchanged (as written). Idempotent: an image
// already at the mirror stays where it is.
std::string image_through_mirror(std::string_view image, std::string_view mirror);

// A rendered manifest (YAML, possibly several documents) with the value of every
// `image:` key rewritten through `mirror`, quotes and indentation kept. An empty
// mirror gives the text unchanged.
std::string manifest_through_mirror(std::string_view manifest, std::string_view mirror);

}  // namespace pai::deploy

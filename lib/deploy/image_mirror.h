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

#include "deploy/images.h"  // ImageRef, parse_image_ref

namespace pai::deploy {

// `image` as pulled through `mirror` (HOST[:PORT]): mirror/repository[:tag][@digest].
// An empty mirror gives the image unchanged (as written). Idempotent: an image
// already at the mirror stays where it is.
std::string image_through_mirror(std::string_view image, std::string_view mirror);

// A rendered manifest (YAML, possibly several documents) with the value of every
// `image:` key rewritten through `mirror`, quotes and indentation kept. An empty
// mirror gives the text unchanged.
std::string manifest_through_mirror(std::string_view manifest, std::string_view mirror);

}  // namespace pai::deploy

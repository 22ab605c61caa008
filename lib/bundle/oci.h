#pragma once
// Images pulled through the OCI distribution API (GET of manifests and blobs,
// the registry token flow when a 401 names a Bearer realm) into OCI
// image-layout tars that `ctr -n k8s.io images import` accepts.

#include <functional>
#include <string>
#include <vector>

#include "deploy/images.h"
#include "http/client.h"
#include "util/result.h"

namespace pai::bundle {

// Blobs already fetched and verified, one file per digest under `dir`
// (DIR/sha256/HEX): what a killed build keeps.
class BlobStore {
 public:
  explicit BlobStore(std::string dir) : dir_(std::move(dir)) {}
  std::string path_of(const std::string& digest) const;
  bool has(const std::string& digest) const;
  // Checks `data` against `digest` ("sha256:HEX"), then writes it atomically.
  util::Result<void> put(const std::string& digest, const std::string& data);
  util::Result<std::string> get(const std::string& digest) const;

 private:
  std::string dir_;
};

// The registry's address of a reference: Docker Hub is registry-1.docker.io.
std::string registry_host(const deploy::ImageRef& ref);

struct PulledImage {
  std::string name;        // the name it is imported as ("registry.k8s.io/pause:3.9")
  std::string source;      // where it was pulled from (a mirror's name, or the same)
  std::string media_type;  // of the top manifest (an index when several platforms)
  std::string digest;      // of the top manifest, "sha256:HEX"
  uint64_t size = 0;
  std::vector<std::string> blobs;  // every digest the layout holds (manifests, configs, layers)
  uint64_t fetched_bytes = 0;      // bytes fetched from the registry (0: all from the store)
};

struct PullOptions {
  std::vector<std::string> archs;  // linux/ARCH kept from an index ("amd64", "arm64")
  std::string scheme = "https";
};

// Pulls `from` (the mirror's reference when one is used), naming it `name`.
// An index keeps only the manifests of linux/ARCH for `archs` (rewritten as a
// new index when it had others); every blob is verified against its digest.
util::Result<PulledImage> pull_image(http::Client& client, const deploy::ImageRef& from,
                                     const std::string& name, const PullOptions& o,
                                     BlobStore& store);

// Writes the OCI image layout of `img` (oci-layout, index.json naming it with
// io.containerd.image.name and org.opencontainers.image.ref.name, blobs/) as
// an uncompressed tar at `path`, byte for byte the same for the same image.
util::Result<void> write_image_tar(const PulledImage& img, const BlobStore& store,
                                   const std::string& path);

}  // namespace pai::bundle

#pragma once
// An offline bundle: a directory holding every .deb the hosts need and every
// image paictl deploys, described by BUNDLE/manifest.json (docs/bundle.md):
//
//   {"apiVersion": "paictl.io/bundle/v1", "cluster": NAME, "created": RFC3339,
//    "kubeVersion": "1.30.4", "platforms": [{"os": "ubuntu-22.04", "arch": "amd64"}],
//    "driver": "535" (or absent),
//    "files": [{"path": "debs/ubuntu-22.04-amd64/NAME.deb", "kind": "deb",
//               "package": P, "version": V, "sha256": HEX, "bytes": N},
//              {"path": "images/NAME.tar", "kind": "image",
//               "image": "registry.k8s.io/kube-apiserver:v1.30.4", "sha256": HEX, "bytes": N}]}
//
// Every image file is an OCI image-layout tar that `ctr -n k8s.io images
// import` accepts. `bundle build` writes it (lib/bundle/build.h); `install`
// with kube_offline_bundle reads it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace pai::bundle {

inline constexpr const char* kApiVersion = "paictl.io/bundle/v1";
inline constexpr const char* kManifestFile = "manifest.json";

// A host platform: the OS as ID-VERSION_ID of /etc/os-release ("ubuntu-22.04",
// "debian-12") and the Debian architecture ("amd64", "arm64").
struct Platform {
  std::string os;
  std::string arch;
  bool operator==(const Platform&) const = default;
  // "ubuntu-22.04-amd64": the folder of its .debs under debs/.
  std::string dir_name() const { return os + "-" + arch; }
};

enum class FileKind { Deb, Image };
const char* to_string(FileKind k);  // "deb", "image"

struct BundleFile {
  std::string path;  // relative to the bundle: debs/OS-ARCH/NAME.deb, images/NAME.tar
  FileKind kind = FileKind::Deb;
  std::string package;  // a .deb's package name
  std::string version;  // a .deb's version
  std::string image;    // an image's reference, "registry.k8s.io/pause:3.9"
  std::string sha256;   // 64 lower-case hex digits
  uint64_t bytes = 0;
};

struct Bundle {
  std::string dir;  // where it was read from ("" when built in memory)
  std::string api_version = kApiVersion;
  std::string cluster;
  std::string created;  // RFC 3339
  std::string kube_version;
  std::vector<Platform> platforms;
  std::optional<std::string> driver;  // the NVIDIA driver branch ("535")
  std::vector<BundleFile> files;

  // The .debs of one platform (those under debs/OS-ARCH/), in manifest order.
  std::vector<const BundleFile*> debs_for(const Platform& p) const;
  std::vector<const BundleFile*> images() const;
  // The file of this path, or null.
  const BundleFile* find(const std::string& path) const;
};

// manifest.json's text for `b` (two-space indented, files in the given order).
std::string manifest_json(const Bundle& b);

// Parses manifest.json's text. `file` names it in messages, which are
// "FILE:LINE:COL: what is wrong" (Kind::Input), with a hint.
util::Result<Bundle> parse_manifest(const std::string& text, const std::string& file);

// Reads DIR/manifest.json (no file is opened but it).
util::Result<Bundle> read_bundle(const std::string& dir);

// read_bundle, then every file checked: each listed file is there, a regular
// file of its size whose SHA-256 is the manifest's, and nothing else is in the
// directory (manifest.json aside). The first problem is the error, naming the
// file (Kind::Input); nothing is changed either way.
util::Result<Bundle> verify_bundle(const std::string& dir);

// The SHA-256 and size of a regular file, read in pieces.
struct FileDigest {
  std::string sha256;
  uint64_t bytes = 0;
};
util::Result<FileDigest> digest_file(const std::string& path);

// Whether `path` is a bundle path paictl writes or accepts: relative, no "."
// or ".." parts, no empty parts, and under debs/ or images/.
bool valid_file_path(const std::string& path);

}  // namespace pai::bundle

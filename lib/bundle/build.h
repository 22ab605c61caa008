#pragma once
// `paictl bundle build CLUSTER_DIR --out DIR`: an offline bundle
// (bundle/manifest.h) of every .deb the hosts' OS need and every image paictl
// deploys, fetched on a connected machine. plan_bundle reads the cluster
// directory and the repositories' Packages indexes and changes nothing;
// apply_bundle fetches what the bundle directory does not hold yet (a killed
// build re-run keeps every file it verified), then writes manifest.json last.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bundle/apt.h"
#include "bundle/manifest.h"
#include "http/client.h"
#include "util/result.h"

namespace pai::bundle {

struct BuildRequest {
  std::string cluster_dir;
  std::string out_dir;
  std::vector<Platform> platforms;    // empty: ubuntu-22.04/amd64
  std::optional<std::string> driver;  // NVIDIA driver branch ("535") for the GPU hosts
  // apt sources of the OS (containerd, the driver, dependencies) as
  // "deb URL SUITE COMPONENT..." lines; empty: the OS's own archive.
  std::vector<std::string> os_repos;
  std::string templates_dir;  // templates/ (install/*.yaml), for the manifests' images
  std::string created;        // RFC 3339; "" = now
};

struct BuildDeps {
  http::Client* registry = nullptr;  // image pulls (TLS verified; the CA the user gave)
  http::Client* apt = nullptr;       // Packages indexes and .debs
  std::string registry_scheme = "https";
  // One line per step ("fetched images/...", "kept debs/..."); may be null.
  std::function<void(const std::string& what, const std::string& detail)> on_progress;
};

struct PlannedImage {
  std::string image;  // the name it is imported as
  std::string pull;   // the reference pulled (through the mirror when set)
  std::string path;   // images/NAME.tar
  std::vector<std::string> used_by;
  bool kept = false;        // the bundle holds it from an earlier build
  std::string kept_sha256;  // when kept: the file's SHA-256 and size
  uint64_t kept_bytes = 0;
};

struct PlannedDeb {
  Platform platform;
  AptPackage package;
  std::string path;  // debs/OS-ARCH/FILE.deb
  bool kept = false;
};

struct BuildPlan {
  BuildRequest request;
  std::string cluster;
  std::string kube_version;
  std::string mirror;  // image_registry_mirror ("" = each image's own registry)
  bool gpus = false;   // a host has GPUs: the device plugin, the toolkit, the driver
  std::vector<PlannedImage> images;
  std::vector<PlannedDeb> debs;
  // Per platform ("ubuntu-22.04-amd64"): the sources read, and the
  // dependencies no source had (assumed part of the OS).
  std::map<std::string, std::vector<std::string>> sources, assumed;
  uint64_t deb_bytes_to_fetch = 0;
};

struct BuildOutcome {
  Bundle bundle;
  int fetched = 0, kept = 0, removed = 0;
  uint64_t fetched_bytes = 0;
};

// The default apt sources of an OS (ubuntu-20.04/22.04/24.04, debian-11/12)
// for an architecture; an error for another OS.
util::Result<std::vector<std::string>> default_os_repos(const Platform& p);
// "ubuntu-22.04/amd64" -> {ubuntu-22.04, amd64}.
util::Result<Platform> parse_platform(const std::string& text);
// The file name of an image in a bundle: images/REGISTRY_REPO_TAG.tar.
std::string image_file_path(const std::string& image);

util::Result<BuildPlan> plan_bundle(const BuildRequest& request, const BuildDeps& deps);
util::Result<BuildOutcome> apply_bundle(const BuildPlan& plan, const BuildDeps& deps);

}  // namespace pai::bundle

#pragma once
// Installing from an offline bundle (docs/install.md, "Offline install"; the
// format and its reading are lib/bundle/manifest.h's): a directory with
// manifest.json (apiVersion paictl.io/bundle/v1) listing every
// .deb per platform and every image as an OCI archive, each with its size and
// sha256. install verifies the whole bundle before it changes any host, then
// copies each host only what it needs: the .debs of its platform, and the
// images of its roles (masters: the control plane, HiveD and the OpenPAI
// services; every host: pause, kube-proxy, flannel; GPU hosts: the device
// plugin), which it imports into containerd (`ctr -n k8s.io images import`).
// The older form of kube_offline_bundle, a plain directory of .deb files
// without a manifest, is not a bundle here (is_manifest_bundle says which).

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.h"

namespace pai::deploy {

struct BundlePlatform {
  std::string os;    // "ubuntu-22.04" (ID-VERSION_ID of /etc/os-release)
  std::string arch;  // "amd64" (dpkg's architecture)
  std::string name() const { return os + "-" + arch; }
};

struct BundleFile {
  std::string
      path;  // relative to the bundle: "debs/ubuntu-22.04-amd64/kubeadm.deb", "images/x.tar"
  std::string kind;              // "deb" or "image"
  std::string package, version;  // a deb's
  std::string image;             // an image's reference as the manifest names it
  std::string sha256;
  uint64_t bytes = 0;
  // A deb's platform ("ubuntu-22.04-amd64"), from its path debs/PLATFORM/...
  std::string platform;
};

struct OfflineBundle {
  std::string dir;  // where it is on this machine
  std::string cluster, created, kube_version, driver;
  std::vector<BundlePlatform> platforms;
  std::vector<BundleFile> files;
  const BundleFile* deb(const std::string& platform, const std::string& package) const;
};

// Whether `dir` holds a manifest.json (a bundle), rather than plain .deb files.
bool is_manifest_bundle(const std::string& dir);

// The bundle's manifest (bundle::read_bundle: its form, not its files), as
// install uses it.
util::Result<OfflineBundle> read_offline_bundle(const std::string& dir);
// bundle::verify_bundle: every file listed there with its size and sha256,
// nothing unlisted; the first that is not, named, refused as bad input.
util::Result<OfflineBundle> verify_offline_bundle(const std::string& dir);

// A reference as containerd names it after an import (deploy::normalize_image):
// the registry ("docker.io" when there is none), Docker Hub's "library/" for a
// one-part repository, and ":latest" when there is no tag nor digest.
std::string normalized_image(const std::string& ref);

// Which hosts need an image, by its name, where the manifests install renders
// do not say (the images phase reads their node selectors first): the control
// plane's (and HiveD's, the OpenPAI services') on the masters, the device
// plugin on GPU hosts, pause, kube-proxy, CoreDNS and flannel everywhere.
enum class ImageScope { Masters, Gpu, All };
ImageScope image_scope(const std::string& ref);

// The image archives a host needs, in the manifest's order.
std::vector<const BundleFile*> images_for_host(const OfflineBundle& b, bool master, bool gpu);
// The debs of one platform, in the manifest's order.
std::vector<const BundleFile*> debs_for_platform(const OfflineBundle& b,
                                                 const std::string& platform);

// Whether a host installs this package of its platform's .debs: not the
// NVIDIA driver's packages (a driver is the operator's, or `paictl node
// maintain`'s, to change), and the NVIDIA Container Toolkit's only on GPU hosts.
bool deb_for_host(const std::string& package, bool gpu);

// The name a deb gets on a host: PACKAGE_VERSION_ARCH.deb, as apt names what it
// downloads (an epoch's ':' as "%3a").
std::string deb_host_name(const BundleFile& f);

// Whether the bundle was made for this host: its OS ("ubuntu-22.04") and
// architecture ("amd64", or uname's "x86_64"/"aarch64") among the platforms;
// the error says which platforms it carries.
util::Result<void> bundle_fits_platform(const OfflineBundle& b, const std::string& os,
                                        const std::string& arch);
// dpkg's name of an architecture that uname -m names ("x86_64" -> "amd64").
std::string dpkg_arch(const std::string& arch);

}  // namespace pai::deploy

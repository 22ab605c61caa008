#pragma once
// Kubernetes versions for `paictl upgrade` (upgrade.h): the target as the
// operator writes it (1.Y or 1.Y.Z, a leading v allowed), and kubeadm's rules
// for the steps to it: no downgrade, one minor at a time (1.30 -> 1.31 -> 1.32
// when asked for 1.32), each minor's latest patch the package repository has
// unless the target names one, and the kubelet's skew against the control plane.
// Pure: the repository's versions and the cluster's are given.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace pai::deploy {

struct KubeVersion {
  int major = 1;
  int minor = 0;
  int patch = -1;  // -1: not given (1.Y)
  bool has_patch() const { return patch >= 0; }
  std::string str() const;        // "1.31.6", "1.31"
  std::string minor_str() const;  // "1.31"
};

// "1.31", "1.31.6", "v1.31.6"; also the Debian version of the packages
// ("1.31.6-1.1"). Anything else is an Input error naming what was expected.
util::Result<KubeVersion> parse_kube_version(std::string_view text);
// Orders by major, minor, patch (a missing patch is lowest).
int compare_versions(const KubeVersion& a, const KubeVersion& b);

// The kubelet may be at most this many minors older than the control plane
// (Kubernetes' version skew policy since 1.28); never newer.
inline constexpr int kKubeletSkew = 3;

// The patches the package repository serves for each minor (repository probe).
using RepoPatches = std::map<int, std::vector<int>>;

// One minor step: the version the cluster goes to.
struct VersionStep {
  KubeVersion to;      // with its patch
  bool latest = true;  // the minor's latest patch (the target named none)
};

// The steps from the control plane's version `control_plane` to `target`:
// refused (Input) for a downgrade, a minor the repository does not serve, a
// patch it does not have. `nodes` are the kubelets' versions: a kubelet newer
// than the control plane or older than the skew allows is refused too; a
// kubelet behind the control plane's own version makes that version a step
// (its nodes are finished first). Empty: nothing to do.
util::Result<std::vector<VersionStep>> plan_version_steps(
    const KubeVersion& control_plane, const KubeVersion& target, const RepoPatches& repo,
    const std::map<std::string, KubeVersion>& nodes);

// The minors whose repository a plan must ask about (current minor to target).
std::vector<int> minors_to_probe(const KubeVersion& control_plane, const KubeVersion& target);

}  // namespace pai::deploy

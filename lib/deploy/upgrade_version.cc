#include "deploy/upgrade_version.h"

#include <algorithm>
#include <cctype>

namespace pai::deploy {

namespace {

bool upgrade_version_number(std::string_view& s, int& out) {
  size_t i = 0;
  long long v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i < 6) {
    v = v * 10 + (s[i] - '0');
    ++i;
  }
  if (i == 0 || (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))) return false;
  out = static_cast<int>(v);
  s.remove_prefix(i);
  return true;
}

util::Error upgrade_version_bad(std::string_view text) {
  return util::Error{"'" + std::string(text) + "' is not a Kubernetes version",
                     "expected 1.Y or 1.Y.Z (e.g. 1.31 or 1.31.6)", util::Error::Kind::Input};
}

}  // namespace

std::string KubeVersion::str() const {
  return minor_str() + (has_patch() ? "." + std::to_string(patch) : "");
}

std::string KubeVersion::minor_str() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

util::Result<KubeVersion> parse_kube_version(std::string_view text) {
  std::string_view s = text;
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  KubeVersion v;
  if (!upgrade_version_number(s, v.major) || s.empty() || s[0] != '.')
    return upgrade_version_bad(text);
  s.remove_prefix(1);
  if (!upgrade_version_number(s, v.minor)) return upgrade_version_bad(text);
  if (!s.empty() && s[0] == '.') {
    s.remove_prefix(1);
    if (!upgrade_version_number(s, v.patch)) return upgrade_version_bad(text);
  }
  // A Debian revision (1.31.6-1.1) is the package's, not Kubernetes'.
  if (!s.empty() && !(s[0] == '-' && v.has_patch())) return upgrade_version_bad(text);
  if (v.major != 1)
    return util::Error{"Kubernetes " + std::string(text) + " is not a 1.x release",
                       "expected 1.Y or 1.Y.Z (e.g. 1.31 or 1.31.6)", util::Error::Kind::Input};
  return v;
}

int compare_versions(const KubeVersion& a, const KubeVersion& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  return 0;
}

std::vector<int> minors_to_probe(const KubeVersion& control_plane, const KubeVersion& target) {
  std::vector<int> out;
  for (int m = control_plane.minor; m <= target.minor; ++m) out.push_back(m);
  return out;
}

util::Result<std::vector<VersionStep>> plan_version_steps(
    const KubeVersion& cp, const KubeVersion& target, const RepoPatches& repo,
    const std::map<std::string, KubeVersion>& nodes) {
  auto input = [](std::string m, std::string h) {
    return util::Error{std::move(m), std::move(h), util::Error::Kind::Input};
  };
  if (target.minor < cp.minor ||
      (target.minor == cp.minor && target.has_patch() && target.patch < cp.patch))
    return input(
        "upgrade to " + target.str() + " is a downgrade: the control plane runs " + cp.str(),
        "kubeadm does not downgrade; pass --to " + cp.minor_str() + " or later");
  for (const auto& [name, v] : nodes) {
    if (v.minor > cp.minor || (v.minor == cp.minor && v.patch > cp.patch))
      return input("the kubelet of " + name + " (" + v.str() +
                       ") is newer than the control plane (" + cp.str() + ")",
                   "Kubernetes' skew policy allows no kubelet newer than the API server");
    if (cp.minor - v.minor > kKubeletSkew)
      return input("the kubelet of " + name + " (" + v.str() + ") is more than " +
                       std::to_string(kKubeletSkew) + " minors older than the control plane (" +
                       cp.str() + ")",
                   "outside Kubernetes' supported skew: reinstall or upgrade that node by hand");
  }
  auto patches_of = [&](int minor) -> const std::vector<int>* {
    auto it = repo.find(minor);
    return it == repo.end() || it->second.empty() ? nullptr : &it->second;
  };
  std::vector<VersionStep> steps;
  bool lagging = false;
  for (const auto& [name, v] : nodes) lagging = lagging || compare_versions(v, cp) < 0;
  // The control plane's own version: a step when kubelets are behind it (a run
  // cut short finishes them), or when the target is a newer patch of its minor.
  if (target.minor == cp.minor && target.has_patch() && target.patch > cp.patch) {
    const auto* p = patches_of(cp.minor);
    if (!p || std::find(p->begin(), p->end(), target.patch) == p->end())
      return input("the package repository has no Kubernetes " + target.str(),
                   "apt-cache madison kubeadm lists the versions of the " + target.minor_str() +
                       " repository");
    steps.push_back({target, false});
    return steps;
  }
  if (lagging) steps.push_back({cp, false});
  for (int m = cp.minor + 1; m <= target.minor; ++m) {
    const auto* p = patches_of(m);
    KubeVersion v{1, m, -1};
    if (!p)
      return input("the package repository has no Kubernetes " + v.minor_str() +
                       (m == target.minor ? "" : " (a step to " + target.str() + ")"),
                   "kubeadm upgrades one minor at a time and every minor's packages are needed; "
                   "check kube_package_repo in config.yaml");
    bool last = m == target.minor;
    if (last && target.has_patch()) {
      if (std::find(p->begin(), p->end(), target.patch) == p->end())
        return input("the package repository has no Kubernetes " + target.str(),
                     "apt-cache madison kubeadm lists the versions of the " + target.minor_str() +
                         " repository");
      v.patch = target.patch;
      steps.push_back({v, false});
    } else {
      v.patch = *std::max_element(p->begin(), p->end());
      steps.push_back({v, true});
    }
  }
  return steps;
}

}  // namespace pai::deploy

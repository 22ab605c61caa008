#include "deploy/images.h"

#include <algorithm>
#include <set>

#include "deploy/openpai.h"
#include "util/strings.h"
#include "yaml/yaml.h"

namespace pai::deploy {

namespace {

// Walks a YAML node, collecting the scalar values of keys named "image".
void images_collect(const yaml::Node* n, std::vector<std::string>& out) {
  if (!n) return;
  if (n->is_mapping()) {
    for (const auto& p : n->pairs()) {
      if (p.key && p.key->is_scalar() && p.key->scalar() == "image" && p.value &&
          p.value->is_scalar() && !p.value->scalar().empty())
        out.push_back(p.value->scalar());
      else
        images_collect(p.value, out);
    }
  } else if (n->is_sequence()) {
    for (const auto* i : n->items()) images_collect(i, out);
  }
}

// "1.30.4" -> {1, 30, 4}; false when it is not MAJOR.MINOR.PATCH.
bool images_version(const std::string& v, int& major, int& minor, int& patch) {
  std::string s = v.rfind('v', 0) == 0 ? v.substr(1) : v;
  auto parts = util::split(s, '.');
  if (parts.size() != 3) return false;
  try {
    size_t used = 0;
    std::string a(parts[0]), b(parts[1]), c(parts[2]);
    major = std::stoi(a, &used);
    if (used != a.size()) return false;
    minor = std::stoi(b, &used);
    if (used != b.size()) return false;
    patch = std::stoi(c, &used);
    return used == c.size();
  } catch (...) {
    return false;
  }
}

}  // namespace

std::string ImageRef::str() const {
  std::string out = registry + "/" + repository;
  if (!tag.empty()) out += ":" + tag;
  if (!digest.empty()) out += "@" + digest;
  return out;
}

util::Result<ImageRef> parse_image_ref(const std::string& ref) {
  auto bad = [&](const std::string& why) {
    return util::Error{"\"" + ref + "\" is not an image reference: " + why,
                       "write REGISTRY/REPOSITORY:TAG, e.g. docker.io/flannel/flannel:v0.26.4",
                       util::Error::Kind::Input};
  };
  if (ref.empty()) return bad("it is empty");
  if (ref.find_first_of(" \t\n\"'") != std::string::npos) return bad("it has a space or a quote");
  ImageRef r;
  std::string rest = ref;
  if (auto at = rest.find('@'); at != std::string::npos) {
    r.digest = rest.substr(at + 1);
    rest = rest.substr(0, at);
    if (r.digest.rfind("sha256:", 0) != 0 || r.digest.size() != 71) return bad("a bad digest");
  }
  // A tag is after the last ':' that follows the last '/'.
  auto slash = rest.rfind('/');
  auto colon = rest.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    r.tag = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (r.tag.empty()) return bad("an empty tag");
  }
  auto first_slash = rest.find('/');
  std::string first = rest.substr(0, first_slash);
  if (first_slash != std::string::npos &&
      (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
       first == "localhost")) {
    r.registry = first;
    r.repository = rest.substr(first_slash + 1);
  } else {
    r.registry = "docker.io";
    r.repository = rest;
  }
  if (r.registry == "index.docker.io" || r.registry == "registry-1.docker.io")
    r.registry = "docker.io";
  if (r.repository.empty()) return bad("no repository");
  if (r.registry == "docker.io" && r.repository.find('/') == std::string::npos)
    r.repository = "library/" + r.repository;
  if (r.tag.empty() && r.digest.empty()) r.tag = "latest";
  return r;
}

std::string normalize_image(const std::string& ref) {
  auto r = parse_image_ref(ref);
  return r ? r->str() : ref;
}

ImageRef through_mirror(const ImageRef& ref, const std::string& mirror) {
  ImageRef out = ref;
  out.registry = mirror;
  return out;
}

util::Result<KubeadmImageTags> kubeadm_image_tags(const std::string& kube_version) {
  int major = 0, minor = 0, patch = 0;
  if (!images_version(kube_version, major, minor, patch))
    return util::Error{"kube_version \"" + kube_version + "\" is not MAJOR.MINOR.PATCH",
                       "e.g. kube_version: 1.30.4", util::Error::Kind::Input};
  // What `kubeadm config images list` prints for each release (the tags of
  // its constants: SupportedEtcdVersion, CoreDNSVersion, PauseVersion); patch
  // releases moved etcd and CoreDNS forward.
  KubeadmImageTags t;
  if (major == 1 && minor == 28) {
    t.coredns = "v1.10.1";
    t.pause = "3.9";
    t.etcd = patch <= 5    ? "3.5.9-0"
             : patch <= 7  ? "3.5.10-0"
             : patch <= 13 ? "3.5.12-0"
                           : "3.5.15-0";
  } else if (major == 1 && minor == 29) {
    t.coredns = "v1.11.1";
    t.pause = "3.9";
    t.etcd = patch <= 2 ? "3.5.10-0" : patch <= 8 ? "3.5.12-0" : "3.5.15-0";
  } else if (major == 1 && minor == 30) {
    t.coredns = patch <= 4 ? "v1.11.1" : "v1.11.3";
    t.pause = "3.9";
    t.etcd = patch <= 4 ? "3.5.12-0" : "3.5.15-0";
  } else if (major == 1 && minor == 31) {
    t.coredns = patch == 0 ? "v1.11.1" : "v1.11.3";
    t.pause = "3.10";
    t.etcd = "3.5.15-0";
  } else if (major == 1 && minor == 32) {
    t.coredns = "v1.11.3";
    t.pause = "3.10";
    t.etcd = "3.5.16-0";
  } else {
    return util::Error{"paictl does not know kubeadm's image tags for Kubernetes " + kube_version,
                       "paictl knows the control-plane images of 1.28 to 1.32",
                       util::Error::Kind::Input};
  }
  return t;
}

std::vector<std::string> images_in_manifest(const std::string& yaml_text) {
  std::vector<std::string> out;
  auto stream = yaml::load(yaml_text);
  for (const auto* doc : stream.documents) images_collect(doc, out);
  return out;
}

util::Result<std::vector<DeployedImage>> images_of(const InstallSettings& s, const HostSpec& master,
                                                   bool with_gpu) {
  std::vector<DeployedImage> out;
  auto add = [&](const std::string& image, const std::string& by) {
    std::string n = normalize_image(image);
    for (auto& d : out)
      if (d.image == n) {
        if (std::find(d.used_by.begin(), d.used_by.end(), by) == d.used_by.end())
          d.used_by.push_back(by);
        return;
      }
    out.push_back({n, {by}});
  };
  auto tags = kubeadm_image_tags(s.kube_version);
  if (!tags) return tags.error();
  std::string v =
      "v" + (s.kube_version.rfind('v', 0) == 0 ? s.kube_version.substr(1) : s.kube_version);
  for (const char* c :
       {"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"})
    add(std::string("registry.k8s.io/") + c + ":" + v, "control-plane");
  add("registry.k8s.io/etcd:" + tags->etcd, "control-plane");
  add("registry.k8s.io/coredns/coredns:" + tags->coredns, "control-plane");
  add("registry.k8s.io/pause:" + tags->pause, "control-plane");

  // The images under their own names: image_registry_mirror says where a
  // build pulls them from, not what they are called in a bundle.
  InstallSettings own = s;
  own.image_mirror.clear();
  auto manifests = render_install_manifests(own, master, 1500);
  if (!manifests) return manifests.error();
  for (const auto& [what, text] : *manifests) {
    if (what == "device-plugin" && !with_gpu) continue;
    auto stream = yaml::load(text);
    if (stream.error)
      return util::Error{"the rendered " + what + " manifest is not YAML (line " +
                             std::to_string(stream.error->mark.line) +
                             "): " + stream.error->message,
                         "check the templates under " + s.templates_dir + "/install"};
    std::vector<std::string> found;
    for (const auto* doc : stream.documents) images_collect(doc, found);
    for (const auto& i : found) add(i, what.substr(0, what.find(':')));
  }
  return out;
}

}  // namespace pai::deploy

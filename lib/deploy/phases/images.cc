// The `images` phase: from an offline bundle, the image archives a host needs
// (masters: the control plane, HiveD and the OpenPAI services; every host:
// pause, kube-proxy, flannel; GPU hosts: the device plugin) copied to it and
// imported into containerd's k8s.io namespace, so that neither kubeadm nor the
// kubelet pulls anything: kubeadm's preflight finds the control plane's images
// present (its default pull policy, IfNotPresent) and pulls none, and the
// pods' images (IfNotPresent) are there. Without a bundle it has nothing to do.
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/strings.h"
#include "yaml/yaml.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

std::string images_dir() {
  return std::string(kBundleDir) + "/images";
}

std::string images_archive_name(const BundleFile& f) {
  return f.path.substr(f.path.rfind('/') + 1);
}

// Where the workloads install applies run their images, read from the
// rendered manifests: a pod template selecting pai-master runs on the masters,
// one selecting the GPU label on GPU hosts, any other (a DaemonSet, a
// Deployment without a selector) anywhere. normalized reference -> scope.
void images_scopes_of(const yaml::Node* n, std::map<std::string, ImageScope>& out) {
  if (!n || !n->is_mapping()) return;
  const std::string kind =
      n->get("kind") && n->get("kind")->is_scalar() ? n->get("kind")->scalar() : "";
  const yaml::Node* spec = n->get("spec");
  const yaml::Node* tmpl = spec && spec->is_mapping() ? spec->get("template") : nullptr;
  const yaml::Node* ps = tmpl && tmpl->is_mapping() ? tmpl->get("spec") : nullptr;
  if (!ps || !ps->is_mapping() || kind == "Job") return;
  const yaml::Node* sel = ps->get("nodeSelector");
  ImageScope scope = ImageScope::All;
  if (sel && sel->is_mapping() && sel->get("pai-master")) scope = ImageScope::Masters;
  if (sel && sel->is_mapping() && sel->get("paictl.io/gpu")) scope = ImageScope::Gpu;
  for (const char* list : {"initContainers", "containers"}) {
    const yaml::Node* cs = ps->get(list);
    if (!cs || !cs->is_sequence()) continue;
    for (const yaml::Node* c : cs->items()) {
      const yaml::Node* img = c && c->is_mapping() ? c->get("image") : nullptr;
      if (!img || !img->is_scalar()) continue;
      const std::string ref = normalized_image(img->scalar());
      auto it = out.find(ref);
      // An image two workloads use runs where the wider of them runs.
      if (it == out.end() || scope == ImageScope::All ||
          (it->second == ImageScope::Gpu && scope == ImageScope::Masters))
        out[ref] = scope;
    }
  }
}

std::map<std::string, ImageScope> images_scopes(const InstallSettings& s) {
  std::map<std::string, ImageScope> out;
  HostSpec master;
  master.name = "master";
  master.address = "127.0.0.1";
  master.master = true;
  auto manifests = render_install_manifests(s, master, 1500);
  if (!manifests.ok()) return out;
  for (const auto& [what, text] : *manifests) {
    auto stream = yaml::load(text);
    if (stream.error) continue;
    for (const yaml::Node* doc : stream.documents) images_scopes_of(doc, out);
  }
  // kubeadm's own: CoreDNS (a Deployment that runs on any node) and
  // kube-proxy, pause (every node) as well as the control plane's (masters).
  return out;
}

class ImagesPhase : public KeyValuePhase {
 public:
  explicit ImagesPhase(const InstallSettings& s) : KeyValuePhase("images"), s_(s) {
    if (s_.bundle) scopes_ = images_scopes(s_);
  }

  std::vector<const BundleFile*> wanted(const HostSpec& h) const {
    if (!s_.bundle) return {};
    std::vector<const BundleFile*> out;
    for (const auto& f : s_.bundle->files) {
      if (f.kind != "image") continue;
      auto it = scopes_.find(normalized_image(f.image));
      ImageScope scope = it != scopes_.end() ? it->second : image_scope(f.image);
      if (scope == ImageScope::All || (scope == ImageScope::Masters && h.master) ||
          (scope == ImageScope::Gpu && has_gpu(h)))
        out.push_back(&f);
    }
    return out;
  }
  // Without a bundle nothing is read at all (no command on any host).
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    if (!wanted(h.spec()).empty()) KeyValuePhase::observation_reads(h, out);
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    if (wanted(h.spec()).empty()) return {};
    return KeyValuePhase::observe(h, needs);
  }
  std::string what() const override { return "the images"; }
  std::string observation(const HostRun& h) const override {
    auto want = wanted(h.spec());
    if (want.empty()) return "true\n";
    // The images containerd has (none before it is installed), and for each
    // wanted one it lacks, the sha256 of its archive when a copy is there.
    std::string script =
        "L=$(command -v ctr >/dev/null 2>&1 && ctr -n k8s.io images ls -q 2>/dev/null)\n"
        "has() { printf '%s\\n' \"$L\" | grep -qxF -- \"$1\"; }\n";
    for (const BundleFile* f : want) {
      const std::string ref = normalized_image(f->image);
      const std::string file = images_dir() + "/" + images_archive_name(*f);
      script += "if has " + shell_quote(ref) + "; then echo " + shell_quote("img_" + ref + "=1") +
                "; elif [ -f " + shell_quote(file) + " ]; then s=$(sha256sum < " +
                shell_quote(file) + "); echo \"file_" + images_archive_name(*f) +
                "=${s%% *}\"; fi\n";
    }
    return script + "true\n";
  }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    std::vector<std::string> copy, import;
    uint64_t bytes = 0;
    for (const BundleFile* f : wanted(h.spec())) {
      const std::string ref = normalized_image(f->image);
      if (kv.count("img_" + ref)) continue;
      import.push_back(ref);
      auto it = kv.find("file_" + images_archive_name(*f));
      if (it != kv.end() && it->second == f->sha256) continue;
      copy.push_back(f->path);
      bytes += f->bytes;
    }
    if (!copy.empty())
      needs.push_back("copy " + std::to_string(copy.size()) + " image archive(s) (" +
                      std::to_string((bytes + 1023) / 1024) + " KiB) to " + images_dir() + ": " +
                      util::join(copy, ", "));
    if (!import.empty())
      needs.push_back(
          "import " + std::to_string(import.size()) +
          " image(s) into containerd (ctr -n k8s.io images import): " + util::join(import, ", "));
    return {};
  }
  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    auto seen = h.observe_sh(observation(h));
    auto kv = parse_key_values(seen.ok() ? seen.out : std::string());
    if (util::Result<void> s =
            run_step(h, "creating " + images_dir(), "mkdir -p " + shell_quote(images_dir()) + "\n");
        !s.ok())
      return s;
    std::string script;
    for (const BundleFile* f : wanted(h.spec())) {
      const std::string ref = normalized_image(f->image);
      if (kv.count("img_" + ref)) continue;
      const std::string file = images_dir() + "/" + images_archive_name(*f);
      auto it = kv.find("file_" + images_archive_name(*f));
      if (it == kv.end() || it->second != f->sha256)
        if (util::Result<void> s = copy_checked(h, s_.bundle->dir + "/" + f->path, *f, file);
            !s.ok())
          return s;
      // Imported, the archive is not needed any more (containerd keeps the
      // image; a later run sees it there and copies nothing).
      script += "ctr -n k8s.io images import " + shell_quote(file) + " >/dev/null\nrm -f " +
                shell_quote(file) + "\n";
    }
    if (script.empty()) return {};
    return run_last_step(h, "importing images into containerd", script, {}, 1800000);
  }

 private:
  const InstallSettings& s_;
  std::map<std::string, ImageScope> scopes_;
};

}  // namespace

std::unique_ptr<Phase> make_images_phase(const InstallSettings& s) {
  return std::make_unique<ImagesPhase>(s);
}

}  // namespace pai::deploy::phases

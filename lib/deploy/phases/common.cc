#include "deploy/phases/common.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "deploy/engine.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

std::string kubeadm_lock_path() {
  return std::string("pai_kl=") + kKubeadmLock +
         "; [ -d /run/lock ] || pai_kl=" + kKubeadmLockElsewhere + "\n";
}

std::string remote_parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string holding_kubeadm_lock(const std::string& step) {
  return kubeadm_lock_path() +
         "if command -v flock >/dev/null 2>&1 && [ -w \"${pai_kl%/*}\" ]; then exec "
         "9>>\"$pai_kl\"; flock -w 900 9 || true; trap 'rm -f \"$pai_kl\"' EXIT; fi\n" +
         step;
}

std::string kubeadm_settled_script() {
  return kubeadm_lock_path() +
         "if [ -f \"$pai_kl\" ] && command -v flock >/dev/null 2>&1; then exec 9<\"$pai_kl\"; "
         "flock -w 900 9 || true; exec 9<&-; fi\n";
}

std::string with_secret_config(const std::string& command) {
  return "pai_um=$(umask); umask 077\n"
         "pai_cf=$(mktemp \"${TMPDIR:-/tmp}/paictl-kubeadm.XXXXXX\")\n"
         "umask \"$pai_um\"\n"
         "cat > \"$pai_cf\"\n"
         "pai_rc=0\n" +
         command +
         " || pai_rc=$?\n"
         "rm -f \"$pai_cf\"\n"
         "if [ \"$pai_rc\" -ne 0 ]; then exit \"$pai_rc\"; fi\n";
}

std::string certs_uploaded_now() {
  return std::string("mkdir -p /etc/paictl && date +%s > ") + kCertsUploadedFile + "\n";
}

util::Result<void> copy_checked(HostRun& h, const std::string& local, const BundleFile& f,
                                const std::string& remote) {
  auto read = util::read_file(local, size_t{16} << 30);
  if (!read.ok())
    return util::Error{"cannot read " + local + ": " + read.error().message, "",
                       util::Error::Kind::Input};
  const std::string part = shell_quote(remote + ".part");
  std::string script = "cat > " + part + "\ns=$(sha256sum < " + part +
                       "); s=${s%% *}\n"
                       "if [ \"$s\" != " +
                       f.sha256 + " ]; then rm -f " + part + "; echo \"paictl: " + f.path +
                       " arrived with sha256 $s, expected " + f.sha256 + "\" >&2; exit 1; fi\nmv " +
                       part + " " + shell_quote(remote) + "\n";
  return run_step(h, "copying " + f.path, script, *read, 1800000);
}

bool has_gpu(const HostSpec& h) {
  return h.gpus > 0 && h.gpu_type == "nvidia.com/gpu";
}

std::string minor_of(const std::string& v) {
  auto parts = util::split(v, '.');
  return parts.size() >= 2 ? std::string(parts[0]) + "." + std::string(parts[1]) : v;
}

std::string config_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string indent_text(const std::string& text, int n) {
  std::string pad(static_cast<size_t>(n), ' '), out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += (line.empty() ? "" : pad + line) + "\n";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string endpoint_of(const InstallSettings& s, const HostSpec& master) {
  return s.control_plane_endpoint.empty() ? master.address + ":6443" : s.control_plane_endpoint;
}

std::string kubeadm_version(HostRun& h, std::map<std::string, std::string>& kv,
                            const InstallSettings& s) {
  std::string pkg = h.facts().value("kubeadm_package", "");
  if (!pkg.empty()) {
    if (size_t colon = pkg.find(':'); colon != std::string::npos) pkg.erase(0, colon + 1);
    if (size_t dash = pkg.rfind('-'); dash != std::string::npos) pkg.resize(dash);
    return "v" + pkg;
  }
  if (kv.count("kubeadm_present")) {
    auto r = h.observe_sh("kubeadm version -o short 2>/dev/null");
    std::string v(util::trim(r.out));
    if (r.ok() && r.exit_status == 0 && !v.empty()) return v;
  }
  return "v" + s.kube_version;
}

std::string read_into_v(const std::string& path) {
  std::string q = shell_quote(path);
  return "v=; nl='\n'\nif [ -f " + q + " ] && [ -r " + q +
         " ]; then while IFS= read -r l || [ -n \"$l\" ]; do v=\"$v$l$nl\"; done < " + q +
         "; fi\n"
         "while :; do case $v in *\"$nl\") v=${v%\"$nl\"} ;; *) break ;; esac; done\n";
}

std::string same_file_test(const std::string& key, const std::string& path, std::string content) {
  // As $(cat) would, the file is compared without its trailing newlines.
  while (!content.empty() && content.back() == '\n') content.pop_back();
  return read_into_v(path) + "[ \"$v\" = " + shell_quote(content) + " ] && echo " + key + "=1\n";
}

std::string write_file(const std::string& path, const std::string& content, int mode) {
  char m[8];
  std::snprintf(m, sizeof m, "%o", mode);
  const std::string dir = shell_quote(remote_parent_dir(path));
  // mkdir only where the directory is not there (a process fewer a file, mostly).
  return "[ -d " + dir + " ] || mkdir -p " + dir + "\nprintf '%s' " + shell_quote(content) + " > " +
         shell_quote(path) + ".paictl-new\nchmod " + m + " " + shell_quote(path) +
         ".paictl-new\nmv " + shell_quote(path) + ".paictl-new " + shell_quote(path) + "\n";
}

bool poll(const util::Clock& clock, int wait_s, int every_ms, const std::function<bool()>& done) {
  const double end = clock.now() + wait_s;
  int pause_ms = std::min(100, every_ms);
  while (true) {
    if (done()) return true;
    if (clock.now() >= end) return false;
    clock.sleep(pause_ms / 1000.0);
    pause_ms = std::min(pause_ms * 2, every_ms);
  }
}

util::Result<nlohmann::json> nodes_of(HostRun& master) {
  auto r = master.observe_sh(cluster_objects_script());
  if (!r.ok()) return command_failure("listing the nodes", r);
  return objects_of_kind(util::parse_json_or_discarded(r.out), "Node");
}

const nlohmann::json* find_node(const nlohmann::json& nodes, const std::string& name) {
  if (!nodes.contains("items") || !nodes["items"].is_array()) return nullptr;
  for (const auto& n : nodes["items"])
    if (n.contains("metadata") && n["metadata"].value("name", "") == name) return &n;
  return nullptr;
}

std::unordered_map<std::string, const nlohmann::json*> nodes_by_name(const nlohmann::json& nodes) {
  std::unordered_map<std::string, const nlohmann::json*> out;
  if (!nodes.contains("items") || !nodes["items"].is_array()) return out;
  for (const auto& n : nodes["items"])
    if (n.contains("metadata") && n["metadata"].is_object())
      out.emplace(n["metadata"].value("name", ""), &n);  // the first of a name, as find_node
  return out;
}

void left_lock_needs(std::map<std::string, std::string>& kv, std::vector<std::string>& needs) {
  if (kv.count("lock") && holder_is_dead_here(kv["lock"]))
    needs.push_back("remove the install lock of a run that is gone (" + kv["lock"] + ")");
}

}  // namespace pai::deploy::phases

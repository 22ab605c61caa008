#pragma once
// Internal to libpai (not installed): what the install phases share. Each
// phase is a file of this folder, named after it (os.cc, checks.cc, mark.cc,
// swap.cc, kernel.cc, packages.cc, containerd.cc, control_plane.cc, cni.cc,
// join_control_plane.cc, join.cc, labels.cc, device_plugin.cc, verify.cc, hived.cc, openpai.cc,
// config.cc, endpoints.cc, reset.cc), made by its factory (phases.h, or the
// public ones of openpai.h and cluster_files.h); onprem.cc lists them in the
// order install and reset run them. docs/install.md lists every command they run.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "deploy/offline_bundle.h"
#include "deploy/onprem.h"
#include "deploy/phase.h"
#include "util/clock.h"
#include "util/result.h"

namespace pai::deploy {

// Hidden: not part of libpai's interface.
#pragma GCC visibility push(hidden)
namespace phases {

// What install writes on a host, and reset removes.
inline constexpr const char* kModulesFile = "/etc/modules-load.d/paictl-kubernetes.conf";
inline constexpr const char* kSysctlFile = "/etc/sysctl.d/99-paictl-kubernetes.conf";
inline constexpr const char* kKubeList = "/etc/apt/sources.list.d/paictl-kubernetes.list";
inline constexpr const char* kNvidiaList =
    "/etc/apt/sources.list.d/paictl-nvidia-container-toolkit.list";
inline constexpr const char* kBundleList = "/etc/apt/sources.list.d/paictl-bundle.list";
inline constexpr const char* kBundleDir = "/var/cache/paictl/bundle";
inline constexpr const char* kKubeKeyring = "/etc/apt/keyrings/paictl-kubernetes.gpg";
inline constexpr const char* kNvidiaKeyring =
    "/etc/apt/keyrings/paictl-nvidia-container-toolkit.gpg";
// What paictl records on a host (the cluster it belongs to, its state before
// install): in /etc, which is the host's own on every system and on the testbed.
inline constexpr const char* kStateDir = "/etc/paictl";

// kubeadm init, join and reset on a host hold an flock on /run/lock/paictl-kubeadm
// (fd 9, inherited by kubeadm) for as long as they run: a run of paictl killed
// during one of them leaves it running on the host, and the next run must not
// decide from what it has half written. The steps wait for the lock before they
// start, and remove the file when they end (no lock is left on a host); the
// control plane's observation waits for it, where the file is there, before it
// reads. Where flock or the directory is missing, nothing waits.
inline constexpr const char* kKubeadmLock = "/run/lock/paictl-kubeadm";
inline constexpr const char* kKubeadmLockElsewhere = "/tmp/paictl-kubeadm.lock";  // no /run/lock
// `step` run holding that lock.
std::string holding_kubeadm_lock(const std::string& step);
// The observation's wait: only where a step made the file (a read changes nothing).
std::string kubeadm_settled_script();

// Whether kubeadm is on the PATH (a built-in: no process), for the phases that
// run it.
inline constexpr const char* kKubeadmPresent =
    "command -v kubeadm >/dev/null && echo kubeadm_present=1\n";

// The bootstrap tokens on the master: "token=ID" and the rest of kubeadm token
// list's line (TTL, expiry, usages, description); never the token's secret half.
inline constexpr const char* kTokenList =
    "[ -f /etc/kubernetes/admin.conf ] || exit 0\n"
    "kubeadm token list 2>/dev/null | awk 'NR>1 {split($1, a, \".\"); $1=\"\"; print \"token=\" "
    "a[1] "
    "$0}'\n";

// Whether the host has NVIDIA GPUs (its SKU's nvidia.com/gpu count).
bool has_gpu(const HostSpec& h);
// "1.30" of "1.30.10".
std::string minor_of(const std::string& v);
// FNV-1a: a stable fingerprint of a rendered manifest, kept in an annotation.
std::string config_hash(const std::string& s);
// `text` with every non-empty line indented by n spaces, without a last newline.
std::string indent_text(const std::string& text, int n);
// The control plane's endpoint: the setting, else the master's hostip:6443.
std::string endpoint_of(const InstallSettings& s, const HostSpec& master);

// `command` (which names the file as "$pai_cf") run with a configuration that
// holds a secret (a certificate key, a bootstrap token): the configuration
// comes on stdin into a file only root may read (mktemp, umask 077), removed
// when the command ends, whether it succeeds or fails. Never in argv.
std::string with_secret_config(const std::string& command);

// Where the first master records when it uploaded the control plane's
// certificates (epoch seconds): kubeadm deletes them 2 h after.
inline constexpr const char* kCertsUploadedFile = "/etc/paictl/certs-uploaded";
// The commands that record an upload now.
std::string certs_uploaded_now();

// The version of the kubeadm a kubeadm init or join runs ("v1.30.10"), for the
// configuration it is given: the kubeadm package's upstream version, which the
// packages phase read on this host in this run (dpkg-query's "1.30.10-1.1"),
// so that no observation runs `kubeadm version` only in case it joins. A
// kubeadm not installed as a package is asked; none at all: the one install
// puts there.
std::string kubeadm_version(HostRun& h, std::map<std::string, std::string>& kv,
                            const InstallSettings& s);

// Sets the shell variable v to a file's content without its trailing newlines
// (what "$(cat FILE)" gives), "" when it is not a readable file, with the
// shell's built-ins only: no process for a small file.
std::string read_into_v(const std::string& path);
// A file's content compared on the host: prints KEY=1 when it matches.
std::string same_file_test(const std::string& key, const std::string& path, std::string content);
// The commands that write `content` to `path` (mode `mode`) atomically.
std::string write_file(const std::string& path, const std::string& content, int mode = 0644);

// Copies `local` (a file of the offline bundle, `f` its manifest entry) to
// `remote` on the host: written to REMOTE.part, its sha256 checked there
// against the manifest's, then renamed; a copy that arrives changed is removed
// and the step fails, naming the file.
util::Result<void> copy_checked(HostRun& h, const std::string& local, const BundleFile& f,
                                const std::string& remote);

// Waits for `done` to say true, for at most wait_s on `clock`: it asks at once,
// then after 0.1 s, 0.2 s, ... up to every `every_ms` (what is waited for is
// often there within a fraction of a second).
bool poll(const util::Clock& clock, int wait_s, int every_ms, const std::function<bool()>& done);

// The Nodes of the master's read of the cluster objects, as {"items": [...]}.
util::Result<nlohmann::json> nodes_of(HostRun& master);
// The Node of that name in them, or null.
const nlohmann::json* find_node(const nlohmann::json& nodes, const std::string& name);
// Them by name, for a phase that looks up every host's (find_node walks the list:
// a million comparisons for 1,000 hosts). The pointers are into `nodes`.
std::unordered_map<std::string, const nlohmann::json*> nodes_by_name(const nlohmann::json& nodes);

// A phase that observes its host with one read-only script printing "key=value"
// lines (a failed script is a failed observation) and computes its needs from
// them. The script is listed for reading ahead and run by observe() from the
// same text, which ReadsAhead::observation_reads requires.
// The holder of the host's install lock, as "lock=HOLDER" (nothing when free).
inline constexpr const char* kLeftLockRead =
    "L=/run/lock/paictl-install; [ -d /run/lock ] || L=/tmp/paictl-install.lock\n"
    "if [ -f \"$L\" ]; then h=; [ -r \"$L\" ] && IFS= read -r h < \"$L\"; echo \"lock=$h\"; fi\n"
    "true\n";
// A lock left by a run killed on this machine: the next apply takes it over and
// removes it at its end, so the plan must not say "up to date".
void left_lock_needs(std::map<std::string, std::string>& kv, std::vector<std::string>& needs);

class KeyValuePhase : public Phase, public ReadsAhead {
 public:
  using Phase::Phase;
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, observation(h)});
    more_reads(h, out);
  }
  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    auto r = h.observe_sh(observation(h));
    if (!r.ok() || r.exit_status != 0) return command_failure("observing " + what(), r);
    auto kv = parse_key_values(r.out);
    return needs_from(h, kv, needs);
  }

 protected:
  // What is observed, for the error: "observing the OS".
  virtual std::string what() const = 0;
  virtual std::string observation(const HostRun& h) const = 0;
  // Other scripts needs_from() reads (with observe_sh), on this host or another.
  virtual void more_reads(HostRun&, std::vector<ObservationRead>&) {}
  virtual util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                        std::vector<std::string>& needs) = 0;
};

}  // namespace phases
#pragma GCC visibility pop

}  // namespace pai::deploy

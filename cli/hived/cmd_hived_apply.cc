// paictl hived apply NEW: the safe way to change HiveD's config. HiveD reads
// its config only when it starts (and OpenPAI's pod copies it from the
// ConfigMap at start), so a change is: diff against the live state, refuse
// when running guaranteed groups would be preempted, confirm, push the config,
// restart the scheduler, wait until HiveD runs the new config with every node
// healthy again, and report what changed.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include <CLI/CLI.hpp>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "deploy/openpai.h"
#include "exit_codes.h"
#include "hived/cmd_hived_commands.h"
#include "hived/cmd_hived_common.h"
#include "hived/cmd_hived_diff.h"
#include "hived/diff.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/fs.h"
#include "util/strings.h"
#include "yaml/yaml.h"

extern char** environ;

namespace paictl {

namespace {

using namespace hivedcli;

struct ApplyOptions {
  HivedOptions h;
  std::string new_path;
  std::string current;
  bool yes = false;
  bool allow_preemption = false;
  bool dry_run = false;
  std::string kubectl = "kubectl";
  std::string ns = "openpai";
  std::string push_command, restart_command;
  double wait_s = 300;
  double poll_s = 2;
};

// $PAICTL_TEMPLATES, else next to the binary, else ./templates (as install finds them).
std::string templates_dir() {
  if (const char* e = std::getenv("PAICTL_TEMPLATES"); e && *e) return e;
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  std::string d = exe.substr(0, exe.find_last_of('/') == std::string::npos ? 0 : exe.rfind('/'));
  for (const std::string& c :
       {d + "/../share/paictl/templates", d + "/../templates", d + "/../../templates"})
    if (!d.empty() && pai::util::is_regular_file(c + "/install/hived-configmap.yaml")) return c;
  return "templates";
}

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                    "/paictl-hived.XXXXXX";
    std::vector<char> b(t.begin(), t.end());
    b.push_back('\0');
    if (::mkdtemp(b.data())) path = b.data();
  }
  ~TempDir() {
    if (path.empty()) return;
    for (const char* f : {"/in", "/out", "/hivedscheduler.yaml"}) ::unlink((path + f).c_str());
    ::rmdir(path.c_str());
  }
};

// Runs `command` with /bin/sh, `input` on its stdin; its stdout into `out` (when
// given, else onto our stderr, as its stderr). Returns the exit status, -1 when
// it could not start or was killed after `timeout_s`.
int run_shell(const std::string& command, const std::string& input, std::string* out,
              const std::map<std::string, std::string>& env, double timeout_s, TempDir& tmp) {
  std::string in_path = tmp.path + "/in", out_path = tmp.path + "/out";
  if (!pai::util::write_file_atomic(in_path, input, 0600).ok()) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, in_path.c_str(), O_RDONLY, 0);
  if (out)
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  else
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string c = command;
  char sh[] = "/bin/sh", dash_c[] = "-c";
  char* argv[] = {sh, dash_c, c.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/bin/sh", &fa, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return -1;
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) return -1;
    if (std::chrono::steady_clock::now() > end) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (out) {
    auto r = pai::util::read_file(out_path);
    *out = r.ok() ? *r : "";
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The HiveD config text of PATH: a hivedscheduler.yaml, or the config embedded
// in services-configuration.yaml (hivedscheduler.config); a directory holds either.
std::optional<std::string> hived_config_text(const std::string& path, std::string& err) {
  std::vector<std::string> files;
  if (pai::util::is_directory(path)) {
    for (const char* n : {"/hivedscheduler.yaml", "/services-configuration.yaml"})
      if (pai::util::is_regular_file(path + n)) files.push_back(path + n);
  } else {
    files.push_back(path);
  }
  for (const auto& f : files) {
    auto r = pai::util::read_file(f);
    if (!r.ok()) {
      err = f + ": " + r.error().message;
      return std::nullopt;
    }
    auto kind = pai::config::detect_kind(f, *r);
    if (kind == pai::config::FileKind::Hived) return *r;
    if (kind == pai::config::FileKind::ServicesConfig) {
      auto s = pai::yaml::load(*r);
      if (!s.documents.empty() && s.documents[0])
        if (const auto* hs = s.documents[0]->get("hivedscheduler"))
          if (const auto* c = hs->get("config"); c && c->is_scalar()) return c->scalar();
    }
  }
  err = "no HiveD config in " + path;
  return std::nullopt;
}

// What identifies the config HiveD runs in its inspect answers: the nodes, and
// per VC the number of preassigned cells of each type.
struct Fingerprint {
  std::set<std::string> nodes;
  std::map<std::string, std::map<std::string, int64_t>> vcs;
  bool operator==(const Fingerprint&) const = default;
};

Fingerprint fingerprint(const pai::config::HivedModel& m) {
  Fingerprint f;
  for (const auto& n : m.nodes) f.nodes.insert(n.name);
  for (const auto& vc : m.vcs) {
    auto& v = f.vcs[vc.name];
    for (const auto& c : vc.cells) {
      if (c.chain < 0) continue;
      const auto& ch = m.chains[static_cast<size_t>(c.chain)];
      int32_t t = ch.level_type[static_cast<size_t>(c.level)];
      v[m.types[static_cast<size_t>(t)].name] += c.count;
    }
    for (const auto& p : vc.pinned)
      if (p.cell >= 0)
        v[m.types[static_cast<size_t>(m.cells[static_cast<size_t>(p.cell)].type)].name]++;
  }
  return f;
}

Fingerprint fingerprint(const pai::hived::LiveState& live) {
  Fingerprint f;
  for (const auto& n : live.nodes) f.nodes.insert(n.name);
  for (const auto& [vc, cells] : live.status.virtual_clusters) {
    auto& v = f.vcs[vc];
    for (const auto& c : cells) {
      bool opp = c.cell_priority == -1 && c.cell_address.size() > 4 &&
                 c.cell_address.compare(c.cell_address.size() - 4, 4, "-opp") == 0;
      if (!opp) v[c.cell_type]++;
    }
  }
  return f;
}

std::string join(const std::vector<std::string>& v, size_t max = 20) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += ", ... (" + std::to_string(v.size()) + ")";
  return s;
}

bool confirm(const std::string& question) {
  std::fprintf(stderr, "%s [y/N] ", question.c_str());
  std::fflush(stderr);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

int run_apply(const ApplyOptions& o, const Globals& g) {
  TempDir tmp;
  if (tmp.path.empty()) {
    print_error("cannot create a temporary directory");
    return kExitUsage;
  }
  const bool structured = is_structured(o.h.output);
  auto say = [&](const std::string& s) {
    if (!g.quiet) std::fprintf(stderr, "%s\n", s.c_str());
  };

  // The config HiveD runs now: --current, else HiveD's ConfigMap.
  std::string current = o.current;
  if (current.empty()) {
    std::string text;
    std::string cmd = o.kubectl + " -n " + pai::util::shell_quote(o.ns) +
                      " get configmap hivedscheduler-config -o "
                      "'jsonpath={.data.hivedscheduler\\.yaml}'";
    int rc = run_shell(cmd, "", &text, {}, 60, tmp);
    if (rc != 0 || pai::util::trim(text).empty()) {
      print_error("cannot read the current HiveD config: " + cmd +
                  (rc == 0 ? " printed nothing" : " failed"));
      std::fprintf(stderr,
                   "  hint: give it with --current PATH, or point --kubectl at the master "
                   "(--kubectl 'ssh master kubectl')\n");
      return kExitRemote;
    }
    current = tmp.path + "/hivedscheduler.yaml";
    if (auto e = pai::util::write_file_atomic(current, text); !e.ok()) {
      print_error(e.error().message);
      return kExitUsage;
    }
  }
  std::string err;
  auto new_text = hived_config_text(o.new_path, err);
  if (!new_text) {
    print_error(err);
    return kExitUsage;
  }

  // 1. The diff against the live state.
  int rc = kExitOk;
  auto in = load_diff_input(current, o.new_path, true, "", o.h, g, rc);
  if (!in) return rc;
  if (o.current.empty()) in->old_path = "the HiveD ConfigMap";
  auto d = pai::hived::diff_configs(*in->old_model, *in->new_model, in->groups, in->bad, err);
  if (!err.empty()) {
    print_error(err);
    return kExitFindings;
  }
  Json doc = diff_json(*in, d);
  doc["apiVersion"] = api_version("hivedApply");
  doc["applied"] = false;
  auto finish = [&](int code) {
    if (structured) print_document(doc, o.h.output);
    return code;
  };
  if (!structured) {
    std::string text = diff_text(*in, d, o.h.output == "wide");
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  if (!d.changes()) {
    say("Nothing to apply.");
    return finish(kExitOk);
  }
  if (d.guaranteed_preempted > 0 && !o.allow_preemption) {
    std::vector<std::string> names;
    for (const auto& gc : d.groups)
      if (gc.effect == pai::hived::GroupEffect::LazilyPreempted && gc.guaranteed)
        names.push_back(gc.name);
    print_error("refusing: " + std::to_string(names.size()) +
                " running guaranteed group(s) would be lazily preempted: " + join(names));
    std::fprintf(stderr,
                 "  hint: move their VC's cells back, wait until they end, or accept it with "
                 "--allow-preemption\n");
    doc["refused"] = "running guaranteed groups would be lazily preempted";
    return finish(kExitFindings);
  }

  // 2. The steps.
  std::string push = o.push_command;
  std::string manifest;
  if (push.empty()) {
    // The ConfigMap as paictl install writes it (lib/deploy/openpai.h).
    pai::deploy::OpenPaiSettings s;
    s.ns = o.ns;
    s.hived_config = *new_text;
    manifest = pai::deploy::render_hived_configmap(templates_dir(), s, err);
    if (!err.empty()) {
      print_error(err);
      return kExitUsage;
    }
    push = o.kubectl + " apply -f -";
  }
  std::string restart = !o.restart_command.empty()
                            ? o.restart_command
                            : o.kubectl + " -n " + pai::util::shell_quote(o.ns) +
                                  " rollout restart statefulset/hivedscheduler-hs";
  doc["pushCommand"] = push;
  doc["restartCommand"] = restart;
  if (o.dry_run) {
    say("Dry run: would push the config with: " + push);
    say("          restart HiveD with:        " + restart);
    say("          and wait up to " + std::to_string(static_cast<int>(o.wait_s)) +
        " s for every node of the new config to be healthy.");
    if (!manifest.empty() && !structured && o.h.output == "wide")
      std::fwrite(manifest.data(), 1, manifest.size(), stdout);
    return finish(kExitChanges);
  }
  if (!o.yes) {
    if (!is_tty(0) || !is_tty(2)) {
      print_error("not on a terminal: give --yes to apply without a question");
      return finish(kExitUsage);
    }
    if (!confirm("Push the new config and restart HiveD?")) {
      say("Not applied.");
      return finish(kExitFindings);
    }
  }

  // 3. Push and restart.
  std::map<std::string, std::string> env = {{"PAICTL_HIVED_CONFIG", tmp.path + "/config.yaml"}};
  if (auto e = pai::util::write_file_atomic(tmp.path + "/config.yaml", *new_text); !e.ok()) {
    print_error(e.error().message);
    return finish(kExitUsage);
  }
  say("pushing the config: " + push);
  int prc = run_shell(push, manifest.empty() ? *new_text : manifest, nullptr, env, 300, tmp);
  ::unlink((tmp.path + "/config.yaml").c_str());
  if (prc != 0) {
    print_error("pushing the config failed (" +
                (prc < 0 ? std::string("did not finish") : "exit " + std::to_string(prc)) +
                "); HiveD still runs the old config");
    return finish(kExitRemote);
  }
  say("restarting HiveD: " + restart);
  int rrc = run_shell(restart, "", nullptr, {}, 300, tmp);
  if (rrc != 0) {
    print_error("restarting HiveD failed (" +
                (rrc < 0 ? std::string("did not finish") : "exit " + std::to_string(rrc)) +
                "); the new config is pushed and is read at HiveD's next start");
    return finish(kExitRemote);
  }
  doc["applied"] = true;

  // 4. Wait until HiveD runs the new config and its nodes are healthy again.
  auto conn = connect_hived(o.h, g);
  if (!conn) return finish(kExitUsage);
  const Fingerprint want = fingerprint(*in->new_model);
  std::set<std::string> bad_before(in->bad.begin(), in->bad.end());
  auto start = std::chrono::steady_clock::now();
  auto end = start + std::chrono::duration<double>(o.wait_s);
  std::optional<pai::hived::LiveState> live;
  std::vector<std::string> not_healthy;
  std::string last;
  for (;;) {
    auto st = conn->client->cluster_status();
    if (st.ok()) {
      auto gr = conn->client->affinity_groups();
      if (gr.ok()) {
        auto l = pai::hived::index_live(std::move(*st.value), std::move(*gr.value));
        not_healthy.clear();
        if (fingerprint(l) == want) {
          for (const auto& n : l.nodes)
            if (!n.healthy && !bad_before.count(n.name)) not_healthy.push_back(n.name);
          if (not_healthy.empty()) {
            live = std::move(l);
            break;
          }
          last =
              std::to_string(not_healthy.size()) + " node(s) not healthy yet: " + join(not_healthy);
        } else {
          last = "HiveD does not run the new config yet";
        }
      } else {
        last = gr.error->summary();
      }
    } else {
      last = st.error->summary();
    }
    if (std::chrono::steady_clock::now() + std::chrono::duration<double>(o.poll_s) > end) break;
    if (g.verbose) say("waiting: " + last);
    std::this_thread::sleep_for(std::chrono::duration<double>(o.poll_s));
  }
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  doc["waitedSeconds"] = static_cast<int64_t>(waited + 0.5);
  if (!live) {
    print_error("HiveD did not come back healthy on the new config within " +
                std::to_string(static_cast<int>(o.wait_s)) + " s: " + last);
    std::fprintf(stderr,
                 "  hint: paictl hived status shows what it runs; kubectl logs "
                 "hivedscheduler-hs-0 shows why it does not start\n");
    doc["notHealthy"] = not_healthy;
    return finish(kExitRemote);
  }

  // 5. What changed, against the plan.
  std::map<std::string, const pai::hived::AffinityGroup*> now;
  for (const auto& gr : live->groups) now[gr.name] = &gr;
  Json groups = Json::array();
  Table t({{"GROUP"}, {"PLANNED"}, {"NOW"}});
  int64_t differ = 0;
  for (const auto& gc : d.groups) {
    auto it = now.find(gc.name);
    std::string state = it == now.end()                              ? "gone"
                        : it->second->lazy_preemption_status         ? "lazily preempted"
                        : it->second->priority < 0 || !gc.guaranteed ? "opportunistic"
                                                                     : "guaranteed";
    std::string planned(pai::hived::to_string(gc.effect));
    bool expected = gc.effect == pai::hived::GroupEffect::LazilyPreempted
                        ? state == "lazily preempted"
                    : gc.effect == pai::hived::GroupEffect::Keeps
                        ? state != "lazily preempted" || !gc.guaranteed
                        : true;
    if (!expected) ++differ;
    groups.push_back(
        {{"name", gc.name}, {"planned", planned}, {"now", state}, {"asPlanned", expected}});
    if (gc.effect != pai::hived::GroupEffect::Keeps || !expected)
      t.add({gc.name, planned, state + (expected ? "" : " (not as planned)")});
  }
  doc["result"] = {{"nodes", static_cast<int64_t>(live->nodes.size())},
                   {"badNodes", pai::hived::bad_nodes(*live)},
                   {"groups", groups},
                   {"notAsPlanned", differ}};
  if (!structured) {
    std::string out = "\n";
    if (!t.rows.empty()) out += render_table(t) + "\n";
    out += "HiveD runs " + o.new_path + " after " + std::to_string(static_cast<int>(waited + 0.5)) +
           " s: " + std::to_string(live->nodes.size()) + " nodes, " +
           std::to_string(pai::hived::bad_nodes(*live).size()) + " bad (as before); " +
           std::to_string(live->groups.size()) + " affinity groups" +
           (differ ? ", " + std::to_string(differ) + " not as planned" : std::string()) + ".\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return finish(kExitOk);
}

}  // namespace

void build_hived_apply(CLI::App& cmd, Globals& g) {
  auto o = std::make_shared<ApplyOptions>();
  cmd.add_option("NEW", o->new_path, "The new HiveD config (cluster directory or file)")
      ->required();
  add_hived_flags(&cmd, o->h, g);
  cmd.add_option("--current", o->current,
                 "The config HiveD runs now (default: read from its ConfigMap with --kubectl)")
      ->type_name("PATH");
  cmd.add_flag("--yes,-y", o->yes, "Apply without asking (required when not on a terminal)");
  cmd.add_flag("--allow-preemption", o->allow_preemption,
               "Apply even when running guaranteed groups would be lazily preempted");
  cmd.add_flag("--dry-run", o->dry_run, "Show the diff and the steps; change nothing");
  cmd.add_option("--kubectl", o->kubectl,
                 "kubectl to reach the cluster, as a shell command (e.g. 'ssh master kubectl "
                 "--kubeconfig=/etc/kubernetes/admin.conf')")
      ->capture_default_str();
  cmd.add_option("--namespace", o->ns,
                 "HiveD's namespace (paictl install: openpai; OpenPAI's own installer: default)")
      ->capture_default_str();
  cmd.add_option("--push-command", o->push_command,
                 "Push the config with this shell command instead (the HiveD config on stdin "
                 "and in $PAICTL_HIVED_CONFIG)")
      ->type_name("CMD");
  cmd.add_option("--restart-command", o->restart_command,
                 "Restart HiveD with this shell command instead of kubectl rollout restart")
      ->type_name("CMD");
  cmd.add_option("--wait", o->wait_s,
                 "Seconds to wait for HiveD to run the new config with its nodes healthy")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd.add_option("--poll-interval", o->poll_s, "Seconds between two looks at HiveD")
      ->check(CLI::Range(0.05, 600.0))
      ->capture_default_str();
  cmd.footer(
      "The safe procedure: the diff of hived diff --live against the config HiveD runs; a\n"
      "refusal when running guaranteed groups would be lazily preempted (unless\n"
      "--allow-preemption); a question on a terminal (--yes otherwise); the config pushed\n"
      "(by default kubectl apply of the ConfigMap hivedscheduler-config, key\n"
      "hivedscheduler.yaml, as paictl install renders it); HiveD restarted\n"
      "(kubectl rollout restart statefulset/hivedscheduler-hs: it copies its config only at\n"
      "start); a wait until the inspect API shows the new config's nodes and VC cells with\n"
      "every node healthy (nodes bad before may stay bad); and what happened to each group\n"
      "against the plan.\n\n"
      "EXIT STATUS:\n  0 applied (or nothing to apply), 1 a config has errors, refused or not "
      "confirmed,\n  2 bad usage, 3 HiveD, the push or the restart failed or the wait timed "
      "out\n");
  define_command(cmd, g, o,
                 {.validate = [](const ApplyOptions& o, Usage& u) { validate_hived_flags(o.h, u); },
                  .run = [](const auto& o, Globals& g) { return run_apply(o, g); }});
}

}  // namespace paictl

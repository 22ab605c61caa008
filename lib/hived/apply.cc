#include "hived/apply.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>

#include "deploy/openpai.h"
#include "hived/live.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::hived {

struct ApplyScratch {
  std::string path;
  ApplyScratch() {
    const char* tmp = std::getenv("TMPDIR");
    std::string t = std::string(tmp ? tmp : "/tmp") + "/paictl-hived.XXXXXX";
    std::vector<char> b(t.begin(), t.end());
    b.push_back('\0');
    if (::mkdtemp(b.data())) path = b.data();
  }
  ApplyScratch(const ApplyScratch&) = delete;
  ApplyScratch& operator=(const ApplyScratch&) = delete;
  ~ApplyScratch() {
    if (path.empty()) return;
    for (const char* f : {"/hivedscheduler.yaml", "/config.yaml"}) ::unlink((path + f).c_str());
    ::rmdir(path.c_str());
  }
};

namespace {

// What identifies the config HiveD runs in its inspect answers: the nodes, and
// per VC the number of preassigned cells of each type.
struct ApplyFingerprint {
  std::set<std::string> nodes;
  std::map<std::string, std::map<std::string, int64_t>> vcs;
  bool operator==(const ApplyFingerprint&) const = default;
};

ApplyFingerprint apply_fingerprint(const config::HivedModel& m) {
  ApplyFingerprint f;
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

ApplyFingerprint apply_fingerprint(const LiveState& live) {
  ApplyFingerprint f;
  for (const auto& n : live.nodes) f.nodes.insert(n.name);
  for (const auto& [vc, cells] : live.status.virtual_clusters) {
    auto& v = f.vcs[vc];
    for (const auto& c : cells)
      if (!is_opportunistic_entry(c)) v[c.cell_type]++;
  }
  return f;
}

// A shell command's exit status; -1 when it could not start, was killed, or
// ran out of time.
int apply_command_status(const util::Result<util::ProcessResult>& r) {
  if (!r.ok() || r->timed_out || !r->exited()) return -1;
  return r->exit_code;
}

std::string apply_status_text(int rc) {
  return rc < 0 ? std::string("did not finish") : "exit " + std::to_string(rc);
}

// The ConfigMap hivedscheduler-config as `paictl install` writes it (lib/deploy/openpai.h).
util::Result<std::string> apply_configmap(const ApplyRequest& req, const std::string& config) {
  deploy::OpenPaiSettings s;
  s.ns = req.ns;
  s.hived_config = config;
  auto manifest = deploy::render_hived_configmap(req.templates_dir, s);
  if (!manifest) {
    util::Error e = std::move(manifest).error();
    e.kind = util::Error::Kind::Input;
    return e;
  }
  return manifest;
}

ApplyError apply_error(ApplyError::Kind kind, std::string message) {
  ApplyError e;
  e.kind = kind;
  e.message = std::move(message);
  return e;
}

}  // namespace

std::string join_names(const std::vector<std::string>& v, size_t max) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += ", ... (" + std::to_string(v.size()) + ")";
  return s;
}

util::Result<ApplyConfigs, ApplyError> load_apply_configs(const ApplyRequest& req,
                                                          util::ProcessRunner& runner) {
  ApplyConfigs c;
  c.scratch = std::make_shared<ApplyScratch>();
  if (c.scratch->path.empty())
    return apply_error(ApplyError::Kind::Input, "cannot create a temporary directory");

  // The config HiveD runs now: the given file, else HiveD's ConfigMap.
  c.current_path = req.current_path;
  c.current_name = req.current_path;
  if (c.current_path.empty()) {
    std::string cmd = req.kubectl + " -n " + util::shell_quote(req.ns) +
                      " get configmap hivedscheduler-config -o "
                      "'jsonpath={.data.hivedscheduler\\.yaml}'";
    auto get = util::ProcessRequest::shell(cmd);
    get.timeout_s = 60;
    get.capture_err = false;
    auto r = runner.run(get);
    int rc = apply_command_status(r);
    std::string text = rc == 0 ? r->out : std::string();
    if (rc != 0 || util::trim(text).empty())
      return apply_error(ApplyError::Kind::CurrentConfig,
                         "cannot read the current HiveD config: " + cmd +
                             (rc == 0 ? " printed nothing" : " failed"));
    c.current_path = c.scratch->path + "/hivedscheduler.yaml";
    c.current_name = "the HiveD ConfigMap";
    if (auto w = util::write_file_atomic(c.current_path, text); !w.ok())
      return apply_error(ApplyError::Kind::Input, w.error().message);
  }
  auto text = hived_config_text(req.new_path);
  if (!text) return apply_error(ApplyError::Kind::Input, text.error().message);
  c.new_text = std::move(text).value();
  // The new config first: it is what will run.
  auto load =
      [](const std::string& path) -> util::Result<std::shared_ptr<config::HivedModel>, ApplyError> {
    auto m = load_hived_model(path);
    if (m) return std::move(m).value();
    ApplyError e = apply_error(ApplyError::Kind::ConfigErrors,
                               m.error().kind == ConfigLoadError::Kind::NoHivedConfig
                                   ? "no HiveD config in " + path
                                   : "the HiveD config " + path + " has errors");
    e.config = std::move(m).error();
    return e;
  };
  auto new_model = load(req.new_path);
  if (!new_model) return std::move(new_model).error();
  c.new_model = std::move(new_model).value();
  auto old_model = load(c.current_path);
  if (!old_model) return std::move(old_model).error();
  c.old_model = std::move(old_model).value();
  return c;
}

util::Result<ApplyPlan, ApplyError> plan_hived_apply(const ApplyRequest& req, ApplyConfigs configs,
                                                     Client& hived) {
  ApplyPlan p;
  p.request = req;
  p.configs = std::move(configs);
  auto live = read_live(hived);
  if (!live) {
    ApplyError e = apply_error(ApplyError::Kind::HiveD, live.error().doing);
    e.hived = std::move(live).error();
    return e;
  }
  p.warnings = live->warnings;
  p.input.old_path = p.configs.current_name;
  p.input.new_path = req.new_path;
  p.input.old_model = p.configs.old_model;
  p.input.new_model = p.configs.new_model;
  p.input.source = "live";
  p.input.source_detail =
      "the live HiveD at " + (req.hived_name.empty() ? hived.base() : req.hived_name);
  p.input.groups = live_groups(*live, p.input.old_model.get());
  p.input.bad = bad_nodes(*live);

  auto d = diff_configs(*p.input.old_model, *p.input.new_model, p.input.groups, p.input.bad);
  if (!d) {
    ApplyError e = apply_error(ApplyError::Kind::Diff, d.error().message);
    e.warnings = p.warnings;
    return e;
  }
  p.diff = std::move(d).value();
  if (!p.diff.changes()) return p;
  if (p.diff.guaranteed_preempted > 0 && !req.allow_preemption) {
    p.refused = true;
    for (const auto& gc : p.diff.groups)
      if (gc.effect == GroupEffect::LazilyPreempted && gc.guaranteed)
        p.refused_groups.push_back(gc.name);
    return p;
  }

  p.push_command = req.push_command;
  if (p.push_command.empty()) {
    auto manifest = apply_configmap(req, p.configs.new_text);
    if (!manifest) {
      p.push_error = std::move(manifest).error();
      return p;
    }
    p.manifest = std::move(manifest).value();
    p.push_command = req.kubectl + " apply -f -";
  }
  p.push_input = p.manifest.empty() ? p.configs.new_text : p.manifest;
  p.restart_command = !req.restart_command.empty()
                          ? req.restart_command
                          : req.kubectl + " -n " + util::shell_quote(req.ns) +
                                " rollout restart statefulset/hivedscheduler-hs";
  return p;
}

util::Result<ApplyPlan, ApplyError> plan_hived_apply(const ApplyRequest& req, Client& hived,
                                                     util::ProcessRunner& runner) {
  auto configs = load_apply_configs(req, runner);
  if (!configs) return std::move(configs).error();
  return plan_hived_apply(req, std::move(configs).value(), hived);
}

util::Result<ApplyOutcome, ApplyFailure> apply_hived_apply(
    const ApplyPlan& plan, Client& hived, util::ProcessRunner& runner, const util::Clock& clock,
    const std::function<void(const ApplyEvent&)>& on_event) {
  ApplyOutcome out;
  auto event = [&](ApplyEvent::Kind kind, std::string text) {
    if (on_event) on_event(ApplyEvent{kind, std::move(text)});
  };
  auto fail = [&](ApplyError::Kind kind, std::string message) {
    return ApplyFailure{apply_error(kind, std::move(message)), out};
  };
  if (!plan.applicable())
    return fail(ApplyError::Kind::Input, "the plan has nothing to apply, or cannot be applied");
  auto output = [&](util::OutputStream, std::string_view chunk) {
    event(ApplyEvent::Kind::Output, std::string(chunk));
  };

  // Push and restart.
  const std::string config_file = plan.configs.scratch->path + "/config.yaml";
  if (auto w = util::write_file_atomic(config_file, plan.configs.new_text); !w.ok())
    return fail(ApplyError::Kind::Input, w.error().message);
  event(ApplyEvent::Kind::Pushing, plan.push_command);
  auto push = util::ProcessRequest::shell(plan.push_command);
  push.stdin_text = plan.push_input;
  push.env = {{"PAICTL_HIVED_CONFIG", config_file}};
  push.timeout_s = 300;
  push.on_output = output;
  int prc = apply_command_status(runner.run(push));
  ::unlink(config_file.c_str());
  if (prc != 0)
    return fail(ApplyError::Kind::Push, "pushing the config failed (" + apply_status_text(prc) +
                                            "); HiveD still runs the old config");
  out.pushed = true;
  event(ApplyEvent::Kind::Restarting, plan.restart_command);
  auto restart = util::ProcessRequest::shell(plan.restart_command);
  restart.timeout_s = 300;
  restart.on_output = output;
  int rrc = apply_command_status(runner.run(restart));
  if (rrc != 0)
    return fail(ApplyError::Kind::Restart,
                "restarting HiveD failed (" + apply_status_text(rrc) +
                    "); the new config is pushed and is read at HiveD's next start");
  out.restarted = true;

  // Wait until HiveD runs the new config and its nodes are healthy again.
  const ApplyFingerprint want = apply_fingerprint(*plan.input.new_model);
  const std::set<std::string> bad_before(plan.input.bad.begin(), plan.input.bad.end());
  const double wait_s = plan.request.wait_s, poll_s = plan.request.poll_s;
  const double start = clock.now();
  const double end = start + wait_s;
  std::optional<LiveState> live;
  out.waited = true;
  for (;;) {
    auto st = hived.cluster_status();
    if (st.ok()) {
      auto gr = hived.affinity_groups();
      if (gr.ok()) {
        auto l = index_live(std::move(st).value(), std::move(gr).value());
        out.not_healthy.clear();
        if (apply_fingerprint(l) == want) {
          for (const auto& n : l.nodes)
            if (!n.healthy && !bad_before.count(n.name)) out.not_healthy.push_back(n.name);
          if (out.not_healthy.empty()) {
            live = std::move(l);
            break;
          }
          out.last = std::to_string(out.not_healthy.size()) +
                     " node(s) not healthy yet: " + join_names(out.not_healthy);
        } else {
          out.last = "HiveD does not run the new config yet";
        }
      } else {
        out.last = gr.error().summary();
      }
    } else {
      out.last = st.error().summary();
    }
    if (clock.now() + poll_s > end) break;
    event(ApplyEvent::Kind::Waiting, out.last);
    clock.sleep(poll_s);
  }
  out.waited_s = clock.now() - start;
  if (!live)
    return fail(ApplyError::Kind::Timeout,
                "HiveD did not come back healthy on the new config within " +
                    std::to_string(static_cast<int>(wait_s)) + " s: " + out.last);

  // What happened, against the plan.
  out.healthy = true;
  out.last.clear();
  std::map<std::string, const AffinityGroup*> now;
  for (const auto& gr : live->groups) now[gr.name] = &gr;
  for (const auto& gc : plan.diff.groups) {
    auto it = now.find(gc.name);
    GroupOutcome g;
    g.name = gc.name;
    g.now = it == now.end()                              ? "gone"
            : it->second->lazy_preemption_status         ? "lazily preempted"
            : it->second->priority < 0 || !gc.guaranteed ? "opportunistic"
                                                         : "guaranteed";
    g.planned = std::string(to_string(gc.effect));
    g.as_planned = gc.effect == GroupEffect::LazilyPreempted ? g.now == "lazily preempted"
                   : gc.effect == GroupEffect::Keeps ? g.now != "lazily preempted" || !gc.guaranteed
                                                     : true;
    g.notable = gc.effect != GroupEffect::Keeps || !g.as_planned;
    if (!g.as_planned) ++out.not_as_planned;
    out.groups.push_back(std::move(g));
  }
  out.nodes = static_cast<int64_t>(live->nodes.size());
  out.bad_nodes = bad_nodes(*live);
  out.live_groups = static_cast<int64_t>(live->groups.size());
  return out;
}

}  // namespace pai::hived

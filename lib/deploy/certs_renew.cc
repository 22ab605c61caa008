// paictl certs renew (certs_renew.h): the plan, the steps on each master, the
// journal that lets a killed run resume, the verification.
#include "deploy/certs_renew.h"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <ctime>

#include "deploy/cluster_files.h"
#include "deploy/journal.h"
#include "util/fs.h"
#include "util/strings.h"
#include "util/time.h"

namespace pai::deploy {

namespace {

constexpr const char* kRenewOperation = "certs-renew";

int64_t certs_renew_now(const CertsRenewDeps& d) {
  return d.wall_clock ? d.wall_clock() : static_cast<int64_t>(std::time(nullptr));
}

remote::ExecResult certs_renew_exec(remote::Transport& t, const HostSpec& h,
                                    const std::string& script, int timeout_s, size_t max_output) {
  remote::ExecRequest req;
  std::string q = util::shell_quote(script);
  req.command = h.target.endpoint.user == "root" || h.target.endpoint.user.empty()
                    ? "sh -c " + q
                    : "sudo -n sh -c " + q;
  req.timeout_ms = timeout_s * 1000;
  req.max_output = max_output;
  return t.exec(h.target, req);
}

std::string certs_renew_last_line(const std::string& text) {
  std::string_view t = util::trim(text);
  size_t nl = t.rfind('\n');
  return std::string(nl == std::string_view::npos ? t : t.substr(nl + 1));
}

const HostSpec* certs_renew_host(const PreparedCluster& c, const std::string& name) {
  for (const auto& h : c.specs)
    if (h.name == name) return &h;
  return nullptr;
}

// The admin.conf's client certificate, as the script's parser reads a kubeconfig.
std::optional<check::CertInfo> certs_renew_conf_cert(const std::string& text, int64_t now) {
  check::HostCerts h = check::parse_cert_script_output(
      "local", "@@paictl-cert kubeconfig admin.conf\n" + text + "\n@@paictl-cert end\n", now);
  if (h.certs.empty()) return std::nullopt;
  return h.certs.front();
}

}  // namespace

std::string CertsRenewStep::describe() const {
  switch (kind) {
    case Kind::Renew:
      return "kubeadm certs renew all on " + host +
             " (the leaves and the kubeconfigs' client certificates, 1 year; not the CAs)";
    case Kind::Restart:
      return "restart the control plane on " + host +
             ": its static pod manifests out of /etc/kubernetes/manifests until the API server "
             "is gone, then back until it answers";
    case Kind::Fetch:
      return "fetch " + host + ":/etc/kubernetes/admin.conf into .paictl/admin.conf (0600)";
  }
  return {};
}

std::string CertsRenewPlan::renew_script() {
  return "kubeadm certs renew all 2>&1\n";
}

std::string CertsRenewPlan::restart_script() const {
  // Half-second polls, at most wait_s seconds each way. A run killed while the
  // manifests were out finds them in OFF and puts them back.
  std::string polls = std::to_string(request.wait_s * 2);
  return "M=/etc/kubernetes/manifests\n"
         "OFF=/etc/kubernetes/manifests.paictl-restart\n"
         "K='kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache "
         "--request-timeout=5s'\n"
         "up() { $K get --raw=/readyz >/dev/null 2>&1; }\n"
         "mkdir -p \"$OFF\" && chmod 700 \"$OFF\" || exit 1\n"
         "for f in \"$M\"/*.yaml; do [ -e \"$f\" ] || continue; mv \"$f\" \"$OFF\"/ || exit 1; "
         "done\n"
         "ls \"$OFF\"/*.yaml >/dev/null 2>&1 || { echo \"no static pod manifest in $M\" >&2; exit "
         "1; }\n"
         "i=0\n"
         "while up; do\n"
         "  i=$((i+1))\n"
         "  if [ $i -ge " +
         polls + " ]; then mv \"$OFF\"/*.yaml \"$M\"/; echo \"the API server still answers " +
         std::to_string(request.wait_s) +
         " s after its manifest left $M\" >&2; exit 1; fi\n"
         "  sleep 0.5\n"
         "done\n"
         "mv \"$OFF\"/*.yaml \"$M\"/ || exit 1\n"
         "rmdir \"$OFF\" 2>/dev/null\n"
         "j=0\n"
         "until up; do\n"
         "  j=$((j+1))\n"
         "  if [ $j -ge " +
         polls + " ]; then echo \"the API server does not answer " +
         std::to_string(request.wait_s) +
         " s after its manifest came back\" >&2; exit 1; fi\n"
         "  sleep 0.5\n"
         "done\n"
         "echo \"the control plane stopped within $((i/2)).$((i%2*5)) s and answered again within "
         "$((j/2)).$((j%2*5)) s\"\n";
}

bool renewed_by_kubeadm(const check::CertInfo& c) {
  if (c.kubeconfig) return c.name != "kubelet.conf";
  return !c.is_ca && c.source.rfind("/etc/kubernetes/pki/", 0) == 0;
}

UseCaseResult<CertsCheck> check_certs(const CertsRenewRequest& r, const CertsRenewDeps& deps) {
  CertsCheck c;
  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.wait_s = r.wait_s;
  auto prepared = prepare_cluster(pr, deps.load_hosts);
  if (!prepared.ok()) return std::move(prepared).error();
  c.cluster = std::make_shared<const PreparedCluster>(std::move(prepared).value());
  auto transport = make_transport(deps.transport, c.cluster->hosts.ssh_password);
  c.report = check::read_certs(c.cluster->specs, *transport, certs_renew_now(deps), r.parallel);
  c.findings = check::certs_findings(c.report, r.warn_within_days);
  return c;
}

UseCaseResult<CertsRenewPlan> plan_certs_renew(const CertsRenewRequest& r,
                                               const CertsRenewDeps& deps) {
  CertsRenewPlan p;
  p.request = r;
  p.deps = deps;
  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.wait_s = r.wait_s;
  auto prepared = prepare_cluster(pr, deps.load_hosts);
  if (!prepared.ok()) return std::move(prepared).error();
  p.cluster = std::make_shared<const PreparedCluster>(std::move(prepared).value());
  for (const auto& h : p.cluster->specs)
    if (h.master) p.masters.push_back(h.name);
  if (p.masters.empty())
    return input_error("certs renew: layout.yaml names no master (pai-master: \"true\")");
  std::string state = p.cluster->cluster_dir + "/.paictl";
  p.admin_conf = state + "/admin.conf";
  p.journal = state + "/certs.journal";
  p.transport = make_transport(deps.transport, p.cluster->hosts.ssh_password);

  p.before = check::read_certs(p.cluster->specs, *p.transport, certs_renew_now(deps), r.parallel);
  p.findings = check::certs_findings(p.before, r.warn_within_days);
  for (const auto& prob : p.before.problems) {
    const HostSpec* h = certs_renew_host(*p.cluster, prob.host);
    if (h && h->master && prob.source == "ssh")
      return remote_error("certs renew: " + prob.host + ": " + prob.message,
                          "the masters must be reachable over SSH as root (sudo -n)");
  }

  // An unfinished earlier run: its id, and the steps it completed.
  auto records = read_journal(p.journal);
  if (!records.ok())
    return input_error("certs renew: " + records.error().message, records.error().hint);
  std::string last_run;
  bool last_done = false;
  for (const auto& rec : *records) {
    if (rec.value("operation", "") != kRenewOperation) continue;
    std::string run = rec.value("run", "");
    if (run != last_run) {
      last_run = run;
      last_done = false;
    }
    if (rec.value("event", "") == "done") last_done = true;
  }
  std::vector<std::pair<std::string, std::string>> completed;  // (step, host)
  std::vector<std::pair<std::string, std::string>> started;
  if (!last_run.empty() && !last_done) {
    p.resumed = last_run;
    for (const auto& rec : *records) {
      if (rec.value("operation", "") != kRenewOperation || rec.value("run", "") != last_run)
        continue;
      std::pair<std::string, std::string> key{rec.value("step", ""), rec.value("host", "")};
      if (rec.value("event", "") == "start") started.push_back(key);
      if (rec.value("event", "") == "end" && rec.value("result", "") == "ok")
        completed.push_back(key);
    }
  }
  auto has = [](const auto& v, const std::pair<std::string, std::string>& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  if (p.resumed.empty()) {
    p.run_id = util::now_rfc3339() + "-" + std::to_string(getpid());
  } else {
    p.run_id = p.resumed;
  }
  for (const auto& m : p.masters) {
    for (auto kind : {CertsRenewStep::Kind::Renew, CertsRenewStep::Kind::Restart,
                      CertsRenewStep::Kind::Fetch}) {
      if (kind == CertsRenewStep::Kind::Fetch && m != p.masters.front()) continue;
      CertsRenewStep s;
      s.kind = kind;
      s.host = m;
      std::pair<std::string, std::string> key{to_string(kind), m};
      // Only the renew is skipped once done: the restart and the fetch are
      // cheap and make sure of what they leave.
      if (kind == CertsRenewStep::Kind::Renew && has(completed, key)) {
        s.skip = true;
        s.note = "done by the interrupted run " + p.resumed;
      } else if (kind == CertsRenewStep::Kind::Restart && has(started, key) &&
                 !has(completed, key)) {
        s.note = "interrupted in run " + p.resumed + ": the manifests are put back first";
      }
      p.steps.push_back(std::move(s));
    }
  }
  return p;
}

CertsRenewOutcome apply_certs_renew(CertsRenewPlan& p, const CertsRenewCallbacks& cb) {
  CertsRenewOutcome o;
  const CertsRenewRequest& r = p.request;
  if (r.dry_run) {
    o.end = CertsRenewOutcome::End::DryRun;
    return o;
  }
  if (!r.yes) {
    Answer a = cb.confirm ? cb.confirm(p) : Answer::No;
    if (a == Answer::NoTerminal) {
      o.end = CertsRenewOutcome::End::NoTerminal;
      return o;
    }
    if (a != Answer::Yes) {
      o.end = CertsRenewOutcome::End::Declined;
      return o;
    }
  }
  LocalLock lock;
  if (auto l = lock.acquire(p.cluster->cluster_dir + "/.paictl/certs.lock"); !l.ok()) {
    o.end = CertsRenewOutcome::End::Failed;
    o.error = other_error("certs renew: " + l.error().message, l.error().hint);
    return o;
  }
  Journal journal;
  if (auto j = journal.open(p.journal); !j.ok()) {
    o.end = CertsRenewOutcome::End::Failed;
    o.error = other_error("certs renew: " + j.error().message, j.error().hint);
    return o;
  }
  auto record = [&](const CertsRenewStep& s, const char* event, const std::string& result) {
    nlohmann::json rec = {{"operation", kRenewOperation},
                          {"run", p.run_id},
                          {"event", event},
                          {"step", to_string(s.kind)},
                          {"host", s.host}};
    if (!result.empty()) rec["result"] = result;
    return journal.append(std::move(rec));
  };
  auto fail = [&](const CertsRenewStep& s, UseCaseError e) {
    (void)record(s, "end", "failed");
    o.end = CertsRenewOutcome::End::Failed;
    o.failed_step = s;
    o.error = std::move(e);
    return o;
  };
  std::string fetched;
  for (const auto& s : p.steps) {
    if (s.skip) {
      CertsRenewEvent e;
      e.kind = CertsRenewEvent::Kind::StepSkipped;
      e.step = &s;
      cb.emit(e);
      continue;
    }
    const HostSpec* h = certs_renew_host(*p.cluster, s.host);
    if (!h) return fail(s, other_error("certs renew: " + s.host + " is no host of the cluster"));
    if (auto j = record(s, "start", ""); !j.ok())
      return fail(s, other_error("certs renew: the journal: " + j.error().message));
    CertsRenewEvent started;
    started.kind = CertsRenewEvent::Kind::StepStarted;
    started.step = &s;
    cb.emit(started);
    auto t0 = std::chrono::steady_clock::now();
    remote::ExecResult res;
    if (s.kind == CertsRenewStep::Kind::Renew)
      res = certs_renew_exec(*p.transport, *h, CertsRenewPlan::renew_script(), 300, 1u << 20);
    else if (s.kind == CertsRenewStep::Kind::Restart)
      res = certs_renew_exec(*p.transport, *h, p.restart_script(), 2 * r.wait_s + 60, 1u << 20);
    else
      res = certs_renew_exec(*p.transport, *h, "cat /etc/kubernetes/admin.conf", 60, 1u << 20);
    if (!res.ok())
      return fail(s, remote_error("certs renew: " + s.host + ": " + res.error, res.hint));
    if (res.exit_status != 0) {
      std::string why = certs_renew_last_line(res.err.empty() ? res.out : res.err);
      if (s.kind == CertsRenewStep::Kind::Fetch) why = certs_renew_last_line(res.err);
      return fail(
          s, remote_error("certs renew: " + s.describe() + " failed (exit " +
                          std::to_string(res.exit_status) + ")" + (why.empty() ? "" : ": " + why)));
    }
    std::string line;
    if (s.kind == CertsRenewStep::Kind::Fetch) {
      // The file holds admin's private key: written at 0600, never shown.
      fetched = res.out;
      auto cert = certs_renew_conf_cert(fetched, certs_renew_now(p.deps));
      if (!cert)
        return fail(s, remote_error("certs renew: " + s.host +
                                    ":/etc/kubernetes/admin.conf holds no client certificate"));
      o.admin_conf_expires = util::rfc3339_utc(static_cast<std::time_t>(cert->not_after));
      if (auto d = util::make_directories(p.cluster->cluster_dir + "/.paictl", 0700); !d.ok())
        return fail(s, other_error("certs renew: " + d.error().message));
      if (auto w = util::write_file_atomic(p.admin_conf, fetched, 0600); !w.ok())
        return fail(s, other_error("certs renew: " + w.error().message));
      line = "admin.conf's client certificate expires " + o.admin_conf_expires;
    } else {
      line = certs_renew_last_line(res.out);
    }
    if (auto j = record(s, "end", "ok"); !j.ok())
      return fail(s, other_error("certs renew: the journal: " + j.error().message));
    o.done.push_back(s);
    CertsRenewEvent done;
    done.kind = CertsRenewEvent::Kind::StepDone;
    done.step = &s;
    done.output = line;
    done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cb.emit(done);
  }

  CertsRenewEvent v;
  v.kind = CertsRenewEvent::Kind::Verifying;
  cb.emit(v);
  int64_t now = certs_renew_now(p.deps);
  o.after = check::read_certs(p.cluster->specs, *p.transport, now, r.parallel);
  o.findings_after = check::certs_findings(*o.after, r.warn_within_days);
  bool ok = true;
  for (const auto& c : o.after->certs) {
    const HostSpec* h = certs_renew_host(*p.cluster, c.host);
    if (h && h->master && renewed_by_kubeadm(c) && c.days_left < r.warn_within_days) ok = false;
  }
  for (const auto& prob : o.after->problems) {
    const HostSpec* h = certs_renew_host(*p.cluster, prob.host);
    if (h && h->master) ok = false;
  }
  if (!fetched.empty()) {
    auto cert = certs_renew_conf_cert(fetched, now);
    if (!cert || cert->days_left < r.warn_within_days) ok = false;
  }
  o.verified = ok;
  o.end = CertsRenewOutcome::End::Renewed;
  nlohmann::json done = {
      {"operation", kRenewOperation}, {"run", p.run_id}, {"event", "done"}, {"verified", ok}};
  (void)journal.append(std::move(done));
  return o;
}

const char* to_string(CertsRenewStep::Kind k) {
  switch (k) {
    case CertsRenewStep::Kind::Renew:
      return "renew";
    case CertsRenewStep::Kind::Restart:
      return "restart";
    case CertsRenewStep::Kind::Fetch:
      return "fetch";
  }
  return "?";
}

}  // namespace pai::deploy

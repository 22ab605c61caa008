#include "deploy/restore.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

#include "config/cluster_files.h"
#include "deploy/cluster_files.h"
#include "hived/drift.h"
#include "hived/inspect.h"
#include "http/client.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/strings.h"
#include "util/time.h"

namespace pai::deploy {

namespace {

std::string restore_q(const std::string& s) {
  return util::shell_quote(s);
}

void restore_progress(const RestoreDeps& d, const std::string& step, const std::string& detail) {
  if (d.on_progress) d.on_progress(step, detail);
}

util::Clock restore_clock(const RestoreDeps& d) {
  util::Clock c = util::Clock::real();
  if (d.clock.now) c.now = d.clock.now;
  if (d.clock.sleep) c.sleep = d.clock.sleep;
  return c;
}

UseCaseError restore_remote(const std::string& what, const HostSpec& master,
                            const remote::ExecResult& x) {
  std::string why = x.ok() ? std::string(util::trim(x.err)) : x.error;
  if (why.size() > 2000) why = why.substr(0, 2000) + "...";
  return remote_error("restore: " + what + " on " + master.name + " failed: " +
                          (why.empty() ? "exit status " + std::to_string(x.exit_status) : why),
                      "run the same command again: the restore resumes where it stopped");
}

std::string restore_journal_path(const std::string& cluster_dir) {
  return cluster_dir + "/.paictl/restore.json";
}

// "HOST-ADDRESS" pairs, sorted, for comparing the archive's hosts with the directory's.
std::vector<std::string> restore_host_set(const std::vector<BackupHost>& hosts) {
  std::vector<std::string> v;
  for (const auto& h : hosts) v.push_back(h.name + " " + h.address);
  std::sort(v.begin(), v.end());
  return v;
}

// sha256sum's output ("HEX  ./path") as pki/path -> HEX.
std::map<std::string, std::string> restore_pki_sums(const std::string& out) {
  std::map<std::string, std::string> m;
  for (auto l : util::split(out, '\n')) {
    auto t = util::trim(l);
    if (t.size() < 67) continue;
    std::string hex(t.substr(0, 64));
    std::string path(util::trim(t.substr(64)));
    if (!path.empty() && path[0] == '*') path.erase(0, 1);
    while (path.rfind("./", 0) == 0) path.erase(0, 2);
    m["pki/" + path] = hex;
  }
  return m;
}

const char* kRestorePkiSums =
    "cd /etc/kubernetes/pki 2>/dev/null && find . -type f -exec sha256sum {} + || true\n";

std::vector<std::string> restore_pki_differ(const BackupArchive& a, const std::string& sums) {
  auto host = restore_pki_sums(sums);
  std::vector<std::string> out;
  for (const auto& mi : a.manifest.members) {
    if (mi.name.rfind("pki/", 0) != 0) continue;
    auto it = host.find(mi.name);
    if (it == host.end() || it->second != mi.sha256) out.push_back(mi.name);
  }
  return out;
}

// The .data of a ConfigMap's JSON, for comparing the HiveD config.
nlohmann::json restore_cm_data(const std::string& json) {
  auto j = util::parse_json_or_discarded(json);
  if (j.is_object() && j.contains("data")) return j["data"];
  return nullptr;
}

remote::ExecResult restore_run(remote::Transport& t, const HostSpec& master,
                               const std::string& script, const std::string& input = {},
                               int timeout_ms = 600000) {
  return run_on_master(t, master, script, input, timeout_ms);
}

// The SHA-256 of a file, read in pieces.
util::Result<std::string> restore_file_sha256(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return util::Error{path + ": " + std::strerror(errno), {}};
  util::Sha256 h;
  std::vector<char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) h.update({buf.data(), n});
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) return util::Error{path + ": read error", {}};
  return h.hex();
}

// The HiveD config of the archive's ConfigMap as HiveD would run it; null when
// the config does not build (HiveD refuses it too).
std::shared_ptr<const config::HivedModel> restore_hived_model(const std::string& configmap_json) {
  auto data = restore_cm_data(configmap_json);
  if (!data.is_object() || !data.contains("hivedscheduler.yaml") ||
      !data["hivedscheduler.yaml"].is_string())
    return nullptr;
  auto loaded = config::check_sources(
      {{"hivedscheduler.yaml", data["hivedscheduler.yaml"].get<std::string>()}});
  for (const auto& c : loaded.clusters)
    if (c.model && c.model->complete) return c.model;
  return nullptr;
}

// The `hived` step: HiveD's inspect API asked until it answers with the
// restored config's shape, within `wait_s`. HiveD reads its ConfigMap when it
// starts, so a HiveD that answers with another shape may not have restarted
// yet: it is asked again until the wait ends.
struct RestoreHivedAnswer {
  bool answered = false;  // at least once
  bool matches = false;
  std::string last_error;  // the last failure to answer
  hived::ConfigShape seen, wanted;
};
RestoreHivedAnswer restore_ask_hived(http::Client& http, const std::string& url,
                                     const config::HivedModel& model, int wait_s,
                                     util::Clock& clock) {
  RestoreHivedAnswer a;
  a.wanted = hived::config_shape(model);
  hived::Client client(http, url);
  double until = clock.now() + wait_s;
  for (;;) {
    auto st = client.cluster_status();
    if (st.ok()) {
      a.answered = true;
      a.seen = hived::config_shape(*st);
      if (a.seen == a.wanted) {
        a.matches = true;
        return a;
      }
    } else {
      a.last_error = st.error().summary();
    }
    if (clock.now() >= until) return a;
    clock.sleep(2.0);
  }
}

}  // namespace

const char* to_string(RestoreCheck::Result r) {
  switch (r) {
    case RestoreCheck::Result::Verified:
      return "verified";
    case RestoreCheck::Result::Failed:
      return "failed";
    case RestoreCheck::Result::Skipped:
      return "skipped";
  }
  return "";
}

RestoreLayout restore_layout(const std::string& data_dir, const std::string& ts, bool inside) {
  RestoreLayout l;
  l.data_dir = data_dir;
  if (inside) {
    l.new_dir = data_dir + "/restore-" + ts;
    l.old_dir = data_dir + "/before-restore-" + ts;
    l.snapshot = data_dir + "/restore-" + ts + ".db";
  } else {
    l.new_dir = data_dir + "-restore-" + ts;
    l.old_dir = data_dir + ".before-restore-" + ts;
    l.snapshot = data_dir + "-restore-" + ts + ".db";
  }
  l.stash = "/etc/kubernetes/manifests.before-restore-" + ts;
  return l;
}

std::string restore_journal_json(const RestoreJournal& j) {
  nlohmann::json o;
  o["archive"] = j.archive;
  o["archive_sha256"] = j.archive_sha256;
  o["ts"] = j.ts;
  o["layout"] = {{"data_dir", j.layout.data_dir},
                 {"new_dir", j.layout.new_dir},
                 {"old_dir", j.layout.old_dir},
                 {"snapshot", j.layout.snapshot},
                 {"stash", j.layout.stash}};
  o["etcd"] = {{"name", j.etcd.name},
               {"data_dir", j.etcd.data_dir},
               {"initial_cluster", j.etcd.initial_cluster},
               {"initial_advertise_peer_urls", j.etcd.peer_urls},
               {"endpoint", j.etcd.endpoint}};
  o["done"] = j.done;
  o["finished"] = j.finished;
  return util::dump_json(o, 2) + "\n";
}

util::Result<RestoreJournal> parse_restore_journal(const std::string& text) {
  auto p = util::parse_json(text);
  util::Error bad{"the restore journal is not what paictl writes",
                  "remove it to start over (after checking the master by hand)"};
  bad.kind = util::Error::Kind::Input;
  if (!p.ok() || !p->is_object()) return bad;
  const auto& o = *p;
  RestoreJournal j;
  auto str = [&](const nlohmann::json& obj, const char* k, std::string& out) {
    if (!obj.is_object() || !obj.contains(k) || !obj[k].is_string()) return false;
    out = obj[k].get<std::string>();
    return true;
  };
  if (!str(o, "archive", j.archive) || !str(o, "archive_sha256", j.archive_sha256) ||
      !str(o, "ts", j.ts))
    return bad;
  const auto& l = o.contains("layout") ? o["layout"] : nlohmann::json();
  if (!str(l, "data_dir", j.layout.data_dir) || !str(l, "new_dir", j.layout.new_dir) ||
      !str(l, "old_dir", j.layout.old_dir) || !str(l, "snapshot", j.layout.snapshot) ||
      !str(l, "stash", j.layout.stash))
    return bad;
  const auto& e = o.contains("etcd") ? o["etcd"] : nlohmann::json();
  if (!str(e, "name", j.etcd.name) || !str(e, "data_dir", j.etcd.data_dir) ||
      !str(e, "initial_cluster", j.etcd.initial_cluster) ||
      !str(e, "initial_advertise_peer_urls", j.etcd.peer_urls) ||
      !str(e, "endpoint", j.etcd.endpoint))
    return bad;
  if (o.contains("done") && o["done"].is_array())
    for (const auto& d : o["done"])
      if (d.is_string()) j.done.push_back(d.get<std::string>());
  j.finished = o.value("finished", false);
  return j;
}

std::string restore_upload_script(const RestoreLayout& l, const std::string& sha256) {
  return "set -e; umask 077\n"
         "S=" +
         restore_q(l.snapshot) +
         "\n"
         "if [ -f \"$S\" ] && [ \"$(sha256sum < \"$S\" | cut -d' ' -f1)\" = " +
         sha256 +
         " ]; then echo present; exit 0; fi\n"
         "T=\"$S.tmp.$$\"; cat > \"$T\"\n"
         "if [ \"$(sha256sum < \"$T\" | cut -d' ' -f1)\" != " +
         sha256 +
         " ]; then rm -f \"$T\"; echo 'the snapshot arrived damaged' >&2; exit 1; fi\n"
         "mv -f \"$T\" \"$S\"; echo uploaded\n";
}

std::string restore_etcd_script(const RestoreLayout& l, const EtcdSettings& e) {
  return "set -e; umask 077\n"
         "N=" +
         restore_q(l.new_dir) +
         "\n"
         "if [ -d \"$N/member\" ]; then echo present; exit 0; fi\n"
         "rm -rf \"$N\".tmp.*; T=\"$N.tmp.$$\"\n"
         "ETCDCTL_API=3 etcdctl snapshot restore " +
         restore_q(l.snapshot) + " --data-dir \"$T\" --name " + restore_q(e.name) +
         " --initial-cluster " + restore_q(e.initial_cluster) + " --initial-advertise-peer-urls " +
         restore_q(e.peer_urls) +
         " >\"$T.log\" 2>&1 || { cat \"$T.log\" >&2; rm -rf \"$T\" \"$T.log\"; exit 1; }\n"
         "rm -f \"$T.log\"\n"
         "if [ -d \"$N\" ] && [ ! -d \"$N/member\" ]; then rmdir \"$N\"; fi\n"
         "mv -T \"$T\" \"$N\" || { rm -rf \"$T\"; [ -d \"$N/member\" ]; }\n"
         "echo restored\n";
}

std::string restore_stop_script(const RestoreLayout& l) {
  return "set -e\n"
         "M=/etc/kubernetes/manifests; S=" +
         restore_q(l.stash) +
         "\n"
         "mkdir -p \"$S\"; chmod 700 \"$S\"\n"
         "for f in \"$M\"/*.yaml; do [ -e \"$f\" ] || continue; mv -f \"$f\" \"$S/\"; "
         "echo \"moved ${f##*/}\"; done\n";
}

std::string restore_swap_script(const RestoreLayout& l) {
  return "set -e\n"
         "D=" +
         restore_q(l.data_dir) + "; N=" + restore_q(l.new_dir) + "; O=" + restore_q(l.old_dir) +
         "\n"
         "if [ -d \"$O\" ] && [ ! -d \"$N/member\" ] && [ -d \"$D/member\" ]; then "
         "echo 'already swapped'; exit 0; fi\n"
         "[ -d \"$N/member\" ] || { echo \"no restored data in $N/member, and $O does not hold "
         "the old data\" >&2; exit 1; }\n"
         "if [ -d \"$D/member\" ] && [ -d \"$O/member\" ]; then echo \"$D/member, $N/member and "
         "$O/member all exist: not swapping (check them by hand)\" >&2; exit 1; fi\n"
         "mkdir -p \"$O\"; chmod 700 \"$O\"\n"
         "if [ -d \"$D/member\" ]; then mv -T \"$D/member\" \"$O/member\"; "
         "echo \"old data: $O/member\"; fi\n"
         "mv -T \"$N/member\" \"$D/member\"; echo \"restored data: $D/member\"\n";
}

std::string restore_start_script(const RestoreLayout& l) {
  return "set -e\n"
         "M=/etc/kubernetes/manifests; S=" +
         restore_q(l.stash) +
         "\n"
         "[ -d \"$S\" ] || { echo 'manifests in place'; exit 0; }\n"
         "mkdir -p \"$M\"\n"
         "for f in \"$S\"/*.yaml; do [ -e \"$f\" ] || continue; mv -f \"$f\" \"$M/\"; "
         "echo \"moved back ${f##*/}\"; done\n"
         "rmdir \"$S\"\n";
}

std::string restore_cleanup_script(const RestoreLayout& l) {
  return "rm -f " + restore_q(l.snapshot) + " " + restore_q(l.snapshot) + ".tmp.*\n" + "rmdir " +
         restore_q(l.new_dir) + " 2>/dev/null; true\n";
}

UseCaseResult<RestorePlan> plan_restore(const RestoreRequest& r, const RestoreDeps& deps) {
  RestorePlan plan;
  plan.request = r;
  plan.deps = deps;
  // The archive first: nothing is contacted for an archive that is refused.
  auto archive = read_backup_archive_file(r.from);
  if (!archive.ok()) return UseCaseError{std::move(archive).error()};
  auto sha = restore_file_sha256(r.from);
  if (!sha.ok()) return input_error("restore: " + sha.error().message);
  plan.archive_sha256 = std::move(sha).value();
  plan.archive = std::make_shared<const BackupArchive>(std::move(archive).value());
  const BackupManifest& m = plan.archive->manifest;
  if (!plan.archive->members.count(kSnapshotMember))
    return input_error("restore: " + r.from + " holds no etcd snapshot (" + kSnapshotMember + ")");

  PrepareRequest pr;
  pr.cluster_dir = r.cluster_dir;
  pr.wait_s = r.wait_s;
  pr.templates_dir = r.templates_dir;
  auto p = prepare_cluster(pr, deps.install.load_hosts);
  if (!p.ok()) return std::move(p).error();
  plan.cluster = std::make_shared<const PreparedCluster>(std::move(p).value());
  const PreparedCluster& c = *plan.cluster;

  // The archive's cluster against the directory's.
  std::vector<BackupHost> masters, nodes;
  for (const auto& s : c.specs) {
    if (s.master) masters.push_back({s.name, s.address});
    if (!s.master || s.worker) nodes.push_back({s.name, s.address});
  }
  if (m.cluster != c.settings.cluster_name)
    plan.mismatches.push_back("the archive is of cluster \"" + m.cluster + "\", " + c.cluster_dir +
                              " is \"" + c.settings.cluster_name + "\"");
  if (restore_host_set(m.masters) != restore_host_set(masters))
    plan.mismatches.push_back("the masters differ: archive " +
                              util::join(restore_host_set(m.masters), ", ") + "; " + c.cluster_dir +
                              " " + util::join(restore_host_set(masters), ", "));
  if (restore_host_set(m.nodes) != restore_host_set(nodes))
    plan.mismatches.push_back("the nodes differ: archive " +
                              util::join(restore_host_set(m.nodes), ", ") + "; " + c.cluster_dir +
                              " " + util::join(restore_host_set(nodes), ", "));
  if (!plan.mismatches.empty() && !r.force_other_cluster)
    return input_error("restore: " + r.from + " is not a backup of the cluster of " +
                           c.cluster_dir + ": " + util::join(plan.mismatches, "; "),
                       "nothing was changed; --force-other-cluster restores it anyway");

  // HiveD, when the archive has its config: where its inspect API is asked.
  if (plan.archive->members.count(kHivedMember))
    plan.hived_url = !r.hived.empty() ? r.hived
                                      : "http://" + c.master()->address + ":" +
                                            std::to_string(c.settings.openpai.hived_port);

  // An unfinished restore of this cluster directory.
  std::string jpath = restore_journal_path(c.cluster_dir);
  auto jtext = util::read_file_if_present(jpath);
  if (!jtext.ok()) return input_error("restore: " + jpath + ": " + jtext.error().message);
  if (*jtext) {
    auto j = parse_restore_journal(**jtext);
    if (!j.ok()) return input_error("restore: " + jpath + ": " + j.error().message, j.error().hint);
    if (!j->finished) {
      if (j->archive_sha256 != plan.archive_sha256)
        return input_error("restore: an unfinished restore of " + j->archive + " (stamp " + j->ts +
                               ") is recorded in " + jpath,
                           "finish it first: paictl restore " + c.cluster_dir + " --from " +
                               j->archive + " --yes");
      plan.resume = std::move(j).value();
    } else if (j->archive_sha256 == plan.archive_sha256 && !r.again) {
      plan.already = std::move(j).value();
      plan.replaces.push_back("nothing: this archive was restored already (stamp " +
                              plan.already->ts + "); --again restores it again");
      return plan;
    }
  }

  // The master, read only.
  const HostSpec& master = *c.master();
  auto transport = make_transport(deps.install.transport, c.hosts.ssh_password);
  restore_progress(deps, "inspect", master.name);
  auto sums = restore_run(*transport, master, kRestorePkiSums, {}, 120000);
  if (!sums.ok() || sums.exit_status != 0)
    return restore_remote("reading /etc/kubernetes/pki", master, sums);
  plan.pki_differ = restore_pki_differ(*plan.archive, sums.out);
  if (plan.resume) {
    plan.etcd = plan.resume->etcd;
  } else {
    auto x = run_on_master(*transport, master, inspect_script(c.settings.openpai.ns));
    if (!x.ok() || x.exit_status != 0)
      return restore_remote("reading the cluster (kubectl)", master, x);
    auto ins = parse_inspection(x.out, master);
    if (!ins.ok()) return remote_error("restore: " + ins.error().message);
    plan.etcd = ins->etcd;
    auto had = plan.archive->members.find(kHivedMember);
    plan.hived_differs = (had == plan.archive->members.end()) != ins->hived_configmap.empty() ||
                         (had != plan.archive->members.end() &&
                          restore_cm_data(had->second) != restore_cm_data(ins->hived_configmap));
  }
  for (const auto& [name, content] : plan.archive->members) {
    if (name.rfind("cluster/", 0) != 0) continue;
    auto local = util::read_file_if_present(c.cluster_dir + "/" + name.substr(8));
    if (!local.ok() || !*local || **local != content) plan.cluster_files_differ.push_back(name);
  }

  const auto& e = plan.etcd;
  plan.replaces.push_back("etcd data of " + master.name + ": " + e.data_dir +
                          "/member replaced by the snapshot of " + m.time_utc + " (" +
                          std::to_string(m.namespaces.size()) + " namespaces, " +
                          std::to_string(m.configmaps.size()) +
                          " ConfigMaps recorded); the old data kept as .before-restore-TS");
  plan.replaces.push_back("control plane of " + master.name +
                          ": stopped (static pod manifests moved out) and started again");
  plan.replaces.push_back(plan.pki_differ.empty()
                              ? "PKI: the same as the archive's, left as it is"
                              : "PKI files that differ: " + util::join(plan.pki_differ, ", "));
  plan.replaces.push_back(plan.cluster_files_differ.empty()
                              ? "cluster files: " + c.cluster_dir + "'s are the archive's"
                              : "cluster files of " + c.cluster_dir +
                                    " that differ (old ones kept as FILE.before-restore-TS): " +
                                    util::join(plan.cluster_files_differ, ", "));
  plan.replaces.push_back(
      std::string("HiveD config (ConfigMap hivedscheduler-config): ") +
      (plan.archive->members.count(kHivedMember)
           ? (plan.hived_differs ? "differs, the snapshot's comes back with etcd"
                                 : "the same as the archive's")
           : "none in the archive"));
  plan.replaces.push_back("database: " +
                          (m.database.empty() ? std::string("none found") : m.database));
  plan.replaces.push_back(
      plan.hived_url.empty()
          ? std::string("HiveD: no HiveD config in the archive, HiveD is not checked")
          : "HiveD: checked after the restore at " + http::redact_url(plan.hived_url) +
                ": /v1/inspect/clusterstatus must answer within " + std::to_string(r.wait_s) +
                " s with the restored config's cells, nodes and VCs");
  if (plan.resume)
    plan.replaces.push_back(
        "resuming the restore of stamp " + plan.resume->ts + " (done: " +
        (plan.resume->done.empty() ? std::string("nothing") : util::join(plan.resume->done, ", ")) +
        ")");
  return plan;
}

RestoreOutcome apply_restore(const RestorePlan& plan) {
  RestoreOutcome o;
  const PreparedCluster& c = *plan.cluster;
  const HostSpec& master = *c.master();
  const BackupArchive& a = *plan.archive;
  const auto& deps = plan.deps;
  util::Clock clock = restore_clock(deps);
  auto transport = make_transport(deps.install.transport, c.hosts.ssh_password);
  std::string jpath = restore_journal_path(c.cluster_dir);

  RestoreJournal j;
  if (plan.resume) {
    j = *plan.resume;
  } else {
    double now =
        deps.now
            ? deps.now()
            : std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
    j.ts = util::format_utc(static_cast<std::time_t>(now), "%Y%m%dT%H%M%SZ");
    j.archive = plan.request.from;
    j.archive_sha256 = plan.archive_sha256;
    j.etcd = plan.etcd;
    // Where NEW and OLD go: on DATA's file system.
    auto x = restore_run(*transport, master,
                         "D=" + restore_q(plan.etcd.data_dir) +
                             "; mkdir -p \"$D\"; "
                             "if [ \"$(stat -c %d \"$D\")\" != \"$(stat -c %d \"$D/..\")\" ]; "
                             "then echo inside; else echo sibling; fi\n",
                         {}, 60000);
    if (!x.ok() || x.exit_status != 0) {
      o.error = restore_remote("looking at " + plan.etcd.data_dir, master, x);
      return o;
    }
    j.layout = restore_layout(plan.etcd.data_dir, j.ts, util::trim(x.out) == "inside");
  }
  o.ts = j.ts;
  o.layout = j.layout;
  const RestoreLayout& l = j.layout;
  auto save = [&]() -> bool {
    (void)util::make_directories(c.cluster_dir + "/.paictl", 0700);
    auto w = util::write_file_atomic(jpath, restore_journal_json(j), 0600);
    if (!w.ok()) o.error = input_error("restore: " + w.error().message);
    return w.ok();
  };
  if (!save()) return o;

  const char* kubectl = "kubectl --kubeconfig /etc/kubernetes/admin.conf ";
  // Polls `script` until its exit status is (or is not) 0, within wait_s.
  auto wait_for = [&](const std::string& script, bool want_ok, const std::string& what) -> bool {
    double until = clock.now() + plan.request.wait_s;
    for (;;) {
      auto x = restore_run(*transport, master, script, {}, 30000);
      if (!x.ok() && x.failure != remote::Failure::CommandTimeout) {
        o.error = restore_remote(what, master, x);
        return false;
      }
      bool good = x.ok() && x.exit_status == 0;
      if (good == want_ok) return true;
      if (clock.now() >= until) {
        o.error = remote_error("restore: " + what + " on " + master.name + ": still not so after " +
                                   std::to_string(plan.request.wait_s) + " s",
                               "run the same command again: the restore resumes where it stopped");
        return false;
      }
      clock.sleep(1.0);
    }
  };
  auto step_ok = [&](const remote::ExecResult& x, const std::string& what) -> bool {
    if (x.ok() && x.exit_status == 0) return true;
    o.error = restore_remote(what, master, x);
    return false;
  };
  std::string etcd_health =
      etcdctl_prelude(j.etcd.endpoint, 3) + "$E endpoint health >/dev/null 2>&1\n";
  std::string api_ready = std::string(kubectl) + "get --raw /readyz >/dev/null 2>&1\n";

  for (const auto& step : restore_steps()) {
    if (std::find(j.done.begin(), j.done.end(), step) != j.done.end()) {
      o.skipped.push_back(step);
      continue;
    }
    restore_progress(deps, step, "");
    bool ok = true;
    if (step == "upload") {
      const std::string& snap = a.members.at(kSnapshotMember);
      std::string sha;
      for (const auto& mi : a.manifest.members)
        if (mi.name == kSnapshotMember) sha = mi.sha256;
      ok = step_ok(restore_run(*transport, master, restore_upload_script(l, sha), snap),
                   "copying the snapshot to " + l.snapshot);
    } else if (step == "etcd-restore") {
      ok = step_ok(restore_run(*transport, master, restore_etcd_script(l, j.etcd)),
                   "etcdctl snapshot restore into " + l.new_dir);
    } else if (step == "stop") {
      ok = step_ok(restore_run(*transport, master, restore_stop_script(l)),
                   "moving the static pod manifests to " + l.stash) &&
           wait_for(etcd_health, false, "waiting for etcd to stop") &&
           wait_for(api_ready, false, "waiting for the API server to stop");
    } else if (step == "swap") {
      auto x = restore_run(*transport, master, restore_swap_script(l));
      ok = step_ok(x, "swapping " + l.data_dir + "/member");
      if (ok) {
        std::vector<std::string> lines;
        for (auto line : util::split(util::trim(x.out), '\n')) lines.emplace_back(line);
        restore_progress(deps, step, util::join(lines, "; "));
      }
    } else if (step == "pki") {
      auto sums = restore_run(*transport, master, kRestorePkiSums, {}, 120000);
      ok = step_ok(sums, "reading /etc/kubernetes/pki");
      if (ok)
        for (const auto& name : restore_pki_differ(a, sums.out)) {
          std::string path = "/etc/kubernetes/" + name;
          std::string mode =
              name.size() > 4 && name.substr(name.size() - 4) == ".key" ? "600" : "644";
          std::string dir = path.substr(0, path.rfind('/'));
          std::string script = "set -e; umask 077; mkdir -p " + restore_q(dir) +
                               "; T=" + restore_q(path) + ".tmp.$$; cat > \"$T\"; chmod " + mode +
                               " \"$T\"; mv -f \"$T\" " + restore_q(path) + "\n";
          if (!(ok = step_ok(restore_run(*transport, master, script, a.members.at(name)),
                             "writing " + path)))
            break;
          o.pki_restored.push_back(name);
        }
    } else if (step == "start") {
      ok = step_ok(restore_run(*transport, master, restore_start_script(l)),
                   "moving the static pod manifests back from " + l.stash) &&
           wait_for(etcd_health, true, "waiting for etcd") &&
           wait_for(api_ready, true, "waiting for the API server");
    } else if (step == "database") {
      auto dump = a.members.find("database/postgresql.sql");
      if (dump != a.members.end())
        ok = step_ok(restore_run(*transport, master,
                                 std::string(kubectl) + "-n " + restore_q(c.settings.openpai.ns) +
                                     " exec -i daemonset/postgresql -- psql -q -U postgres "
                                     "postgres >/dev/null\n",
                                 dump->second),
                     "restoring the database (psql)");
    } else if (step == "cluster-files") {
      for (const auto& [name, content] : a.members) {
        if (name.rfind("cluster/", 0) != 0) continue;
        std::string path = c.cluster_dir + "/" + name.substr(8);
        auto local = util::read_file_if_present(path);
        if (local.ok() && *local && **local == content) continue;
        if (local.ok() && *local) {
          auto keep = util::write_file_atomic(path + ".before-restore-" + j.ts, **local, 0600);
          if (!keep.ok()) {
            o.error = input_error("restore: " + keep.error().message);
            ok = false;
            break;
          }
        }
        auto w = util::write_file_atomic(path, content, secret_file(name.substr(8)) ? 0600 : 0644);
        if (!w.ok()) {
          o.error = input_error("restore: " + w.error().message);
          ok = false;
          break;
        }
        o.files_replaced.push_back(path);
      }
    } else if (step == "verify") {
      auto x = run_on_master(*transport, master, inspect_script(c.settings.openpai.ns));
      ok = step_ok(x, "reading the restored cluster (kubectl)");
      if (ok) {
        auto ins = parse_inspection(x.out, master);
        if (!ins.ok()) {
          o.error = remote_error("restore: " + ins.error().message);
          ok = false;
        } else {
          std::set<std::string> ns(ins->namespaces.begin(), ins->namespaces.end());
          std::set<std::string> cms(ins->configmaps.begin(), ins->configmaps.end());
          for (const auto& n : a.manifest.namespaces)
            if (!ns.count(n)) o.missing.push_back("namespace " + n);
          for (const auto& n : a.manifest.configmaps)
            if (!cms.count(n)) o.missing.push_back("configmap " + n);
          auto had = a.members.find(kHivedMember);
          if (had != a.members.end() &&
              restore_cm_data(had->second) != restore_cm_data(ins->hived_configmap))
            o.missing.push_back("the HiveD ConfigMap's data (it differs from the archive's)");
          if (!o.missing.empty()) {
            o.checks.push_back({"objects", RestoreCheck::Result::Failed,
                                "missing: " + util::join(o.missing, ", ")});
            o.error = other_error(
                "restore: after the restore, " + master.name +
                    "'s cluster lacks what the backup recorded: " + util::join(o.missing, ", "),
                "the old data is kept in " + l.old_dir);
            ok = false;
          } else {
            o.checks.push_back(
                {"objects", RestoreCheck::Result::Verified,
                 std::to_string(a.manifest.namespaces.size()) + " namespaces, " +
                     std::to_string(a.manifest.configmaps.size()) + " ConfigMaps" +
                     (a.members.count(kHivedMember) ? ", the HiveD ConfigMap's data" : "")});
          }
        }
      }
    } else if (step == "hived") {
      auto had = a.members.find(kHivedMember);
      auto model = had == a.members.end() ? nullptr : restore_hived_model(had->second);
      if (plan.hived_url.empty()) {
        o.checks.push_back({"hived", RestoreCheck::Result::Skipped,
                            "no HiveD config in the archive: HiveD is not checked"});
      } else if (!model) {
        o.checks.push_back({"hived", RestoreCheck::Result::Skipped,
                            "the archive's HiveD config does not build a HiveD model: HiveD at " +
                                http::redact_url(plan.hived_url) + " is not checked"});
      } else {
        auto h = hived_http_client(deps.hived_http, nullptr);
        std::string url = http::redact_url(plan.hived_url);
        auto answer = restore_ask_hived(*h, plan.hived_url, *model, plan.request.wait_s, clock);
        std::string hint =
            "HiveD restarts with its ConfigMap: " + std::string(kubectl) + "-n " +
            c.settings.openpai.ns + " get pods -l app=hivedscheduler-hs on " + master.name +
            "; --hived URL names its inspect API; run the same command again: the restore "
            "resumes with HiveD's check";
        if (answer.matches) {
          o.checks.push_back({"hived", RestoreCheck::Result::Verified,
                              url + " answers with the restored config (" +
                                  hived::config_shape_text(answer.seen) + ")"});
        } else if (!answer.answered) {
          o.checks.push_back({"hived", RestoreCheck::Result::Failed,
                              url + " did not answer: " + answer.last_error});
          o.error = remote_error("restore: HiveD at " + url +
                                     " did not answer /v1/inspect/clusterstatus within " +
                                     std::to_string(plan.request.wait_s) +
                                     " s after the restore: " + answer.last_error,
                                 hint);
          ok = false;
        } else {
          o.checks.push_back(
              {"hived", RestoreCheck::Result::Failed,
               url + " runs another config (" + hived::config_shape_text(answer.seen) +
                   "; the restored one: " + hived::config_shape_text(answer.wanted) + ")"});
          o.error = other_error(
              "restore: HiveD at " + url + " runs another config than the restored one after " +
                  std::to_string(plan.request.wait_s) + " s: it has " +
                  hived::config_shape_text(answer.seen) + "; the restored config has " +
                  hived::config_shape_text(answer.wanted),
              hint);
          ok = false;
        }
      }
      if (ok) restore_progress(deps, step, o.checks.back().detail);
    } else if (step == "cleanup") {
      ok = step_ok(restore_run(*transport, master, restore_cleanup_script(l)),
                   "removing " + l.snapshot);
    }
    if (!ok) {
      (void)save();
      return o;
    }
    o.ran.push_back(step);
    j.done.push_back(step);
    if (step == "cleanup") j.finished = true;
    if (!save()) return o;
  }
  // Every step done, this run or an earlier one: the checks of `verify` and
  // `hived` passed.
  o.verified = true;
  return o;
}

}  // namespace pai::deploy

// paictl hived diff OLD NEW and paictl hived snapshot: what a HiveD config
// change does to the running cluster (lib/hived/diff.h), and the saved live
// state it can be computed from offline.

#include <chrono>
#include <cstdio>

#include "app.h"
#include "command.h"
#include "config/cluster_files.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cmd_hived_common.h"
#include "hived/cmd_hived_diff.h"
#include "hived/diff.h"
#include "hived/diff_json.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "output/output.h"
#include "output/printer.h"
#include "sim/cmd_simulate.h"
#include "sim/forecast.h"
#include "sim/forecast_input.h"
#include "util/fs.h"

namespace paictl {

namespace hivedcli {

// A snapshot is HiveD's affinity groups: megabytes for the largest clusters.
constexpr size_t kHivedSnapshotMaxBytes = 64u << 20;

std::string change_text(int64_t before, int64_t after) {
  if (before == after) return "";
  return (after > before ? "+" : "") + std::to_string(after - before);
}

std::string effect_text(pai::hived::GroupEffect e) {
  switch (e) {
    case pai::hived::GroupEffect::Keeps:
      return "keeps running";
    case pai::hived::GroupEffect::LazilyPreempted:
      return "lazily preempted";
    case pai::hived::GroupEffect::OnRemovedCells:
      return "on removed cells";
  }
  return "";
}

Json diff_document(const DiffInput& in, const pai::hived::ConfigDiff& d) {
  return document("hivedDiff", pai::hived::diff_json(in, d));
}

std::string diff_text(const DiffInput& in, const pai::hived::ConfigDiff& d, bool wide) {
  std::string out;
  Table vcs({{"VC"},
             {"CELL TYPE"},
             {"SKU"},
             {"BEFORE", false, true},
             {"AFTER", false, true},
             {"CHANGE", false, true},
             {"LEAF CELLS", false, true}});
  for (const auto& v : d.vcs) {
    if (!wide && !v.changed() && v.before == 0) continue;
    std::string leaves =
        v.leaves_before == v.leaves_after
            ? std::to_string(v.leaves_after)
            : std::to_string(v.leaves_before) + " -> " + std::to_string(v.leaves_after);
    vcs.add({v.vc, v.cell_type.empty() ? "-" : v.cell_type, v.sku.empty() ? "-" : v.sku,
             std::to_string(v.before), std::to_string(v.after), change_text(v.before, v.after),
             leaves});
  }
  out += render_table(vcs, wide);
  Table pinned({{"PINNED CELL"}, {"VC"}, {"ADDRESS"}, {"CHANGE"}});
  for (const auto& p : d.pinned) {
    if (p.change == "unchanged" && !wide) continue;
    std::string vc = p.vc_before == p.vc_after ? p.vc_before
                     : p.vc_before.empty()     ? p.vc_after
                     : p.vc_after.empty()      ? p.vc_before
                                               : p.vc_before + " -> " + p.vc_after;
    std::string addr = p.address_before == p.address_after ? p.address_before
                       : p.address_before.empty()          ? p.address_after
                       : p.address_after.empty()           ? p.address_before
                                                 : p.address_before + " -> " + p.address_after;
    pinned.add({p.id, vc.empty() ? "-" : vc, addr.empty() ? "-" : addr, p.change});
  }
  if (!pinned.rows.empty()) out += "\n" + render_table(pinned, wide);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  if (!d.nodes_removed.empty())
    out += "\nnodes removed (" + std::to_string(d.nodes_removed.size()) +
           "): " + join(d.nodes_removed) + "\n";
  if (!d.nodes_added.empty())
    out += "\nnodes added (" + std::to_string(d.nodes_added.size()) + "): " + join(d.nodes_added) +
           "\n";
  Table groups({{"GROUP"},
                {"VC"},
                {"PRIORITY", false, true},
                {"GPUS", false, true},
                {"AFTER RESTART"},
                {"REASON"}});
  for (const auto& gc : d.groups) {
    if (gc.effect == pai::hived::GroupEffect::Keeps && !wide) continue;
    groups.add({gc.name, gc.vc, std::to_string(gc.priority), std::to_string(gc.leaves),
                effect_text(gc.effect), gc.reason.empty() ? "-" : gc.reason});
  }
  if (!groups.rows.empty()) out += "\n" + render_table(groups, wide);
  out += "\n";
  if (in.source == "none") {
    out += "No running groups were considered (give --live or --snapshot FILE).\n";
  } else {
    auto are = [](int64_t n) { return std::to_string(n) + (n == 1 ? " is" : " are"); };
    out +=
        "After HiveD restarts on " + in.new_path + ": " + std::to_string(d.keeps) + " of " +
        std::to_string(d.groups.size()) + " groups keep running as they do, " +
        are(d.lazily_preempted) + " lazily preempted (" + std::to_string(d.guaranteed_preempted) +
        " of them " + (d.guaranteed_preempted == 1 ? "runs" : "run") + " guaranteed now), " +
        are(d.on_removed_cells) + " left on removed cells; groups from " + in.source_detail + ".\n";
  }
  out += d.changes() ? "The new config changes the cluster.\n" : "No changes.\n";
  return out;
}

std::optional<DiffInput> load_diff_input(const std::string& old_path, const std::string& new_path,
                                         bool live, const std::string& snapshot,
                                         const HivedOptions& h, const Globals& g, int& rc) {
  DiffInput in;
  in.old_path = old_path;
  in.new_path = new_path;
  // The new config first: it is what will run.
  in.new_model = load_model(new_path, g);
  if (!in.new_model) {
    rc = kExitFindings;
    return std::nullopt;
  }
  in.old_model = load_model(old_path, g);
  if (!in.old_model) {
    rc = kExitFindings;
    return std::nullopt;
  }
  std::optional<pai::hived::LiveState> state;
  if (live) {
    auto conn = connect_hived(h, g);
    if (!conn) {
      rc = kExitUsage;
      return std::nullopt;
    }
    state = read_live(*conn, rc);
    if (!state) return std::nullopt;
    in.source = "live";
    in.source_detail = "the live HiveD at " + conn->where;
  } else if (!snapshot.empty()) {
    auto text = pai::util::read_file(snapshot, kHivedSnapshotMaxBytes);
    if (!text.ok()) {
      print_error("cannot read the snapshot " + snapshot + ": " + text.error().message);
      rc = kExitUsage;
      return std::nullopt;
    }
    auto snap = pai::hived::parse_snapshot(*text);
    if (!snap.ok()) {
      print_error(snapshot + ": " + snap.error().message);
      std::fprintf(stderr, "  hint: write one with paictl hived snapshot --out FILE\n");
      rc = kExitUsage;
      return std::nullopt;
    }
    state = pai::hived::index_live(std::move(snap->status), std::move(snap->groups));
    for (const auto& w : state->warnings) print_warning(w);
    in.source = "snapshot";
    in.source_detail = "the snapshot " + snapshot;
  } else {
    in.source = "none";
    in.source_detail = "none";
  }
  if (state) {
    in.groups = pai::hived::live_groups(*state, in.old_model.get());
    in.bad = pai::hived::bad_nodes(*state);
  }
  return in;
}

}  // namespace hivedcli

namespace {

using namespace hivedcli;

// --forecast: the live state played forward under OLD and under NEW (lib/sim/forecast.h),
// with the running jobs' expected ends and the waiting jobs from the cluster's job list.
std::optional<pai::sim::ForecastResult> diff_forecast(const DiffOptions& o, const DiffInput& in,
                                                      const Globals& g, int& rc) {
  auto conn = connect_hived(o.h, g);
  if (!conn) {
    rc = kExitUsage;
    return std::nullopt;
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto live = pai::sim::read_forecast_input(
      *conn->client, conn->rest ? conn->rest->api.get() : nullptr, now, std::nullopt, 3600);
  if (!live.ok()) {
    print_error("HiveD at " + conn->where + ": " + live.error().message);
    rc = kExitRemote;
    return std::nullopt;
  }
  for (const auto& w : live->warnings) print_warning(w);
  pai::sim::ForecastRequest req;
  req.current = in.old_model;
  req.proposed = in.new_model;
  req.current_name = in.old_path;
  req.proposed_name = in.new_path;
  req.state = std::move(live->state);
  req.state.source = "the live HiveD at " + conn->where;
  Usage checked;
  req.horizon_s = validate_horizon(o.horizon, checked).value();  // validated
  auto r = pai::sim::forecast(req);
  if (!r.ok()) {
    print_error("forecast: " + r.error().message);
    rc = kExitFindings;
    return std::nullopt;
  }
  return std::move(*r);
}

int run_diff(const DiffOptions& o, const Globals& g) {
  int rc = kExitOk;
  auto in = load_diff_input(o.old_path, o.new_path, o.live, o.snapshot, o.h, g, rc);
  if (!in) return rc;
  auto diffed = pai::hived::diff_configs(*in->old_model, *in->new_model, in->groups, in->bad);
  if (!diffed) {
    print_error(diffed.error().message);
    return kExitFindings;
  }
  const auto& d = diffed.value();
  for (const auto& w : d.warnings) print_warning(w);
  std::optional<pai::sim::ForecastResult> fc;
  if (o.forecast) {
    fc = diff_forecast(o, *in, g, rc);
    if (!fc) return rc;
  }
  if (is_structured(o.h.output)) {
    Json doc = diff_document(*in, d);
    if (fc) doc["forecast"] = Json(pai::sim::forecast_json(*fc));
    print_document(doc, o.h.output);
  } else {
    std::string text = diff_text(*in, d, o.h.output == "wide");
    if (fc) text += "\n" + pai::sim::forecast_text(*fc);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return d.changes() ? kExitChanges : kExitOk;
}

struct SnapshotOptions {
  HivedOptions h;
  std::string out;
};

int run_snapshot(const SnapshotOptions& o, const Globals& g) {
  auto conn = connect_hived(o.h, g);
  if (!conn) return kExitUsage;
  int rc = kExitOk;
  auto live = read_live(*conn, rc);
  if (!live) return rc;
  Json doc = document("hivedSnapshot", {{"hived", conn->client->base()},
                                        {"clusterStatus", pai::hived::to_json(live->status)},
                                        {"affinityGroups", pai::hived::to_json(live->groups)}});
  if (o.out.empty()) {
    print_document(doc, o.h.output == "yaml" ? "yaml" : "json");
    return kExitOk;
  }
  auto err = pai::util::write_file_atomic(o.out, doc.dump(1) + "\n");
  if (!err.ok()) {
    print_error(err.error().message);
    return kExitUsage;
  }
  if (!g.quiet)
    std::fprintf(stderr, "saved %zu affinity groups and %zu nodes of %s to %s\n",
                 live->groups.size(), live->nodes.size(), conn->where.c_str(), o.out.c_str());
  return kExitOk;
}

}  // namespace

void hivedcli::validate_hived_diff(const DiffOptions& o, Usage& u) {
  u.error_if(o.forecast && !o.live, "--forecast plays the live state forward: give --live too");
  if (o.forecast) validate_horizon(o.horizon, u);
  u.error_if(o.live && !o.snapshot.empty(),
             "--live and --snapshot both name the running groups; give one of them");
  if (!o.snapshot.empty()) {
    auto ok = pai::util::check_regular_file(o.snapshot, kHivedSnapshotMaxBytes);
    u.error_if(!ok.ok(),
               "cannot read the snapshot " + o.snapshot + ": " +
                   (ok.ok() ? std::string() : ok.error().message),
               "write one with paictl hived snapshot --out FILE");
  }
  validate_hived_flags(o.h, u);
}

void build_hived_diff(Flags& cmd, Globals& g) {
  auto o = std::make_shared<DiffOptions>();
  cmd.add_option("OLD", o->old_path, "The HiveD config HiveD runs now (cluster directory or file)")
      ->required();
  cmd.add_option("NEW", o->new_path, "The new HiveD config (cluster directory or file)")
      ->required();
  add_hived_flags(&cmd, o->h, g);
  cmd.add_flag("--live", o->live, "Take the running groups and bad nodes from the live HiveD");
  cmd.add_option("--snapshot", o->snapshot,
                 "Take them from a file written by paictl hived snapshot (default: none)")
      ->type_name("FILE");
  cmd.add_flag("--forecast", o->forecast,
               "With --live: also the next --horizon of the live state under OLD and under NEW "
               "(per VC waits, preemptions and GPU use; as simulate --from-live)");
  cmd.add_option("--horizon", o->horizon, "How far --forecast looks ahead")
      ->type_name("DURATION")
      ->capture_default_str();
  cmd.add_flag("--detailed-exitcode", o->detailed_exitcode,
               "Exit 0 when nothing changes, 2 when the new config changes the cluster, 1 on "
               "errors");
  cmd.footer(
      "HiveD reads its config only when it starts, and rebuilds its state from the running\n"
      "pods at the restart. The diff runs that rebuild on OLD and on NEW with the same running\n"
      "groups and bad nodes: per VC the guaranteed cells before and after, pinned cells that\n"
      "go, come or move, nodes removed or added, and per group whether it keeps running as it\n"
      "does, is lazily preempted (runs on at opportunistic priority) or is left on removed\n"
      "cells (runs on, HiveD ignores them). Both configs are checked first, as check config\n"
      "checks them; errors stop the diff. Without --live or --snapshot no running group is\n"
      "considered. -o wide also lists unchanged rows and the groups that keep running.\n\n"
      "EXIT STATUS:\n  0 ok, 1 a config has errors, 2 bad usage, 3 HiveD could not be read;\n"
      "  with --detailed-exitcode: 0 no changes, 2 changes, 1 any error\n");
  define_command(cmd, g, o, {.validate = validate_hived_diff, .run = [](const auto& o, Globals& g) {
                               int rc = run_diff(o, g);
                               print_timing(g);
                               return rc;
                             }});
}

void build_hived_snapshot(Flags& cmd, Globals& g) {
  auto o = std::make_shared<SnapshotOptions>();
  add_hived_flags(&cmd, o->h, g, false);
  cmd.add_option("--out", o->out, "Write it to FILE (atomically) instead of stdout")
      ->type_name("FILE");
  cmd.footer(
      "The live state in HiveD's own shapes (the answers of /v1/inspect/clusterstatus and\n"
      "/v1/inspect/affinitygroups/), as JSON, for hived diff --snapshot.\n\n"
      "EXIT STATUS:\n  0 ok, 2 bad usage or the file cannot be written, 3 HiveD could not be "
      "read\n");
  define_command(
      cmd, g, o,
      {.validate = [](const SnapshotOptions& o, Usage& u) { validate_hived_flags(o.h, u); },
       .run = [](const auto& o, Globals& g) { return run_snapshot(o, g); }});
}

}  // namespace paictl

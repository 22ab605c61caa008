// paictl plan: hardware facts or machine profiles -> layout.yaml, HiveD cells, virtual clusters.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "command.h"
#include "data_dirs.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "plan/cmd_plan.h"
#include "planner/diagram.h"
#include "planner/init.h"
#include "planner/plan_output.h"
#include "planner/plan_run.h"
#include "planner/profiles.h"
#include "planner/unified_diff.h"
#include "util/fs.h"
#include "util/strings.h"
#include "util/yaml_emit.h"

namespace paictl {

namespace {

// --layouts, else $PAICTL_LAYOUTS, else the installed share/paictl/layouts, else the
// source tree's layouts/ when run from a build tree, else ./layouts.
std::string find_layouts(const std::string& flag) {
  return find_data_dir(flag, "PAICTL_LAYOUTS", "layouts");
}

int run(const PlanCliOptions& o, const Globals& g) {
  using namespace pai::planner;
  const std::string& layouts = o.layouts;  // complete_plan: the one to use
  if (o.list_profiles) {
    Json items = Json::array();
    Table t({{"NAME"}, {"DESCRIPTION"}});
    for (const auto& name : list_profiles(layouts)) {
      pai::diag::List ignore;
      auto p = load_profile(layouts, name, ignore);
      items.push_back({{"name", name}, {"description", p ? Json(p->description) : Json(nullptr)}});
      t.add({name, p ? p->description : "(unreadable)"});
    }
    if (is_structured(o.output))
      print_document(list_document("profileList", items), o.output);
    else
      print_table(t);
    return kExitOk;
  }
  // "cluster/" and "cluster" name the same files: no "cluster//layout.yaml" in messages.
  std::string out_dir = o.out;
  while (out_dir.size() > 1 && out_dir.back() == '/') out_dir.pop_back();
  PlanInputs in;
  in.facts_dirs = o.facts_positional;
  in.facts_dirs.insert(in.facts_dirs.end(), o.facts.begin(), o.facts.end());
  in.layouts_dir = layouts;
  in.profiles = o.profile_counts;
  in.options.odd_hosts = o.odd_hosts == "exclude" ? OddHosts::Exclude : OddHosts::Split;
  in.options.vcs = o.vcs;
  in.options.vc_cells = o.vc_cells == "any" ? VcCells::Any : VcCells::Node;
  in.options.master = o.master;
  in.options.reserve_cpu = o.reserve_cpu;
  if (!o.reserve_memory.empty())
    in.options.reserve_memory =
        static_cast<int64_t>(*pai::util::parse_quantity(o.reserve_memory));  // validate_plan

  PlanRun r = plan_from_inputs(in);
  if (!r.ok()) {
    print_findings_stderr(r.diagnostics, g);
    print_error("nothing planned: fix the errors above");
    return kExitUsage;
  }

  // The files, checked exactly as `paictl check config` would.
  pai::diag::List check = check_plan_files(r.plan);
  if (check.has_errors()) {
    print_findings_stderr(check, g);
    print_error(
        "internal error: the planned files do not pass paictl check config; please report it");
    return kExitFindings;
  }
  std::string existing_services;
  if (!o.out.empty()) {
    auto rd = pai::util::read_file(out_dir + "/services-configuration.yaml");
    if (rd.ok()) existing_services = *rd;
  }
  PlanFiles files = render_files(r.plan, existing_services);
  std::vector<std::pair<std::string, const std::string*>> outputs = {
      {"layout.yaml", &files.layout},
      {"hivedscheduler.yaml", &files.hived},
      {"services-configuration.yaml", &files.services}};
  // A new cluster directory gets a config.yaml too (install reads it); an existing
  // one is the operator's and stays as it is.
  std::string config_yaml;
  if (!o.out.empty() && !pai::util::path_exists(out_dir + "/config.yaml")) {
    int m = r.plan.master_host();
    config_yaml = render_cluster_config(
        ClusterSettings{}, m >= 0 ? r.plan.hosts[static_cast<size_t>(m)].facts.hostip : "");
    outputs.push_back({"config.yaml", &config_yaml});
  }

  nlohmann::ordered_json changes = nlohmann::ordered_json::object();
  bool changed = false;
  if (!o.out.empty()) {
    for (const auto& [name, content] : outputs) {
      std::string path = out_dir + "/" + name;
      auto old = pai::util::read_file(path);
      std::string before = old.ok() ? *old : std::string();
      std::string d = unified_diff(before, *content, old.ok() ? path : "/dev/null", path);
      if (!d.empty()) changed = true;
      changes[name] = d;
    }
  }

  if (o.dry_run) {
    if (!is_structured(o.output)) {
      for (const auto& [name, content] : outputs) {
        const std::string d = changes[name].get<std::string>();
        std::fwrite(d.data(), 1, d.size(), stdout);
      }
      if (!g.quiet)
        std::fprintf(
            stderr, "dry run: %s; nothing written\n",
            changed ? "the files above would change" : "the files in --out are up to date");
    }
  } else if (!o.out.empty()) {
    if (auto err = pai::util::make_directories(o.out); !err.ok()) {
      print_error("cannot create " + o.out + ": " + err.error().message);
      return kExitUsage;
    }
    for (const auto& [name, content] : outputs) {
      auto err = pai::util::write_file_atomic(out_dir + "/" + name, *content, 0644);
      if (!err.ok()) {
        print_error("cannot write " + out_dir + "/" + name + ": " + err.error().message);
        return kExitUsage;
      }
    }
    if (!g.quiet && !is_structured(o.output))
      std::fprintf(stderr,
                   "wrote %s/layout.yaml, hivedscheduler.yaml%s and services-configuration.yaml\n",
                   out_dir.c_str(), config_yaml.empty() ? "" : ", config.yaml");
  }
  if (!o.diagram.empty()) {
    auto err = write_report_file(o.diagram, render_svg(r.plan));
    if (!err.ok()) {
      print_error("cannot write the diagram: " + err.error().message);
      return kExitUsage;
    }
  }

  if (o.output == "json" || o.output == "yaml") {
    nlohmann::ordered_json j = plan_to_json(r.plan);
    nlohmann::ordered_json diags = nlohmann::ordered_json::array();
    for (const auto& d : r.diagnostics.items())
      diags.push_back({{"code", d.code},
                       {"severity", std::string(pai::diag::to_string(d.severity))},
                       {"file", d.file},
                       {"line", d.line},
                       {"column", d.column},
                       {"message", d.message},
                       {"hint", d.hint}});
    j["diagnostics"] = diags;
    if (!o.out.empty()) {
      j["out"] = o.out;
      j["written"] = !o.dry_run;
      j["changes"] = changes;
    }
    // "schema" is kept beside apiVersion for readers of earlier output.
    print_document(document("plan", Json(j)), o.output);
  } else if (!o.dry_run && !g.quiet) {
    TableOptions t;
    t.color = use_color(g.no_color);
    t.verbose = g.verbose;
    std::string text = render_table(r.plan, t);
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (o.out.empty() && !g.quiet)
      std::fprintf(stderr, "nothing written: add --out DIR to write the files\n");
  }
  // Findings after the summary, where a terminal user sees them.
  std::fflush(stdout);
  print_findings_stderr(r.diagnostics, g);
  // 0, or 2 under --detailed-exitcode (exit_code_for).
  return changed ? kExitChanges : kExitOk;
}

void add_plan(Flags& parent, Globals& g) {
  auto o = std::make_shared<PlanCliOptions>();
  Flags* cmd = &parent;
  cmd->add_option("FACTS_DIR", o->facts_positional, "Facts directories, the same as --facts DIR")
      ->type_name("DIR");
  cmd->add_option("--facts", o->facts,
                  "A facts directory: one subdirectory per host (topo.txt, gpus.csv, lscpu.txt, "
                  "meminfo, host.yaml) "
                  "and/or <hostname>.json from paictl facts collect")
      ->type_name("DIR")
      ->allow_extra_args(false);
  Flag* profile_opt =
      cmd->add_option("--profile", o->profiles,
                      "A machine profile from layouts/ (see --list-profiles); repeatable")
          ->type_name("NAME")
          ->allow_extra_args(false);
  Flag* count_opt =
      cmd->add_option("--count", o->counts, "How many machines of the preceding --profile")
          ->type_name("N")
          ->allow_extra_args(false);
  Flag* racks_opt =
      cmd->add_option("--racks", o->racks,
                      "Spread the preceding --profile's machines over R racks (0 = none)")
          ->type_name("R")
          ->allow_extra_args(false);
  cmd->add_option("--vc", o->vcs,
                  "A virtual cluster: NAME=SHARE[,SHARE...], SHARE = [SKU:]N% | [SKU:]N (GPUs) | "
                  "[SKU:]Nnodes; "
                  "repeatable; the rest goes to VC default")
      ->type_name("NAME=SHARE")
      ->allow_extra_args(false);
  cmd->add_option("--vc-cells", o->vc_cells,
                  "node: each VC's share of a chain in whole cells of one level (whole nodes "
                  "when it holds one; what that leaves out is said); any: the largest cells "
                  "that fit, mixed (warns which job sizes can be blocked)")
      ->check(IsMember({"node", "any"}))
      ->capture_default_str();
  cmd->add_option("--odd-hosts", o->odd_hosts,
                  "What to do with a host that differs from its SKU peers")
      ->check(IsMember({"split", "exclude"}))
      ->capture_default_str();
  cmd->add_option("--master", o->master,
                  "Make HOST the master (instead of roles: [master] in its host.yaml)")
      ->type_name("HOST");
  cmd->add_option("--reserve-cpu", o->reserve_cpu,
                  "CPUs per host kept for system daemons (default 1 + 2% of the CPUs)")
      ->type_name("N")
      ->check(Range(0, 1 << 20));
  cmd->add_option("--reserve-memory", o->reserve_memory,
                  "Memory per host kept for system daemons (default 2Gi + 3% of MemTotal)")
      ->type_name("QUANTITY");
  cmd->add_option("--layouts", o->layouts,
                  "Where the machine profiles are (default: $PAICTL_LAYOUTS or the installed ones)")
      ->type_name("DIR");
  cmd->add_option("--out", o->out,
                  "Write layout.yaml, hivedscheduler.yaml and services-configuration.yaml (its "
                  "hivedscheduler.config "
                  "block; the rest of an existing file is kept) to DIR, and a config.yaml when DIR "
                  "has none")
      ->type_name("DIR");
  cmd->add_flag("--dry-run", o->dry_run,
                "Show the diff against the files in --out instead of writing them");
  cmd->add_flag("--detailed-exitcode", o->detailed_exitcode,
                "Exit 0 when --out is up to date, 2 when the files change, 1 on errors");
  cmd->add_option("--diagram", o->diagram,
                  "Draw racks, nodes, cells and GPUs coloured by VC to an SVG file")
      ->type_name("FILE.svg");
  add_output_option(*cmd, o->output, g);
  cmd->add_flag("--list-profiles", o->list_profiles, "List the machine profiles and exit");
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 planned (and written), 2 bad usage or input (nothing written), 1 internal check "
      "failure;\n"
      "  with --detailed-exitcode: 0 no changes, 2 changes, 1 error\n\n");
  // --profile, --count and --racks pair up in command-line order, which only the
  // parsed command knows.
  auto complete = [cmd, profile_opt, count_opt, racks_opt](PlanCliOptions& o, const Globals&) {
    o.layouts = find_layouts(o.layouts);
    size_t p = 0, c = 0, r = 0;
    for (const Flag* op : cmd->parse_order()) {
      if (op == profile_opt && p < o.profiles.size()) {
        o.profile_counts.push_back({o.profiles[p++], 0, 0});
      } else if (op == count_opt || op == racks_opt) {
        const char* flag = op == count_opt ? "--count" : "--racks";
        if (o.profile_counts.empty()) {
          o.pairing_error = std::string(flag) + " must follow the --profile it belongs to";
          break;
        }
        int v = op == count_opt ? (c < o.counts.size() ? o.counts[c++] : 0)
                                : (r < o.racks.size() ? o.racks[r++] : 0);
        (op == count_opt ? o.profile_counts.back().count : o.profile_counts.back().racks) = v;
      }
    }
  };
  define_command<PlanCliOptions>(*cmd, g, o,
                                 {.complete = complete,
                                  .validate = validate_plan,
                                  .run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void validate_plan(const PlanCliOptions& o, Usage& u) {
  if (o.list_profiles) return;
  u.error_if(o.facts.empty() && o.facts_positional.empty() && o.profiles.empty(),
             "nothing to plan: give a facts directory (DIR or --facts DIR) and/or --profile NAME "
             "--count N");
  if (!o.pairing_error.empty()) u.error(o.pairing_error);
  for (const auto& pc : o.profile_counts) {
    if (pc.count == 0) u.error("--profile " + pc.name + " needs --count N after it");
    if (pc.count < 0) u.error("--count for --profile " + pc.name + " must be at least 1");
    if (pc.racks < 0) u.error("--racks for --profile " + pc.name + " must be 0 or more");
  }
  u.error_if(o.dry_run && o.out.empty(),
             "--dry-run compares with the files in --out DIR; give --out");
  if (!o.reserve_memory.empty()) {
    auto q = pai::util::parse_quantity(o.reserve_memory);
    u.error_if(!q || *q < 0,
               "--reserve-memory " + o.reserve_memory + " is not a memory quantity (e.g. 8Gi)");
  }
}

std::string layouts_dir() {
  return find_layouts("");
}

std::vector<std::string> profile_names() {
  return pai::planner::list_profiles(find_layouts(""));
}

void build_plan(Flags& cmd, Globals& g) {
  add_plan(cmd, g);
}

}  // namespace paictl

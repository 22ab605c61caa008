// paictl facts collect PATH... [--out DIR] [-o text|json]

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app.h"
#include "check/hosts_common.h"
#include "check/report.h"
#include "command.h"
#include "exit_codes.h"
#include "facts/fact_script.h"
#include "facts/host_facts.h"
#include "facts/naming.h"
#include "flags.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/fs.h"
#include "util/strings.h"

namespace paictl {

Step<void> name_collected_facts(std::vector<pai::check::HostOutcome>& outcomes,
                                const std::string& master, const Globals& g) {
  // Hosts of a layout keep its names and roles; hosts given by address take their own names.
  bool from_layout = !outcomes.empty() && outcomes[0].plan.from_layout;
  if (from_layout) return {};
  std::vector<pai::facts::HostFacts> facts;
  std::vector<size_t> index;
  for (size_t i = 0; i < outcomes.size(); ++i)
    if (outcomes[i].reached && !outcomes[i].facts.sections.empty()) {
      facts.push_back(std::move(outcomes[i].facts));
      index.push_back(i);
    }
  auto give_back = [&] {
    for (size_t k = 0; k < index.size(); ++k) outcomes[index[k]].facts = std::move(facts[k]);
  };
  for (const auto& w : pai::facts::name_by_hostname(facts))
    if (!g.quiet) print_warning(w);
  if (!master.empty()) {
    if (auto m = pai::facts::mark_master(facts, master); !m.ok()) {
      give_back();
      print_error(m.error().message);
      if (!m.error().hint.empty()) std::fprintf(stderr, "  hint: %s\n", m.error().hint.c_str());
      return ExitNow{kExitUsage};
    }
  }
  give_back();
  return {};
}

namespace {

struct FactsCollectOptions {
  HostsOptions hosts;
  std::string output = "text";
  std::string out_dir;
  std::string master;  // --master HOST: the host (name or address) that is the master
};

// The file a host's facts go to: its own host name when that is a clean name
// (what the planner expects), else the name paictl knows it by.
std::string file_stem(const pai::check::HostOutcome& h) {
  const std::string& hn = h.facts.hostname;
  if (!hn.empty() && pai::util::is_dns1123_subdomain(hn)) return hn;
  std::string s = h.plan.name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) c = '_';
  return s.empty() ? "host" : s;
}

void validate_facts_collect(const FactsCollectOptions& o, Usage& u) {
  u.error_if(!o.out_dir.empty() && pai::util::path_exists(o.out_dir) &&
                 !pai::util::is_directory(o.out_dir),
             "--out " + o.out_dir + " exists and is not a directory");
  validate_hosts_options(o.hosts, u);
  u.error_if(!o.master.empty() && !o.hosts.paths.empty(),
             "--master goes with --hosts or --hosts-file",
             "a cluster directory's layout.yaml already names its master (pai-master: \"true\")");
}

int run(const FactsCollectOptions& o, const Globals& g) {
  if (o.hosts.print_script && o.hosts.paths.empty() && o.hosts.hosts.empty() &&
      o.hosts.hosts_file.empty()) {
    std::printf("%s", pai::facts::fact_script({}).c_str());
    return kExitOk;
  }
  auto prepared = prepare_hosts(o.hosts, g);
  if (!prepared.ok()) return prepared.error().code;
  PreparedHosts& p = *prepared;
  if (o.hosts.print_script) {
    std::printf("%s", pai::facts::fact_script(p.collect.script).c_str());
    return kExitOk;
  }
  if (o.hosts.dry_run) {
    print_dry_run(p, o.hosts, pai::facts::bootstrap_command(), o.output);
    if (!o.out_dir.empty() && !is_structured(o.output))
      std::printf("Facts would be written to %s/<hostname>.json.\n", o.out_dir.c_str());
    return kExitOk;
  }
  if (!o.out_dir.empty()) {
    if (auto err = pai::util::make_directories(o.out_dir); !err.ok()) {
      print_error("cannot create " + o.out_dir + ": " + err.error().message);
      return kExitUsage;
    }
  }

  double duration_ms = 0;
  size_t parallel = 0;
  auto outcomes = collect_with_progress(p, g, "collecting facts", &duration_ms, &parallel);
  if (auto named = name_collected_facts(outcomes, o.master, g); !named.ok())
    return named.error().code;

  int rc = kExitOk;
  nlohmann::json written = nlohmann::json::array();
  nlohmann::json failed = nlohmann::json::array();
  nlohmann::json all = nlohmann::json::array();
  std::set<std::string> stems;
  for (const auto& h : outcomes) {
    bool usable = h.reached && !h.facts.sections.empty();
    bool complete = usable && h.exec.ok() && h.facts.complete;
    if (!complete) {
      rc = kExitRemote;
      std::string why = h.exec.error.empty() ? "the fact script stopped early" : h.exec.error;
      if (!h.facts.stuck_in.empty()) why += " (stuck in " + h.facts.stuck_in + ")";
      failed.push_back(
          {{"host", h.plan.name}, {"error", why}, {"hint", h.exec.hint}, {"partial", usable}});
      print_error(h.plan.name + ": " + why);
      // An error's hint is part of the error: -q never hides it.
      if (!h.exec.hint.empty()) std::fprintf(stderr, "  hint: %s\n", h.exec.hint.c_str());
    }
    if (!usable) continue;
    nlohmann::json j = pai::facts::to_json(h.facts);
    if (o.out_dir.empty()) {
      all.push_back(std::move(j));
      continue;
    }
    std::string stem = file_stem(h);
    if (stems.count(stem)) {
      print_warning(h.plan.name + " calls itself \"" + stem +
                    "\" like another host; its facts go to " + h.plan.name + ".json instead");
      stem = h.plan.name;
    }
    stems.insert(stem);
    std::string path = o.out_dir + "/" + stem + ".json";
    if (auto err = pai::util::write_file_atomic(path, pai::check::dump(j) + "\n", 0644);
        !err.ok()) {
      print_error("cannot write " + path + ": " + err.error().message);
      rc = kExitUsage;
      continue;
    }
    written.push_back({{"host", h.plan.name}, {"file", path}, {"complete", complete}});
  }

  if (is_structured(o.output)) {
    nlohmann::json j;
    if (o.out_dir.empty())
      j = {{"hosts", all}, {"failed", failed}};
    else
      j = {{"written", written}, {"failed", failed}};
    j["duration_ms"] = static_cast<int64_t>(duration_ms);
    print_document(document("factsCollection", Json(j)), o.output);
  } else if (o.out_dir.empty()) {
    // A compact table; -o json (or --out) has everything.
    Table t({{"HOST"},
             {"OS"},
             {"KERNEL"},
             {"CPUS", false, true},
             {"MEMORY", false, true},
             {"GPUS", false, true},
             {"DRIVER"},
             {"DOCKER"}});
    for (const auto& h : outcomes) {
      if (!h.reached || h.facts.sections.empty()) continue;
      const auto& f = h.facts;
      t.add({h.plan.name, f.os.id + " " + f.os.version_id, f.kernel, std::to_string(f.cpu.logical),
             pai::util::format_bytes(static_cast<double>(f.memory.total_bytes)),
             std::to_string(f.gpus.size()),
             f.nvidia.driver_version.empty() ? "-" : f.nvidia.driver_version,
             f.docker.server_version.empty() ? "-" : f.docker.server_version});
    }
    print_table(t);
  } else if (!g.quiet) {
    std::printf("wrote %zu facts file%s to %s (%.1f s)\n", written.size(),
                written.size() == 1 ? "" : "s", o.out_dir.c_str(), duration_ms / 1000);
  }
  return rc;
}

void add_facts_collect(Flags& parent, Globals& g) {
  auto o = std::make_shared<FactsCollectOptions>();
  Flags* cmd = &parent;
  add_hosts_options(cmd, o->hosts);
  add_output_option(*cmd, o->output, g);
  cmd->add_option("--master", o->master,
                  "With --hosts/--hosts-file: this host (name or address) is the master; its facts "
                  "say roles: [master]")
      ->type_name("HOST");
  cmd->add_option("--out", o->out_dir,
                  "Write one DIR/<hostname>.json per host (paictl.facts/v1, docs/facts.md)")
      ->type_name("DIR");
  cmd->footer(
      "EXIT STATUS:\n"
      "  0 facts of every host collected, 2 bad usage or invalid cluster files, 3 some hosts could "
      "not be reached\n"
      "  (their partial facts are still written when the script was cut off)\n\n");
  define_command(*cmd, g, o,
                 {.validate = validate_facts_collect,
                  .run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_facts_collect(Flags& cmd, Globals& g) {
  add_facts_collect(cmd, g);
}

}  // namespace paictl

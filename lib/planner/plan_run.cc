#include "planner/plan_run.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "config/cluster_files.h"
#include "planner/plan_output.h"
#include "planner/profiles.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::planner {

PlanRun plan_from_inputs(const PlanInputs& in) {
  PlanRun run;
  std::vector<Host> hosts;
  std::vector<std::string> inputs;
  std::vector<std::string> seen;
  for (const auto& dir : in.facts_dirs) {
    // The same directory twice (facts/ and ./facts) is read once.
    std::error_code ec;
    std::string canonical = std::filesystem::weakly_canonical(dir, ec).string();
    if (ec) canonical = dir;
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) {
      run.diagnostics.add("P010", diag::Severity::Warning, dir, 0, 0,
                          "facts directory " + dir + " is given twice; it is read once");
      continue;
    }
    seen.push_back(canonical);
    FactsSet set = load_facts_dir(dir);
    run.diagnostics.append(set.diagnostics);
    run.files_read.insert(run.files_read.end(), set.files.begin(), set.files.end());
    for (auto& h : set.hosts) hosts.push_back(std::move(h));
    inputs.push_back(dir);
  }
  if (!in.collected.empty()) {
    std::vector<std::string> names;
    for (const auto& f : in.collected) {
      // Where they came from, for messages: the address the host was reached at.
      hosts.push_back(host_from_facts(f, "facts of " + (f.address.empty() ? f.name : f.address),
                                      run.diagnostics));
      names.push_back(hosts.back().hostname);
    }
    inputs.push_back("facts collected from " + util::join(names, ", "));
  }
  int subnet = 1;
  for (const auto& pc : in.profiles) {
    auto p = load_profile(in.layouts_dir, pc.name, run.diagnostics);
    if (!p) continue;
    if (pc.count < 1 || pc.count > 10000) {
      run.diagnostics.add("P109", diag::Severity::Error, "", 0, 0,
                          "--count for profile " + pc.name + " must be 1..10000, found " +
                              std::to_string(pc.count));
      continue;
    }
    if (pc.racks < 0 || pc.racks > pc.count) {
      run.diagnostics.add("P109", diag::Severity::Error, "", 0, 0,
                          "--racks for profile " + pc.name + " must be 0.." +
                              std::to_string(pc.count) + ", found " + std::to_string(pc.racks));
      continue;
    }
    auto ph = profile_hosts(*p, pc.count, pc.racks, subnet++);
    for (auto& h : ph) hosts.push_back(std::move(h));
    inputs.push_back("profile " + pc.name + " x" + std::to_string(pc.count) +
                     (pc.racks ? " in " + std::to_string(pc.racks) + " racks" : ""));
  }
  if (run.diagnostics.has_errors()) {
    run.diagnostics.sort(run.files_read);
    return run;
  }
  run.plan = make_plan(std::move(hosts), in.options);
  run.plan.inputs = inputs;
  run.diagnostics.append(run.plan.diagnostics);
  run.diagnostics.sort(run.files_read);
  return run;
}

PlanFiles render_files(const Plan& plan, const std::string& existing_services) {
  PlanFiles f;
  f.layout = render_layout(plan);
  f.hived = render_hived(plan);
  f.services = render_services(plan, existing_services);
  return f;
}

diag::List check_plan_files(const Plan& plan, const std::string& scratch) {
  namespace fs = std::filesystem;
  diag::List out;
  std::string base = scratch;
  if (base.empty()) {
    const char* t = std::getenv("TMPDIR");
    base = t && *t ? t : "/tmp";
  }
  std::string tmpl = base + "/paictl-plan-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    out.add("P120", diag::Severity::Error, base, 0, 0,
            "cannot create a temporary directory to check the plan in " + base);
    return out;
  }
  std::string dir(buf.data());
  PlanFiles files = render_files(plan, "");
  auto w = util::write_file_atomic(dir + "/layout.yaml", files.layout);
  if (w.ok()) w = util::write_file_atomic(dir + "/hivedscheduler.yaml", files.hived);
  if (w.ok()) w = util::write_file_atomic(dir + "/services-configuration.yaml", files.services);
  if (!w.ok()) {
    out.add("P120", diag::Severity::Error, dir, 0, 0,
            "cannot write the plan to check it: " + w.error().message);
  } else {
    config::CheckOutcome c = config::check_paths({dir});
    for (auto d : c.diagnostics.items()) {
      // Name the file as it will be called in the output directory.
      if (d.file.rfind(dir + "/", 0) == 0) d.file = d.file.substr(dir.size() + 1);
      out.add(std::move(d));
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return out;
}

}  // namespace pai::planner

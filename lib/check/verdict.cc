#include "check/verdict.h"

#include "util/strings.h"

namespace pai::check {

std::string_view to_string(Purpose p) {
  switch (p) {
    case Purpose::Auto:
      return "auto";
    case Purpose::Install:
      return "install";
    case Purpose::Running:
      return "running";
  }
  return "auto";
}

std::optional<Purpose> parse_purpose(std::string_view s) {
  for (Purpose p : {Purpose::Auto, Purpose::Install, Purpose::Running})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

const std::vector<std::string>& install_markers() {
  static const std::vector<std::string> k = {"/etc/paictl/cluster", "/etc/kubernetes/kubelet.conf"};
  return k;
}

bool host_installed(const facts::HostFacts& f) {
  for (const auto& m : install_markers())
    if (const facts::PathFacts* p = f.path(m); p && p->exists) return true;
  return false;
}

Purpose purpose_for(Purpose p, const facts::HostFacts& f) {
  if (p != Purpose::Auto) return p;
  return host_installed(f) ? Purpose::Running : Purpose::Install;
}

void judge(std::vector<CheckResult>& results, const std::vector<HostOutcome>& hosts, Purpose p) {
  std::map<std::string, const HostOutcome*> by_name;
  for (const auto& h : hosts) by_name[h.plan.name] = &h;
  for (auto& r : results) {
    if (r.status != Status::Fail && r.status != Status::Warn) continue;
    const CheckInfo* info = find_check(r.check);
    if (!info || info->install == ByInstall::Cannot) continue;
    auto it = by_name.find(r.host);
    if (it == by_name.end() || !it->second->reached) continue;
    const facts::HostFacts& f = it->second->facts;
    Purpose mine = purpose_for(p, f);
    bool installed = host_installed(f);
    if (info->install == ByInstall::SetsUp && mine == Purpose::Install) {
      r.status = Status::Install;
      r.hint = std::string(info->install_does);
      r.demoted = false;
    } else if (info->install == ByInstall::Keeps && installed) {
      r.status = mine == Purpose::Install ? Status::Install : Status::Pass;
      r.message += mine == Purpose::Install
                       ? " (this cluster's install left it)"
                       : " (expected: an install left its marker on this host)";
      r.hint = std::string(info->install_does);
      r.demoted = false;
    }
  }
}

std::map<std::string, std::vector<CheckResult>> errors_by_host(
    const std::vector<CheckResult>& results) {
  std::map<std::string, std::vector<CheckResult>> out;
  for (const auto& r : results)
    if (r.status == Status::Fail) out[r.host].push_back(r);
  return out;
}

std::vector<CheckResult> host_verdicts(const std::vector<HostOutcome>& hosts,
                                       const EvalOptions& eval, std::vector<CheckResult> extra,
                                       Purpose purpose, const std::vector<std::string>& ignore) {
  auto results = evaluate(hosts, eval);
  results.insert(results.end(), std::make_move_iterator(extra.begin()),
                 std::make_move_iterator(extra.end()));
  judge(results, hosts, purpose);
  demote(results, ignore);
  return results;
}

}  // namespace pai::check

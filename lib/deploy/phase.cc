#include "deploy/phase.h"

#include "util/strings.h"

namespace pai::deploy {

Phase::~Phase() = default;
ReadsAhead::~ReadsAhead() = default;
CleansUp::~CleansUp() = default;

bool Phase::runs_on(const HostSpec& host) const {
  switch (traits_.hosts) {
    case PhaseTraits::Hosts::All:
      return true;
    case PhaseTraits::Hosts::Master:
      return host.master && !host.other_master;
    case PhaseTraits::Hosts::AllButMaster:
      return !host.master;
    case PhaseTraits::Hosts::OtherMasters:
      return host.other_master;
  }
  return true;
}

bool phase_runs(const Phase& p, const HostSpec& h) {
  return p.runs_on(h) && (h.selected || p.traits().cluster_scope);
}

util::Result<void> verify_applied(Phase& phase, HostRun& host) {
  std::vector<std::string> needs;
  util::Result<void> s = phase.observe(host, needs);
  if (!s.ok()) return s;
  if (!needs.empty())
    return util::Error{"still missing after applying: " + util::join(needs, "; "), ""};
  return s;
}

}  // namespace pai::deploy

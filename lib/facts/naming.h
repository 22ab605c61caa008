#pragma once
// Collected facts named as the cluster files will name the hosts: by the name a
// host gives itself (its hostname), not the address it was reached at, and with
// the master marked. `facts collect --hosts` and `init --hosts` name what they
// collect this way, so that the planner reads a host's facts under its name.

#include <string>
#include <vector>

#include "facts/host_facts.h"
#include "util/result.h"

namespace pai::facts {

// Each host reached by an address (`name` as --hosts gave it) takes its
// hostname, lower-cased, as its name when that is a valid Kubernetes node name
// and no other host of `hosts` has it; the address stays in `address`.
// Returns a warning for each host that keeps its address as its name.
std::vector<std::string> name_by_hostname(std::vector<HostFacts>& hosts);

// Marks the host that `master` names (its name, hostname, or the address it was
// reached at) as the master (roles [master]) and every other as a worker.
// An error, with the hosts' names in the hint, when none matches.
util::Result<void> mark_master(std::vector<HostFacts>& hosts, const std::string& master);

}  // namespace pai::facts

#include "facts/naming.h"

#include <map>

#include "util/strings.h"

namespace pai::facts {

std::vector<std::string> name_by_hostname(std::vector<HostFacts>& hosts) {
  std::vector<std::string> warnings;
  std::map<std::string, int> count;
  for (const auto& f : hosts) ++count[util::to_lower(f.hostname)];
  for (auto& f : hosts) {
    std::string name = util::to_lower(f.hostname);
    if (name.empty() || name == f.name) continue;
    if (!util::is_dns1123_subdomain(name)) {
      warnings.push_back(f.name + " calls itself \"" + f.hostname +
                         "\", which is not a Kubernetes node name; it keeps the name " + f.name);
      continue;
    }
    if (count[name] > 1) {
      warnings.push_back(f.name + " calls itself \"" + name +
                         "\" like another host; it keeps the name " + f.name);
      continue;
    }
    f.name = name;
  }
  return warnings;
}

util::Result<void> mark_master(std::vector<HostFacts>& hosts, const std::string& master) {
  const HostFacts* found = nullptr;
  std::vector<std::string> names;
  for (const auto& f : hosts) {
    names.push_back(f.name);
    if (!found && (f.name == master || util::to_lower(f.hostname) == util::to_lower(master) ||
                   f.address == master))
      found = &f;
  }
  if (!found) {
    std::string guess = util::did_you_mean(master, names);
    return util::Error{"--master " + master + " is none of the hosts reached",
                       guess.empty()
                           ? "name one of " + util::join(names, ", ") + " (by name or address)"
                           : "did you mean \"" + guess + "\"?",
                       util::Error::Kind::Input};
  }
  for (auto& f : hosts) f.roles = {&f == found ? "master" : "worker"};
  return {};
}

}  // namespace pai::facts

// A job on a registered cluster as a command names it (USER~NAME or NAME).

#include "job/job_target.h"

#include "api/client.h"
#include "cluster/registry.h"
#include "output/output.h"

namespace paictl::jobcli {

std::optional<std::pair<std::string, std::string>> parse_job_id(const std::string& id,
                                                                const Connection& c) {
  size_t t = id.find('~');
  std::string user = t == std::string::npos ? c.cluster->user : id.substr(0, t);
  std::string name = t == std::string::npos ? id : id.substr(t + 1);
  if (user.empty() || name.empty()) {
    print_error("a job is named USER~NAME (or NAME for your own jobs), got \"" + id + "\"");
    return std::nullopt;
  }
  return std::make_pair(user, name);
}

std::optional<JobTarget> open_job(const std::string& job, const RemoteOptions& o,
                                  const Globals& g) {
  auto reg = load_registry();
  if (!reg) return std::nullopt;
  auto conn = connect(*reg, o, g);
  if (!conn) return std::nullopt;
  auto parsed = parse_job_id(job, *conn);
  if (!parsed) return std::nullopt;
  return JobTarget{*conn, parsed->first, parsed->second,
                   pai::api::job_id(parsed->first, parsed->second)};
}

}  // namespace paictl::jobcli

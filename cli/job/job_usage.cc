// --param, --name and --vc of the job commands: their usage checks and the
// overrides they make.

#include "job/job_usage.h"

#include "output/output.h"

namespace paictl::jobcli {

namespace {

bool valid_job_name(const std::string& name) {
  bool ok = name.size() <= 255;
  for (char c : name)
    ok &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-';
  return ok;
}

const char* kNameRule = "\" may contain only letters, digits, '_' and '-' (at most 255)";

}  // namespace

void validate_overrides(const std::vector<std::string>& params, const std::string& name, Usage& u) {
  for (const auto& p : params) {
    if (auto po = pai::job::parse_param(p); !po.ok())
      u.error(po.error().message, "--param NAME=VALUE");
  }
  if (!name.empty()) u.error_if(!valid_job_name(name), "--name \"" + name + kNameRule);
}

std::optional<pai::job::Overrides> make_overrides(const std::vector<std::string>& params,
                                                  const std::string& name, const std::string& vc) {
  pai::job::Overrides o;
  for (const auto& p : params) {
    auto po = pai::job::parse_param(p);
    if (!po.ok()) {
      print_error(po.error().message);
      return std::nullopt;
    }
    o.params.push_back(*po);
  }
  if (!name.empty()) {
    if (!valid_job_name(name)) {
      print_error("--name \"" + name + kNameRule);
      return std::nullopt;
    }
    o.name = name;
  }
  if (!vc.empty()) o.virtual_cluster = vc;
  return o;
}

}  // namespace paictl::jobcli

#include "job/sweep.h"

#include <set>

namespace pai::job {

std::string job_name_of(const std::string& text) {
  std::string out;
  for (char c : text)
    out += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                   c == '-'
               ? c
               : '_';
  if (out.size() > 255) out.resize(255);
  return out;
}

util::Result<std::vector<SweepJob>> sweep_jobs(const std::string& base, const std::string& sweep_id,
                                               const std::vector<SweepAxis>& axes,
                                               const std::string& vc) {
  size_t total = 1;
  for (const auto& a : axes) total *= a.values.size();
  std::vector<SweepJob> jobs;
  std::vector<size_t> idx(axes.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    Overrides ov;
    if (!vc.empty()) ov.virtual_cluster = vc;
    std::string suffix;
    for (size_t a = 0; a < axes.size(); ++a) {
      ov.params.push_back({axes[a].name, axes[a].values[idx[a]]});
      suffix += "-" + axes[a].name + axes[a].values[idx[a]];
    }
    std::string name = job_name_of(base + "-" + sweep_id + suffix);
    if (name.size() > 240) name = name.substr(0, 240) + "-" + std::to_string(n);
    ov.name = name;
    jobs.push_back({suffix.empty() ? std::string() : suffix.substr(1), std::move(ov)});
    for (size_t a = axes.size(); a-- > 0;) {
      if (++idx[a] < axes[a].values.size()) break;
      idx[a] = 0;
    }
  }
  std::set<std::string> names;
  for (const auto& j : jobs)
    if (!names.insert(*j.overrides.name).second)
      return util::Error{"two jobs of the sweep get the name " + *j.overrides.name +
                             " (values that differ only in characters a name cannot hold)",
                         {},
                         util::Error::Kind::Input};
  return jobs;
}

}  // namespace pai::job

#include "job/placement.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/strings.h"

namespace pai::job {

namespace {

std::string fmt_num(double v) {
  char buf[32];
  if (std::fabs(v - std::round(v)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string describe_request(double gpu, double cpu, double mem) {
  std::string m = mem >= 1024 ? fmt_num(mem / 1024) + " GiB" : fmt_num(mem) + " MiB";
  return fmt_num(gpu) + " GPU, " + fmt_num(cpu) + " CPU, " + m;
}

}  // namespace

util::Result<int64_t> sku_count(const TaskRoleRequest& tr, const api::SkuType& sku) {
  int64_t n = 0;
  std::string why;
  auto need = [&](int64_t req, double per, const char* what) -> bool {
    if (req <= 0) return true;
    if (per <= 0) {
      why = "task role " + tr.name + " asks for " + std::to_string(req) + " " + what + " but SKU " +
            sku.name + " has none";
      return false;
    }
    n = std::max<int64_t>(n, static_cast<int64_t>(std::ceil(static_cast<double>(req) / per)));
    return true;
  };
  if (!need(tr.gpu, sku.gpu, "GPU") || !need(tr.cpu, sku.cpu, "CPU") ||
      !need(tr.memory_mb, sku.memory_mb, "MiB of memory"))
    return util::Error{why, {}};
  return n;
}

ClusterFacts gather_facts(api::Client& client, const std::string& cluster, const std::string& user,
                          const JobRequest& job) {
  ClusterFacts f;
  f.cluster = cluster;
  f.user = user;
  auto vcs = client.virtual_clusters();
  if (!vcs.ok()) {
    f.error = vcs.error();
    return f;
  }
  f.vcs = *vcs;
  auto u = client.user(user);
  if (u.ok()) f.user_info = *u;
  bool vc_exists = std::any_of(f.vcs.begin(), f.vcs.end(), [&](const api::VirtualCluster& v) {
    return v.name == job.virtual_cluster;
  });
  if (vc_exists) {
    auto skus = client.sku_types(job.virtual_cluster);
    if (skus.ok()) f.skus = *skus;
  }
  if (!job.storages.empty()) {
    auto st = client.storages();
    if (st.ok()) f.storages = *st;
  }
  if (!job.name.empty()) {
    auto taken = client.job_exists(user, job.name);
    if (taken.ok()) f.name_taken = *taken;
  }
  return f;
}

Evaluation evaluate(const JobRequest& job, const ClusterFacts& facts) {
  Evaluation e;
  e.cluster = facts.cluster;
  auto add = [&](std::string name, bool ok, std::string detail) {
    e.checks.push_back({std::move(name), ok, std::move(detail)});
  };
  if (facts.error) {
    add("reachable", false, facts.error->summary());
    e.reason = "unreachable: " + facts.error->summary();
    return e;
  }
  add("reachable", true, "REST API answered");

  const api::VirtualCluster* vc = nullptr;
  for (const auto& v : facts.vcs)
    if (v.name == job.virtual_cluster) vc = &v;
  if (!vc) {
    std::vector<std::string> names;
    for (const auto& v : facts.vcs) names.push_back(v.name);
    add("vc", false,
        "no virtual cluster " + job.virtual_cluster + " (has " + util::join(names, ", ") + ")");
  } else {
    add("vc", true, "virtual cluster " + job.virtual_cluster + " exists");
    e.total = vc->total;
    e.free = vc->free();
  }
  if (facts.user_info) {
    const auto& allowed = facts.user_info->virtual_clusters;
    bool ok = facts.user_info->admin ||
              std::find(allowed.begin(), allowed.end(), job.virtual_cluster) != allowed.end();
    add("permission", ok,
        ok ? facts.user + " may submit to " + job.virtual_cluster
           : facts.user + " may not submit to " + job.virtual_cluster +
                 " (may use: " + util::join(allowed, ", ") + ")");
  } else {
    add("permission", true, "unknown: the user's details could not be read");
  }

  if (vc) {
    if (facts.skus) {
      const auto& skus = *facts.skus;
      bool ok = true;
      std::string detail;
      for (const auto& tr : job.task_roles) {
        if (!tr.pinned_cell.empty()) continue;
        if (!tr.sku_type.empty()) {
          auto it = std::find_if(skus.begin(), skus.end(),
                                 [&](const api::SkuType& s) { return s.name == tr.sku_type; });
          if (it == skus.end()) {
            std::vector<std::string> names;
            for (const auto& s : skus) names.push_back(s.name);
            ok = false;
            detail = "task role " + tr.name + " asks for SKU " + tr.sku_type + ", not in " +
                     job.virtual_cluster + " (has " +
                     (names.empty() ? std::string("none") : util::join(names, ", ")) + ")";
            break;
          }
          if (auto n = sku_count(tr, *it); !n.ok()) {
            ok = false;
            detail = n.error().message;
            break;
          }
        } else if (!skus.empty()) {
          // Without a skuType the server measures in the smallest unit of the VC's SKUs.
          api::SkuType unit{"the VC's SKUs", 1e18, 1e18, 1e18};
          for (const auto& s : skus) {
            unit.cpu = std::min(unit.cpu, s.cpu);
            unit.gpu = std::min(unit.gpu, s.gpu);
            unit.memory_mb = std::min(unit.memory_mb, s.memory_mb);
          }
          if (auto n = sku_count(tr, unit); !n.ok()) {
            ok = false;
            detail = n.error().message;
            break;
          }
        }
      }
      if (ok) detail = skus.empty() ? "no SKU types (not a HiveD cluster)" : "SKU types fit";
      add("sku", ok, detail);
    } else {
      add("sku", true, "unknown: SKU types could not be read");
    }

    double rg = static_cast<double>(job.total_gpu()), rc = static_cast<double>(job.total_cpu()),
           rm = static_cast<double>(job.total_memory_mb());
    bool oppo = job.priority_class == "oppo";
    bool fits_total = (rg <= vc->total.gpu || rg == 0) &&
                      (rc <= vc->total.cpu || rc == 0 || vc->total.cpu == 0) &&
                      (rm <= vc->total.memory_mb || rm == 0 || vc->total.memory_mb == 0);
    if (oppo) {
      add("resources", true, "opportunistic job: not bounded by the VC's quota");
    } else {
      add("resources", fits_total,
          (fits_total ? "the job (" : "the job needs ") + describe_request(rg, rc, rm) +
              (fits_total ? ") fits in " : ", more than ") + job.virtual_cluster + "'s " +
              describe_request(vc->total.gpu, vc->total.cpu, vc->total.memory_mb));
    }
    e.fits_now = (rg <= e.free.gpu) && (rc <= e.free.cpu || vc->total.cpu == 0) &&
                 (rm <= e.free.memory_mb || vc->total.memory_mb == 0);
    double head = std::numeric_limits<double>::infinity();
    if (rg > 0) head = std::min(head, e.free.gpu / rg);
    if (rc > 0 && vc->total.cpu > 0) head = std::min(head, e.free.cpu / rc);
    if (rm > 0 && vc->total.memory_mb > 0) head = std::min(head, e.free.memory_mb / rm);
    e.headroom = std::isinf(head) ? 1e9 : head;
  }

  if (!job.storages.empty()) {
    if (facts.storages) {
      std::vector<std::string> have, missing;
      for (const auto& s : *facts.storages) have.push_back(s.name);
      for (const auto& s : job.storages)
        if (std::find(have.begin(), have.end(), s) == have.end()) missing.push_back(s);
      add("storages", missing.empty(),
          missing.empty() ? "storages " + util::join(job.storages, ", ") + " exist"
                          : "no storage " + util::join(missing, ", ") + " for " + facts.user +
                                " (has " + util::join(have, ", ") + ")");
    } else {
      add("storages", true, "unknown: storages could not be read");
    }
  }
  if (facts.name_taken) {
    add("name", !*facts.name_taken,
        *facts.name_taken
            ? "job " + api::job_id(facts.user, job.name) +
                  " already exists (names are unique per user, finished jobs too; use --name)"
            : "job name " + job.name + " is free");
  }

  // HiveD's verdict on the live cells replaces the VC totals' "fits now".
  e.cells = facts.cells;
  if (vc && facts.cells && facts.cells->known) {
    const CellVerdict& cv = *facts.cells;
    bool rejected = cv.verdict == "rejected";
    add("cells", !rejected,
        (rejected ? "HiveD rejects the job: " : "HiveD on the live state: " + cv.verdict + ": ") +
            (cv.reasons.empty() ? std::string()
                                : std::string(hived::to_string(cv.reasons.front().code)) + ": ") +
            cv.reason);
    e.fits_now = cv.verdict == "fits" || cv.verdict == "preempts";
    e.start_s = cv.start_s;
  }
  e.eligible = std::all_of(e.checks.begin(), e.checks.end(), [](const Check& c) { return c.ok; });
  if (!e.eligible) {
    for (const auto& c : e.checks)
      if (!c.ok) {
        e.reason = c.detail;
        break;
      }
  } else if (e.cells && e.cells->known) {
    e.reason = (e.fits_now ? "" : "would wait: ") +
               (e.fits_now || e.cells->reasons.empty()
                    ? std::string()
                    : std::string(hived::to_string(e.cells->reasons.front().code)) + ": ") +
               e.cells->reason + (e.fits_now ? "" : "; start " + e.cells->estimate);
  } else {
    e.reason = e.fits_now ? "fits now (free " +
                                describe_request(e.free.gpu, e.free.cpu, e.free.memory_mb) + ")"
                          : "would wait (free " +
                                describe_request(e.free.gpu, e.free.cpu, e.free.memory_mb) + ")";
    if (e.cells && !e.cells->why_unknown.empty())
      e.reason += "; by VC totals: " + e.cells->why_unknown;
  }
  return e;
}

std::vector<Evaluation> rank_clusters(const JobRequest& job, const std::vector<ClusterFacts>& facts,
                                      const std::vector<std::string>& preference) {
  std::vector<Evaluation> all;
  for (const auto& f : facts) {
    Evaluation e = evaluate(job, f);
    auto it = std::find(preference.begin(), preference.end(), e.cluster);
    e.preference = it == preference.end() ? -1 : static_cast<int>(it - preference.begin());
    all.push_back(std::move(e));
  }
  std::stable_sort(all.begin(), all.end(), [](const Evaluation& a, const Evaluation& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (!a.eligible) return a.cluster < b.cluster;
    if (a.fits_now != b.fits_now) return a.fits_now;
    if (!a.fits_now) {
      // The earlier estimated start; a known one before an unknown one.
      if (a.start_s.has_value() != b.start_s.has_value()) return a.start_s.has_value();
      if (a.start_s && *a.start_s != *b.start_s) return *a.start_s < *b.start_s;
    }
    int pa = a.preference < 0 ? 1 << 30 : a.preference,
        pb = b.preference < 0 ? 1 << 30 : b.preference;
    if (pa != pb) return pa < pb;
    if (a.headroom != b.headroom) return a.headroom > b.headroom;
    return a.cluster < b.cluster;
  });
  int rank = 0;
  for (auto& e : all)
    if (e.eligible) e.rank = ++rank;
  return all;
}

}  // namespace pai::job

#include "job/waiting.h"

#include "job/cell_verdict.h"
#include "job/placement.h"

namespace pai::job {

WaitingExplanation explain_waiting(const WaitingInput& in, api::Client& rest,
                                   hived::Client* hived) {
  WaitingExplanation w;
  std::optional<hived::Reason> kube;
  if (auto ev = rest.job_events(in.user, in.name); ev.ok())
    kube = hived::kube_reason(hived::parse_pod_events(*ev));
  else
    w.events_unknown = "the job's events could not be read (" + ev.error().message + ")";
  if (kube) w.reasons.push_back(*kube);

  if (!hived) {
    w.hived_unknown = "the cluster has no HiveD inspect API";
  } else if (in.job) {
    ClusterFacts facts;
    facts.user = in.user;
    const bool oppo = in.job->priority_class == "oppo";
    if (auto skus = rest.sku_types(oppo ? std::string() : in.job->virtual_cluster); skus.ok())
      facts.skus = std::move(*skus);
    CellVerdictInput ci{in.job, &facts, in.duration_s, in.now_s};
    VerdictTiming timing;
    CellVerdict cv = cell_verdict(ci, *hived, rest, timing);
    if (cv.known) {
      w.verdict = cv.verdict;
      for (const auto& r : cv.reasons) w.reasons.push_back(r);
      w.would_fit = cv.would_fit;
    } else {
      w.hived_unknown = cv.why_unknown;
    }
  }
  hived::rank_reasons(w.reasons);
  // HiveD has room, but the kube-scheduler keeps the pod from every node.
  if (kube && w.would_fit && w.would_fit->kind == hived::WouldFit::Kind::Now) {
    hived::WouldFit u;
    u.kind = hived::WouldFit::Kind::Unknown;
    u.event = "the kube-scheduler accepts a node";
    u.text =
        "HiveD would place it now; it runs when the kube-scheduler accepts a node for its "
        "pods (see KubeUnschedulable)";
    w.would_fit = u;
  }
  return w;
}

hived::Json to_json(const WaitingExplanation& w) {
  using hived::Json;
  Json reasons = Json::array();
  for (const auto& r : w.reasons) reasons.push_back(hived::to_json(r));
  return {{"reason", w.reasons.empty() ? Json(nullptr) : hived::to_json(w.reasons.front())},
          {"reasons", reasons},
          {"wouldFit", w.would_fit ? hived::to_json(*w.would_fit) : Json(nullptr)},
          {"hivedVerdict", w.verdict.empty() ? Json(nullptr) : Json(w.verdict)},
          {"hivedUnknown", w.hived_unknown},
          {"eventsUnknown", w.events_unknown}};
}

}  // namespace pai::job

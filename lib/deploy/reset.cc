#include "deploy/reset.h"

#include <utility>

#include "util/fs.h"

namespace pai::deploy {

UseCaseResult<ResetPlan> plan_reset(const ResetRequest& r, const InstallDeps& deps,
                                    const Callbacks& cb) {
  ResetPlan p;
  p.request = r;
  if (r.azure && util::is_directory(r.cluster_dir)) {
    auto session = open_azure_required(r.cluster_dir, r.azure_access, deps.azure);
    if (!session.ok()) return std::move(session).error();
    auto ap = plan_azure_reset(std::move(*session), r.dry_run, cb);
    if (!ap.ok()) return std::move(ap).error();
    p.azure = std::move(ap).value();
    return p;
  }
  auto hosts = plan_host_stage(host_stage_request(HostOperation::Reset, r, r.limit), deps, cb);
  if (!hosts.ok()) return std::move(hosts).error();
  p.hosts = std::move(hosts).value();
  return p;
}

ResetOutcome apply_reset(ResetPlan& p, const Callbacks& cb) {
  ResetOutcome o;
  if (!p.azure) {
    o.hosts = finish_host_stage(p.hosts, p.request.yes, cb);
    return o;
  }
  if (p.azure->dry_run) {
    o.azure_end = ResetOutcome::AzureEnd::DryRun;
    return o;
  }
  if (!p.request.yes) {
    Question q;
    q.kind = Question::Kind::ResetAzure;
    Answer a = cb.ask(q);
    if (a != Answer::Yes) {
      o.azure_end =
          a == Answer::No ? ResetOutcome::AzureEnd::Declined : ResetOutcome::AzureEnd::NoTerminal;
      return o;
    }
  }
  auto r = apply_azure_reset(*p.azure, cb);
  if (!r.ok()) {
    o.error = std::move(r).error();
    return o;
  }
  o.azure = std::move(r).value();
  o.azure_end = ResetOutcome::AzureEnd::Deleted;
  return o;
}

}  // namespace pai::deploy

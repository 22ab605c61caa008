// The documents of paictl certs check|renew (certs_json.h).
#include "deploy/certs_json.h"

#include <ctime>

#include "util/time.h"

namespace pai::deploy {

namespace {

const char* certs_json_end(CertsRenewOutcome::End e) {
  switch (e) {
    case CertsRenewOutcome::End::DryRun:
      return "dry-run";
    case CertsRenewOutcome::End::Declined:
      return "declined";
    case CertsRenewOutcome::End::NoTerminal:
      return "no-terminal";
    case CertsRenewOutcome::End::Failed:
      return "failed";
    case CertsRenewOutcome::End::Renewed:
      return "renewed";
  }
  return "?";
}

DocJson certs_json_step_doc(const CertsRenewStep& s) {
  DocJson j = {{"step", to_string(s.kind)}, {"host", s.host}, {"skip", s.skip}};
  if (!s.note.empty()) j["note"] = s.note;
  j["what"] = s.describe();
  return j;
}

}  // namespace

DocJson cert_json(const check::CertInfo& c) {
  DocJson j;
  j["host"] = c.host;
  j["source"] = c.source;
  j["name"] = c.name;
  j["kubeconfig"] = c.kubeconfig;
  j["subject"] = c.subject;
  j["issuer"] = c.issuer;
  j["serial"] = c.serial;
  j["notBefore"] = util::rfc3339_utc(static_cast<std::time_t>(c.not_before));
  j["notAfter"] = util::rfc3339_utc(static_cast<std::time_t>(c.not_after));
  j["daysLeft"] = c.days_left;
  j["isCA"] = c.is_ca;
  j["selfSigned"] = c.self_signed;
  j["sans"] = c.sans;
  return j;
}

DocJson certs_report_json(const check::CertsReport& r) {
  DocJson j;
  j["readAt"] = util::rfc3339_utc(static_cast<std::time_t>(r.read_at));
  j["hosts"] = r.hosts;
  DocJson certs = DocJson::array();
  for (const auto& c : r.certs) certs.push_back(cert_json(c));
  j["certificates"] = std::move(certs);
  DocJson bad = DocJson::array();
  for (const auto& p : r.problems)
    bad.push_back({{"host", p.host}, {"source", p.source}, {"message", p.message}});
  j["unreadable"] = std::move(bad);
  return j;
}

DocJson certs_renew_json(const CertsRenewPlan& p, const CertsRenewOutcome* o) {
  DocJson j;
  j["clusterDir"] = p.cluster ? p.cluster->cluster_dir : p.request.cluster_dir;
  j["masters"] = p.masters;
  j["run"] = p.run_id;
  if (!p.resumed.empty()) j["resumed"] = p.resumed;
  j["warnWithinDays"] = p.request.warn_within_days;
  DocJson steps = DocJson::array();
  for (const auto& s : p.steps) steps.push_back(certs_json_step_doc(s));
  j["steps"] = std::move(steps);
  j["before"] = certs_report_json(p.before);
  if (!o) return j;
  DocJson out;
  out["end"] = certs_json_end(o->end);
  DocJson done = DocJson::array();
  for (const auto& s : o->done) done.push_back(certs_json_step_doc(s));
  out["done"] = std::move(done);
  if (o->failed_step) out["failedStep"] = certs_json_step_doc(*o->failed_step);
  if (o->error) out["error"] = o->error->error.message;
  if (o->end == CertsRenewOutcome::End::Renewed) {
    out["verified"] = o->verified;
    out["adminConf"] = p.admin_conf;
    out["adminConfExpires"] = o->admin_conf_expires;
  }
  if (o->after) out["after"] = certs_report_json(*o->after);
  j["outcome"] = std::move(out);
  return j;
}

}  // namespace pai::deploy

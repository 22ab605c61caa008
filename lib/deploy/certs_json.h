#pragma once
// The -o json|yaml documents of paictl certs check|renew (docs/certs.md): every
// certificate read (host, source, name, subject, issuer, notBefore, notAfter,
// daysLeft, isCA, sans), what could not be read, and renew's steps and result.

#include "check/certs.h"
#include "deploy/certs_renew.h"
#include "deploy/install_json.h"

namespace pai::deploy {

// One certificate: {host, source, name, kubeconfig, subject, issuer, serial,
// notBefore, notAfter (RFC 3339), daysLeft, isCA, selfSigned, sans}.
DocJson cert_json(const check::CertInfo& c);
// {readAt, hosts, certificates: [...], unreadable: [{host, source, message}]}.
DocJson certs_report_json(const check::CertsReport& r);
// renew's plan ({masters, resumed, steps: [{step, host, skip, note}], before})
// and, once applied, its outcome ({end, done, error, verified, adminConf,
// adminConfExpires, after}).
DocJson certs_renew_json(const CertsRenewPlan& plan, const CertsRenewOutcome* outcome);

}  // namespace pai::deploy

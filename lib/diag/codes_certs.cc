// The codes of the cluster's certificates (K100-K149): `paictl certs check`
// and `paictl check cluster` (lib/check/certs.h).
#include "diag/codes_tables.h"

namespace pai::diag::codes_detail {

using diag::Severity;

const std::vector<CodeInfo>& certs_codes() {
  static const std::vector<CodeInfo> kCodes = {
      {.code = "K100",
       .name = "certificate-expired",
       .severity = Severity::Error,
       .reporter = "certs check, check cluster",
       .title = "A certificate of the cluster has expired",
       .meaning = "A certificate under a master's /etc/kubernetes/pki, a client certificate "
                  "embedded in one of its kubeconfigs (/etc/kubernetes/*.conf), or a kubelet's "
                  "client certificate is past its not-after date. Whatever presents it is "
                  "refused: an expired apiserver certificate takes the API down for every "
                  "client, an expired admin.conf locks the operator out, an expired kubelet "
                  "certificate makes its node NotReady.",
       .fix = "`paictl certs renew CLUSTER_DIR` renews the control plane's leaves (kubeadm certs "
              "renew all), restarts the control plane and fetches the new admin.conf. A CA is not "
              "renewed by kubeadm; a kubelet renews its own client certificate.",
       .example = "tb-master:/etc/kubernetes/pki/apiserver.crt: error[K100]: certificate "
                  "apiserver expired 3 days ago (2026-12-03 11:40 UTC)"},
      {.code = "K101",
       .name = "certificate-expires-soon",
       .severity = Severity::Error,
       .reporter = "certs check, check cluster",
       .title = "A certificate of the cluster expires within the warning window",
       .meaning = "A certificate expires in fewer days than --warn-within (30 by default). "
                  "kubeadm's leaves live one year; a cluster that is not upgraded within that "
                  "year (an upgrade renews them) loses its API when they expire.",
       .fix = "Run `paictl certs renew CLUSTER_DIR` before the date shown (or upgrade the "
              "cluster, which renews them too).",
       .example = "tb-master:/etc/kubernetes/pki/apiserver.crt: error[K101]: certificate "
                  "apiserver expires in 9 days (2026-12-16 11:40 UTC), within 30 days"},
      {.code = "K102",
       .name = "ca-expires-within-year",
       .severity = Severity::Warning,
       .reporter = "certs check, check cluster",
       .title = "A certificate authority of the cluster expires within a year",
       .meaning = "kubeadm's CAs (ca, front-proxy-ca, etcd/ca) live ten years and are never "
                  "renewed by `kubeadm certs renew`; once one expires, every certificate it "
                  "signed is refused with it. Rotating a CA takes planning (every leaf and "
                  "kubeconfig is signed again, and every node trusts the new CA).",
       .fix = "Plan a CA rotation (kubeadm's manual rotation of CA certificates) before the date "
              "shown.",
       .example = "tb-master:/etc/kubernetes/pki/ca.crt: warning[K102]: CA ca expires in 200 "
                  "days (2027-06-24 11:40 UTC), within a year"},
      {.code = "K103",
       .name = "certificate-unreadable",
       .severity = Severity::Error,
       .reporter = "certs check, check cluster",
       .title = "A certificate could not be read",
       .meaning = "A file that should hold a PEM certificate (a *.crt under /etc/kubernetes/pki, "
                  "the kubelet's client certificate) or a kubeconfig's client-certificate-data "
                  "holds no X.509 certificate paictl can parse, or the host's certificates could "
                  "not be listed at all (SSH, sudo).",
       .fix = "Look at the file on the host (`openssl x509 -noout -text -in FILE`); kubeadm "
              "certs renew writes a leaf again. For a host that could not be read, check SSH "
              "(`paictl check hosts`) and that the SSH user may run `sudo -n`.",
       .example = "tb-master:/etc/kubernetes/pki/front-proxy-client.crt: error[K103]: "
                  "unreadable certificate: no PEM certificate (no \"-----BEGIN CERTIFICATE-----\" "
                  "line; it starts with \"garbage\")"},
  };
  return kCodes;
}

}  // namespace pai::diag::codes_detail

#pragma once
// The cluster's certificates (docs/certs.md): every certificate under a
// master's /etc/kubernetes/pki, the client certificates embedded in its
// kubeconfigs (/etc/kubernetes/*.conf: client-certificate-data), and each
// node's kubelet client certificate (/var/lib/kubelet/pki/kubelet-client-
// current.pem), read in one SSH session per host by one script that prints
// them all (certificate blocks only: no private key leaves a host), and parsed
// here with OpenSSL's libcrypto. `paictl certs check` judges them (K100-K149),
// `paictl check cluster` reports their expiry, `paictl certs renew`
// (deploy/certs_renew.h) renews them.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.h"
#include "inventory/host_spec.h"
#include "remote/transport.h"
#include "util/result.h"

namespace pai::check {

// One certificate, as read from a host.
struct CertInfo {
  std::string host;  // the layout.yaml name of the host it was read on
  // Where it was read: a file ("/etc/kubernetes/pki/apiserver.crt"), or a
  // kubeconfig's user ("/etc/kubernetes/admin.conf:kubernetes-admin", the
  // file, a colon, the user's name).
  std::string source;
  // kubeadm's name for it where it has one ("apiserver", "front-proxy-ca",
  // "etcd-server", "admin.conf", "kubelet-client"), else the file's name
  // without ".crt".
  std::string name;
  bool kubeconfig = false;  // embedded in a kubeconfig (client-certificate-data)
  std::string subject;      // RFC 2253, e.g. "CN=kube-apiserver"
  std::string issuer;
  std::string serial;      // hexadecimal
  int64_t not_before = 0;  // seconds since 1970, UTC
  int64_t not_after = 0;
  // Whole days from the time it was read to not_after (rounded down; negative
  // once expired).
  int64_t days_left = 0;
  bool is_ca = false;             // basicConstraints CA:TRUE
  bool self_signed = false;       // subject == issuer
  std::vector<std::string> sans;  // "DNS:kubernetes", "IP:10.96.0.1"
};

// Something that should be a certificate and could not be read: a file that is
// no PEM certificate, a kubeconfig user whose client-certificate-data is no
// base64 of one, an output cut at its bound.
struct CertProblem {
  std::string host;
  std::string source;
  std::string message;
};

// Parses the first PEM certificate of `pem` ("-----BEGIN CERTIFICATE-----").
// `now_s` is what days_left counts from. Garbage is an error (Kind::Input)
// that says what was found instead ("no PEM certificate", "not an X.509
// certificate: ..."). The host, source and name are left empty.
util::Result<CertInfo> parse_certificate_pem(std::string_view pem, int64_t now_s);

// kubeadm's name for the certificate at `source` (see CertInfo::name).
std::string cert_name(std::string_view source);

// What the script prints at most per file, and in all (the exec's bound).
inline constexpr size_t kCertFileBytes = 64u << 10;
inline constexpr size_t kCertOutputBytes = 8u << 20;

// The script that prints one host's certificates: with `master`, every *.crt
// under /etc/kubernetes/pki and the user entries of /etc/kubernetes/*.conf
// (names and client-certificate-data only); on every host the certificate
// blocks of the kubelet's client certificate. Each item starts with a line
// "@@paictl-cert file|kubeconfig|missing PATH"; the output ends with
// "@@paictl-cert end". No private key is printed.
std::string cert_read_script(bool master);

// A host's certificates and what could not be read, from that script's output
// (`out`, read at `now_s`). An output without its end line (cut, or not the
// script's) is one problem for the host.
struct HostCerts {
  std::string host;
  std::vector<CertInfo> certs;
  std::vector<CertProblem> problems;
};
HostCerts parse_cert_script_output(const std::string& host, const std::string& out, int64_t now_s);

// Every host's certificates, in the hosts' order; hosts that could not be
// reached are problems too (their source is "ssh").
struct CertsReport {
  int64_t read_at = 0;  // seconds since 1970
  std::vector<CertInfo> certs;
  std::vector<CertProblem> problems;
  std::vector<std::string> hosts;  // the hosts read
};

// Reads the certificates of `hosts` (masters: PKI, kubeconfigs and the
// kubelet's; the others: the kubelet's), one session per host, at most
// `parallel` at a time, as root (sudo -n unless the SSH user is root).
CertsReport read_certs(const std::vector<inventory::HostSpec>& hosts, remote::Transport& transport,
                       int64_t now_s, size_t parallel = 16);

// The findings of a report (codes K100-K149, lib/diag/codes_certs.cc): K100 a
// certificate that expired, K101 one that expires within `warn_within_days`
// (errors), K102 a CA that expires within a year (a warning), K103 a
// certificate that could not be read (an error). `file` of each finding is
// "HOST:SOURCE" (a host that could not be read: "HOST").
diag::List certs_findings(const CertsReport& report, int64_t warn_within_days = 30);

}  // namespace pai::check

// The cluster's certificates: the script that prints them on a host, its
// output's parser, the X.509 parser (OpenSSL's libcrypto) and the findings.
#include "check/certs.h"

#include <arpa/inet.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>

#include "remote/executor.h"
#include "util/strings.h"

namespace pai::check {

namespace {

constexpr std::string_view kCertsMarker = "@@paictl-cert ";
constexpr int64_t kCertsDay = 86400;

struct CertsBioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct CertsX509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct CertsNamesFree {
  void operator()(GENERAL_NAMES* g) const { GENERAL_NAMES_free(g); }
};
struct CertsBnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};

// The oldest error of OpenSSL's queue in words (the queue is emptied).
std::string certs_openssl_error() {
  unsigned long e = ERR_get_error();
  std::string out;
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out = buf;
  }
  ERR_clear_error();
  return out.empty() ? "unreadable DER" : out;
}

std::string certs_name_text(const X509_NAME* name) {
  std::unique_ptr<BIO, CertsBioFree> bio(BIO_new(BIO_s_mem()));
  if (!bio) return {};
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 && data ? std::string(data, static_cast<size_t>(n)) : std::string();
}

util::Result<int64_t> certs_time(const ASN1_TIME* t, const char* what) {
  struct tm tm;
  std::memset(&tm, 0, sizeof tm);
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
    ERR_clear_error();
    return util::Error{std::string("not an X.509 certificate: its ") + what + " is unreadable", {}};
  }
  return static_cast<int64_t>(timegm(&tm));
}

std::string certs_ip_text(const ASN1_OCTET_STRING* ip) {
  const unsigned char* p = ASN1_STRING_get0_data(ip);
  int len = ASN1_STRING_length(ip);
  char buf[INET6_ADDRSTRLEN] = {0};
  if (len == 4 && inet_ntop(AF_INET, p, buf, sizeof buf)) return buf;
  if (len == 16 && inet_ntop(AF_INET6, p, buf, sizeof buf)) return buf;
  return "?";
}

std::vector<std::string> certs_sans(X509* x) {
  std::vector<std::string> out;
  std::unique_ptr<GENERAL_NAMES, CertsNamesFree> names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x, NID_subject_alt_name, nullptr, nullptr)));
  ERR_clear_error();
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(names.get(), i);
    if (g->type == GEN_DNS) {
      const ASN1_STRING* s = g->d.dNSName;
      out.push_back("DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                         static_cast<size_t>(ASN1_STRING_length(s))));
    } else if (g->type == GEN_IPADD) {
      out.push_back("IP:" + certs_ip_text(g->d.iPAddress));
    } else if (g->type == GEN_EMAIL) {
      const ASN1_STRING* s = g->d.rfc822Name;
      out.push_back("email:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                           static_cast<size_t>(ASN1_STRING_length(s))));
    } else if (g->type == GEN_URI) {
      const ASN1_STRING* s = g->d.uniformResourceIdentifier;
      out.push_back("URI:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                         static_cast<size_t>(ASN1_STRING_length(s))));
    }
  }
  return out;
}

// Whole days from now to t, rounded down.
int64_t certs_days_until(int64_t t, int64_t now) {
  int64_t d = t - now;
  return d >= 0 ? d / kCertsDay : -((-d + kCertsDay - 1) / kCertsDay);
}

// Strict base64 (whitespace skipped, '=' only at the end); nullopt-like error otherwise.
util::Result<std::string> certs_base64(std::string_view in) {
  if (auto out = util::base64_decode(in)) return *out;
  return util::Error{"client-certificate-data is not base64", {}};
}

std::string certs_unquote(std::string_view v) {
  v = util::trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    v = v.substr(1, v.size() - 2);
  return std::string(v);
}

// One kubeconfig's filtered lines (names and client-certificate-data under
// users:): its users' certificates, or problems.
void certs_parse_kubeconfig(const std::string& host, const std::string& path,
                            const std::vector<std::string_view>& lines, int64_t now,
                            HostCerts& out) {
  bool in_users = false;
  std::string user;
  for (auto raw : lines) {
    std::string_view line = raw;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    bool top = line.front() != ' ' && line.front() != '-';
    if (top) {
      in_users = line.substr(0, 6) == "users:";
      user.clear();
      continue;
    }
    if (!in_users) continue;
    std::string_view t = util::trim(line);
    bool item = t.substr(0, 2) == "- ";
    if (item) t = util::trim(t.substr(2));
    if (t.substr(0, 5) == "name:") {
      // A user's name is the entry's own key ("- name: X"), not a deeper one.
      if (item || line.find_first_not_of(' ') <= 2) user = certs_unquote(t.substr(5));
      continue;
    }
    if (t.substr(0, 24) != "client-certificate-data:") continue;
    std::string source = path + ":" + (user.empty() ? std::string("?") : user);
    auto der = certs_base64(certs_unquote(t.substr(24)));
    if (!der.ok()) {
      out.problems.push_back({host, source, der.error().message});
      continue;
    }
    auto info = parse_certificate_pem(*der, now);
    if (!info.ok()) {
      out.problems.push_back({host, source, "client-certificate-data: " + info.error().message});
      continue;
    }
    info->host = host;
    info->source = source;
    info->name = cert_name(path);
    info->kubeconfig = true;
    out.certs.push_back(std::move(info).value());
  }
}

}  // namespace

util::Result<CertInfo> parse_certificate_pem(std::string_view pem, int64_t now_s) {
  constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  size_t at = pem.find(kBegin);
  if (at == std::string_view::npos) {
    std::string seen(util::trim(pem.substr(0, 40)));
    for (char& c : seen)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
    return util::Error{seen.empty() ? "no PEM certificate: empty"
                                    : "no PEM certificate (no \"-----BEGIN CERTIFICATE-----\" "
                                      "line; it starts with \"" +
                                          seen + "\")",
                       {}};
  }
  pem = pem.substr(at);
  if (pem.size() > kCertFileBytes) pem = pem.substr(0, kCertFileBytes);
  std::unique_ptr<BIO, CertsBioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return util::Error{"out of memory reading a certificate", {}};
  std::unique_ptr<X509, CertsX509Free> x(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!x) return util::Error{"not an X.509 certificate: " + certs_openssl_error(), {}};
  CertInfo c;
  c.subject = certs_name_text(X509_get_subject_name(x.get()));
  c.issuer = certs_name_text(X509_get_issuer_name(x.get()));
  auto nb = certs_time(X509_get0_notBefore(x.get()), "notBefore");
  if (!nb.ok()) return std::move(nb).error();
  auto na = certs_time(X509_get0_notAfter(x.get()), "notAfter");
  if (!na.ok()) return std::move(na).error();
  c.not_before = *nb;
  c.not_after = *na;
  c.days_left = certs_days_until(c.not_after, now_s);
  if (const ASN1_INTEGER* serial = X509_get0_serialNumber(x.get())) {
    std::unique_ptr<BIGNUM, CertsBnFree> bn(ASN1_INTEGER_to_BN(serial, nullptr));
    if (bn) {
      char* hex = BN_bn2hex(bn.get());
      if (hex) {
        c.serial = hex;
        OPENSSL_free(hex);
      }
    }
  }
  c.is_ca = (X509_get_extension_flags(x.get()) & EXFLAG_CA) != 0;
  c.self_signed = X509_NAME_cmp(X509_get_subject_name(x.get()), X509_get_issuer_name(x.get())) == 0;
  c.sans = certs_sans(x.get());
  ERR_clear_error();
  return c;
}

std::string cert_name(std::string_view source) {
  std::string_view path = source;
  size_t colon = path.find(':');
  if (colon != std::string_view::npos) path = path.substr(0, colon);
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base == "kubelet-client-current.pem") return "kubelet-client";
  if (base.size() > 5 && base.substr(base.size() - 5) == ".conf") return std::string(base);
  if (base.size() > 4 &&
      (base.substr(base.size() - 4) == ".crt" || base.substr(base.size() - 4) == ".pem"))
    base.remove_suffix(4);
  // kubeadm names pki/etcd/X "etcd-X".
  if (path.find("/pki/etcd/") != std::string_view::npos) return "etcd-" + std::string(base);
  return std::string(base);
}

std::string cert_read_script(bool master) {
  // Only certificate blocks are printed (a kubelet's PEM holds its key too),
  // each file at most kCertFileBytes; kubeconfigs only their users' names and
  // client-certificate-data lines.
  std::string s =
      "pem() { head -c " + std::to_string(kCertFileBytes) +
      " \"$1\" | sed -n '/^-----BEGIN CERTIFICATE-----/,/^-----END CERTIFICATE-----/p'; }\n";
  if (master)
    s += "if [ -d /etc/kubernetes/pki ]; then\n"
         "  find /etc/kubernetes/pki -name '*.crt' -type f | LC_ALL=C sort | while read -r f; do\n"
         "    echo \"@@paictl-cert file $f\"; pem \"$f\"\n"
         "  done\n"
         "fi\n"
         "for f in /etc/kubernetes/*.conf; do\n"
         "  [ -f \"$f\" ] || continue\n"
         "  echo \"@@paictl-cert kubeconfig $f\"\n"
         "  head -c " +
         std::to_string(kCertFileBytes) +
         " \"$f\" | grep -E "
         "'^(apiVersion|clusters|contexts|current-context|kind|preferences|users):|^[ -]*name:|"
         "^[ ]*client-certificate-data:'\n"
         "done\n";
  s += "f=/var/lib/kubelet/pki/kubelet-client-current.pem\n"
       "if [ -e \"$f\" ]; then echo \"@@paictl-cert file $f\"; pem \"$f\"; "
       "else echo \"@@paictl-cert missing $f\"; fi\n"
       "echo '@@paictl-cert end'\n";
  return s;
}

HostCerts parse_cert_script_output(const std::string& host, const std::string& out, int64_t now_s) {
  HostCerts h;
  h.host = host;
  std::vector<std::string_view> lines = util::split(out, '\n');
  bool ended = false;
  size_t i = 0;
  while (i < lines.size()) {
    std::string_view line = lines[i];
    if (line.substr(0, kCertsMarker.size()) != kCertsMarker) {
      ++i;
      continue;
    }
    std::string_view rest = line.substr(kCertsMarker.size());
    if (rest == "end") {
      ended = true;
      break;
    }
    size_t sp = rest.find(' ');
    std::string_view kind = rest.substr(0, sp);
    std::string path = sp == std::string_view::npos ? "" : std::string(rest.substr(sp + 1));
    size_t j = i + 1;
    while (j < lines.size() && lines[j].substr(0, kCertsMarker.size()) != kCertsMarker) ++j;
    std::vector<std::string_view> body(lines.begin() + static_cast<long>(i) + 1,
                                       lines.begin() + static_cast<long>(j));
    i = j;
    if (kind == "missing") continue;
    if (kind == "kubeconfig") {
      certs_parse_kubeconfig(host, path, body, now_s, h);
      continue;
    }
    if (kind != "file") continue;
    std::string pem;
    for (auto b : body) {
      pem.append(b);
      pem += '\n';
    }
    auto info = parse_certificate_pem(pem, now_s);
    if (!info.ok()) {
      h.problems.push_back({host, path, info.error().message});
      continue;
    }
    info->host = host;
    info->source = path;
    info->name = cert_name(path);
    h.certs.push_back(std::move(info).value());
  }
  if (!ended)
    h.problems.push_back({host, "ssh",
                          "the certificates' listing ended early (cut at " +
                              util::format_bytes(static_cast<double>(kCertOutputBytes)) +
                              ", or not the script's output)"});
  return h;
}

CertsReport read_certs(const std::vector<inventory::HostSpec>& hosts, remote::Transport& transport,
                       int64_t now_s, size_t parallel) {
  CertsReport r;
  r.read_at = now_s;
  std::vector<HostCerts> per(hosts.size());
  remote::ExecutorOptions opt;
  opt.parallel = std::max<size_t>(1, parallel);
  remote::run_parallel(hosts.size(), opt, [&](size_t k) {
    const inventory::HostSpec& h = hosts[k];
    remote::ExecRequest req;
    std::string q = util::shell_quote(cert_read_script(h.master));
    req.command = h.target.endpoint.user == "root" || h.target.endpoint.user.empty()
                      ? "sh -c " + q
                      : "sudo -n sh -c " + q;
    req.timeout_ms = 60000;
    req.max_output = kCertOutputBytes;
    auto res = transport.exec(h.target, req);
    if (!res.ok()) {
      per[k].host = h.name;
      per[k].problems.push_back({h.name, "ssh", res.error.empty() ? "unreachable" : res.error});
      return;
    }
    per[k] = parse_cert_script_output(h.name, res.out, now_s);
    if (res.exit_status != 0 && per[k].certs.empty())
      per[k].problems.push_back(
          {h.name, "ssh",
           "the certificates' listing exited with " + std::to_string(res.exit_status) +
               (res.err.empty() ? std::string() : ": " + std::string(util::trim(res.err)))});
  });
  for (size_t k = 0; k < hosts.size(); ++k) {
    r.hosts.push_back(hosts[k].name);
    for (auto& c : per[k].certs) r.certs.push_back(std::move(c));
    for (auto& p : per[k].problems) r.problems.push_back(std::move(p));
  }
  return r;
}

namespace {

std::string certs_date(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string certs_days(int64_t d) {
  return std::to_string(d) + (d == 1 || d == -1 ? " day" : " days");
}

std::string certs_hint(const CertInfo& c) {
  if (c.is_ca)
    return "kubeadm certs renew does not renew a CA: rotate it (new CA, then every certificate "
           "it signed) before it expires";
  if (c.name == "kubelet-client")
    return "the kubelet renews its client certificate itself (rotateCertificates); restart the "
           "kubelet on " +
           c.host + ", or rejoin the node (paictl node remove, then node add)";
  return "paictl certs renew CLUSTER_DIR renews the control plane's certificates (kubeadm certs "
         "renew all) and restarts it";
}

}  // namespace

diag::List certs_findings(const CertsReport& report, int64_t warn_within_days) {
  diag::List list;
  for (const auto& c : report.certs) {
    std::string what = (c.is_ca ? "CA " : "certificate ") + c.name;
    diag::Diagnostic d;
    d.file = c.host + ":" + c.source;
    d.hint = certs_hint(c);
    if (c.not_after <= report.read_at) {
      d.code = "K100";
      d.severity = diag::Severity::Error;
      d.message = what + " expired " + certs_days((report.read_at - c.not_after) / kCertsDay) +
                  " ago (" + certs_date(c.not_after) + ")";
    } else if (c.days_left < warn_within_days) {
      d.code = "K101";
      d.severity = diag::Severity::Error;
      d.message = what + " expires in " + certs_days(c.days_left) + " (" + certs_date(c.not_after) +
                  "), within " + certs_days(warn_within_days);
    } else if (c.is_ca && c.days_left < 365) {
      d.code = "K102";
      d.severity = diag::Severity::Warning;
      d.message = what + " expires in " + certs_days(c.days_left) + " (" + certs_date(c.not_after) +
                  "), within a year";
    } else {
      continue;
    }
    list.add(std::move(d));
  }
  for (const auto& p : report.problems) {
    diag::Diagnostic d;
    d.code = "K103";
    d.severity = diag::Severity::Error;
    d.file = p.source == "ssh" ? p.host : p.host + ":" + p.source;
    d.message = p.source == "ssh" ? "the certificates could not be read: " + p.message
                                  : "unreadable certificate: " + p.message;
    d.hint = p.source == "ssh" ? "check that the host answers over SSH (paictl check hosts) and "
                                 "that the SSH user may run sudo -n"
                               : "look at the file on " + p.host +
                                     " (openssl x509 -noout -text -in FILE); kubeadm certs "
                                     "renew writes it again";
    list.add(std::move(d));
  }
  return list;
}

}  // namespace pai::check

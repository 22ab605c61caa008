// lib/check/certs: the X.509 parser (certificates made with openssl,
// tests/data/certs/README), the script's output, the reading over a scripted
// transport and the findings (K100-K103).
#include "check/certs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/scripted_transport.h"
#include "test_files.h"

namespace pai::check {
namespace {

std::string certs_data(const std::string& name) {
  return test::slurp(std::string(PAI_TEST_DATA) + "/certs/" + name);
}

TEST(CertsParse, ReadsSubjectIssuerDatesSansAndCa) {
  auto ca = parse_certificate_pem(certs_data("ca.crt"), 0);
  ASSERT_TRUE(ca.ok()) << ca.error().message;
  EXPECT_EQ(ca->subject, "CN=kubernetes");
  EXPECT_EQ(ca->issuer, "CN=kubernetes");
  EXPECT_TRUE(ca->is_ca);
  EXPECT_TRUE(ca->self_signed);
  EXPECT_EQ(ca->not_after - ca->not_before, 3650LL * 86400);

  auto a = parse_certificate_pem(certs_data("apiserver.crt"), 0);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->subject, "CN=kube-apiserver");
  EXPECT_EQ(a->issuer, "CN=kubernetes");
  EXPECT_FALSE(a->is_ca);
  EXPECT_FALSE(a->self_signed);
  EXPECT_EQ(a->not_after - a->not_before, 365LL * 86400);
  EXPECT_FALSE(a->serial.empty());
  std::vector<std::string> want = {"DNS:tb-master", "DNS:kubernetes",
                                   "DNS:kubernetes.default.svc.cluster.local", "IP:10.96.0.1",
                                   "IP:127.0.51.2"};
  EXPECT_EQ(a->sans, want);
  // Days left count from the time given, rounded down; negative once expired.
  auto later = parse_certificate_pem(certs_data("apiserver.crt"), a->not_before + 100 * 86400 + 5);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->days_left, 264);
  auto expired = parse_certificate_pem(certs_data("apiserver.crt"), a->not_after + 3600);
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(expired->days_left, -1);

  auto admin = parse_certificate_pem(certs_data("admin-client.crt"), 0);
  ASSERT_TRUE(admin.ok());
  EXPECT_EQ(admin->subject, "CN=kubernetes-admin,O=system:masters");
}

TEST(CertsParse, RefusesGarbageByName) {
  auto empty = parse_certificate_pem("", 0);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "no PEM certificate: empty");
  auto text = parse_certificate_pem("hello world\n", 0);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("no PEM certificate"), std::string::npos);
  EXPECT_NE(text.error().message.find("hello world"), std::string::npos);
  auto bad = parse_certificate_pem(
      "-----BEGIN CERTIFICATE-----\nAAAAbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("not an X.509 certificate: ", 0), 0u) << bad.error().message;
  // A certificate cut in the middle.
  std::string pem = certs_data("ca.crt");
  auto cut = parse_certificate_pem(pem.substr(0, pem.size() / 2), 0);
  EXPECT_FALSE(cut.ok());
  // Binary bytes are not echoed as they are.
  auto bin = parse_certificate_pem(std::string("\x01\x02\xff", 3), 0);
  ASSERT_FALSE(bin.ok());
  EXPECT_EQ(bin.error().message.find('\xff'), std::string::npos);
}

TEST(CertsParse, KubeadmNames) {
  EXPECT_EQ(cert_name("/etc/kubernetes/pki/apiserver.crt"), "apiserver");
  EXPECT_EQ(cert_name("/etc/kubernetes/pki/etcd/server.crt"), "etcd-server");
  EXPECT_EQ(cert_name("/etc/kubernetes/admin.conf:kubernetes-admin"), "admin.conf");
  EXPECT_EQ(cert_name("/var/lib/kubelet/pki/kubelet-client-current.pem"), "kubelet-client");
}

// What the script prints, built from the test's files.
std::string certs_script_output() {
  std::string conf = certs_data("admin.conf");
  std::string filtered;
  for (auto line : {std::string("apiVersion: v1"), std::string("users:"),
                    std::string("- name: kubernetes-admin")}) {
    filtered += line + "\n";
  }
  size_t at = conf.find("    client-certificate-data:");
  filtered += conf.substr(at, conf.find('\n', at) - at + 1);
  return "@@paictl-cert file /etc/kubernetes/pki/ca.crt\n" + certs_data("ca.crt") +
         "@@paictl-cert file /etc/kubernetes/pki/apiserver.crt\n" + certs_data("apiserver.crt") +
         "@@paictl-cert file /etc/kubernetes/pki/broken.crt\n" +
         "@@paictl-cert kubeconfig /etc/kubernetes/admin.conf\n" + filtered +
         "@@paictl-cert missing /var/lib/kubelet/pki/kubelet-client-current.pem\n" +
         "@@paictl-cert end\n";
}

TEST(CertsScript, ParsesFilesKubeconfigsAndProblems) {
  HostCerts h = parse_cert_script_output("m1", certs_script_output(), 0);
  ASSERT_EQ(h.certs.size(), 3u);
  EXPECT_EQ(h.certs[0].name, "ca");
  EXPECT_EQ(h.certs[0].host, "m1");
  EXPECT_EQ(h.certs[1].source, "/etc/kubernetes/pki/apiserver.crt");
  EXPECT_EQ(h.certs[2].source, "/etc/kubernetes/admin.conf:kubernetes-admin");
  EXPECT_EQ(h.certs[2].name, "admin.conf");
  EXPECT_TRUE(h.certs[2].kubeconfig);
  EXPECT_EQ(h.certs[2].subject, "CN=kubernetes-admin,O=system:masters");
  ASSERT_EQ(h.problems.size(), 1u);
  EXPECT_EQ(h.problems[0].source, "/etc/kubernetes/pki/broken.crt");
  EXPECT_EQ(h.problems[0].message, "no PEM certificate: empty");

  // Cut before its end line: what came is kept, and the cut is a problem.
  std::string out = certs_script_output();
  HostCerts cut = parse_cert_script_output("m1", out.substr(0, out.find("@@paictl-cert end")), 0);
  EXPECT_EQ(cut.certs.size(), 3u);
  ASSERT_EQ(cut.problems.size(), 2u);
  EXPECT_EQ(cut.problems[1].source, "ssh");

  // client-certificate-data that is no base64, or base64 of no certificate.
  HostCerts bad = parse_cert_script_output(
      "m1",
      "@@paictl-cert kubeconfig /etc/kubernetes/scheduler.conf\nusers:\n- name: s\n  user:\n"
      "    client-certificate-data: $$$\n- name: t\n    client-certificate-data: aGVsbG8=\n"
      "@@paictl-cert end\n",
      0);
  EXPECT_TRUE(bad.certs.empty());
  ASSERT_EQ(bad.problems.size(), 2u);
  EXPECT_EQ(bad.problems[0].source, "/etc/kubernetes/scheduler.conf:s");
  EXPECT_EQ(bad.problems[0].message, "client-certificate-data is not base64");
  EXPECT_EQ(bad.problems[1].source, "/etc/kubernetes/scheduler.conf:t");
}

TEST(CertsScript, PrintsNoKey) {
  std::string s = cert_read_script(true);
  // Only certificate blocks of PEM files, only names and the client
  // certificate of kubeconfigs.
  EXPECT_NE(s.find("/^-----BEGIN CERTIFICATE-----/,/^-----END CERTIFICATE-----/p"),
            std::string::npos);
  EXPECT_EQ(s.find("client-key-data"), std::string::npos);
  EXPECT_NE(s.find("/etc/kubernetes/pki"), std::string::npos);
  EXPECT_EQ(cert_read_script(false).find("/etc/kubernetes/pki"), std::string::npos);
  EXPECT_NE(cert_read_script(false).find("kubelet-client-current.pem"), std::string::npos);
}

inventory::HostSpec certs_host(const std::string& name, bool master) {
  inventory::HostSpec h;
  h.name = name;
  h.master = master;
  h.target.endpoint.name = name;
  h.target.endpoint.user = "root";
  return h;
}

TEST(CertsRead, OneSessionPerHostAndUnreachableHosts) {
  testing::ScriptedTransport t;
  t.on("/etc/kubernetes/pki", {.out = certs_script_output()});
  std::string kubelet = "@@paictl-cert file /var/lib/kubelet/pki/kubelet-client-current.pem\n" +
                        certs_data("admin-client.crt") + "@@paictl-cert end\n";
  t.on("kubelet-client-current.pem", {.out = kubelet}, "w1");
  t.unreachable("w2");
  CertsReport r =
      read_certs({certs_host("m1", true), certs_host("w1", false), certs_host("w2", false)}, t, 0);
  EXPECT_EQ(t.calls_to("m1").size(), 1u);
  EXPECT_EQ(t.calls_to("w1").size(), 1u);
  ASSERT_EQ(r.certs.size(), 4u);
  EXPECT_EQ(r.certs[3].host, "w1");
  EXPECT_EQ(r.certs[3].name, "kubelet-client");
  ASSERT_EQ(r.problems.size(), 2u);
  EXPECT_EQ(r.problems[1].host, "w2");
  EXPECT_EQ(r.problems[1].source, "ssh");
  // The master's session reads the PKI, a worker's does not.
  EXPECT_EQ(t.calls_to("w1")[0].script.find("/etc/kubernetes/pki"), std::string::npos);
}

TEST(CertsFindings, ExpiredSoonCaAndUnreadable) {
  auto ca = parse_certificate_pem(certs_data("ca.crt"), 0);
  auto leaf = parse_certificate_pem(certs_data("apiserver.crt"), 0);
  ASSERT_TRUE(ca.ok() && leaf.ok());
  CertsReport r;
  auto add = [&](CertInfo c, const std::string& name, int64_t now) {
    c.host = "m1";
    c.name = name;
    c.source = "/etc/kubernetes/pki/" + name + ".crt";
    c.days_left = (c.not_after - now) >= 0 ? (c.not_after - now) / 86400
                                           : -((now - c.not_after + 86399) / 86400);
    r.certs.push_back(c);
  };
  int64_t now = leaf->not_after - 10 * 86400 - 60;  // the leaf: 10 days left
  r.read_at = now;
  add(*leaf, "apiserver", now);
  add(*ca, "ca", now);  // ~9 years left: nothing
  CertInfo old = *leaf;
  old.not_after = now - 3 * 86400;
  add(old, "front-proxy-client", now);
  CertInfo oldca = *ca;
  oldca.not_after = now + 200 * 86400 + 60;
  add(oldca, "front-proxy-ca", now);
  r.problems.push_back({"m1", "/etc/kubernetes/pki/sa.crt", "no PEM certificate: empty"});
  diag::List l = certs_findings(r, 30);
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l.items()[0].code, "K101");
  EXPECT_EQ(l.items()[0].file, "m1:/etc/kubernetes/pki/apiserver.crt");
  EXPECT_NE(l.items()[0].message.find("certificate apiserver expires in 10 days"),
            std::string::npos)
      << l.items()[0].message;
  EXPECT_EQ(l.items()[1].code, "K100");
  EXPECT_NE(l.items()[1].message.find("expired 3 days ago"), std::string::npos);
  EXPECT_EQ(l.items()[2].code, "K102");
  EXPECT_EQ(l.items()[2].severity, diag::Severity::Warning);
  EXPECT_NE(l.items()[2].message.find("CA front-proxy-ca expires in 200 days"), std::string::npos);
  EXPECT_EQ(l.items()[3].code, "K103");
  EXPECT_EQ(l.count(diag::Severity::Error), 3u);
  // A narrower window: the leaf with 10 days left is no finding.
  diag::List narrow = certs_findings(r, 7);
  EXPECT_EQ(narrow.size(), 3u);
}

}  // namespace
}  // namespace pai::check

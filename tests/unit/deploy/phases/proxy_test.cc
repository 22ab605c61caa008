// The `proxy` phase over the scripted transport.

#include <gtest/gtest.h>

#include "deploy/proxy.h"
#include "phase_fixture.h"
#include "util/sha256.h"

namespace pai::deploy::phase_test {
namespace {

InstallSettings proxy_install_settings() {
  InstallSettings s = install_settings();
  s.proxy.http = "http://ops:s3cret-pw@proxy.corp:3128";
  s.proxy.https = s.proxy.http;
  s.proxy.no_proxy = {"localhost", ".svc"};
  s.registry_mirrors = {{"docker.io", {"https://mirror.corp"}}};
  return s;
}

TEST(ProxyPhase, WritesTheFilesOnStdinNeverInTheCommandOrThePlan) {
  InstallSettings s = proxy_install_settings();
  auto phases = install_phases(s);
  Phase& proxy = named(phases, "proxy");
  ScriptedHosts run;
  HostRun& w = run.add(worker_spec("w1"));
  auto o = observe(proxy, w);
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.needs, (std::vector<std::string>{
                         "write /etc/apt/apt.conf.d/95paictl-proxy",
                         "write /etc/containerd/certs.d/docker.io/hosts.toml",
                         "write /etc/systemd/system/containerd.service.d/paictl-proxy.conf",
                         "write /etc/systemd/system/kubelet.service.d/paictl-proxy.conf"}));
  ASSERT_TRUE(proxy.apply(w, o.needs).ok());
  const auto call = run.transport.calls().back();
  // The password is in the files, which go on stdin; never in the command.
  EXPECT_EQ(call.script.find("s3cret-pw"), std::string::npos);
  EXPECT_NE(call.input.find("Acquire::http::Proxy \"http://ops:s3cret-pw@proxy.corp:3128\";"),
            std::string::npos);
  EXPECT_NE(call.script.find("(umask 077; i=0; while"), std::string::npos);
  EXPECT_NE(call.script.find("chmod 600 /etc/systemd/system/kubelet.service.d/paictl-proxy.conf"),
            std::string::npos);
  EXPECT_NE(call.script.find("chmod 644 /etc/containerd/certs.d/docker.io/hosts.toml"),
            std::string::npos);
  EXPECT_NE(
      call.script.find("systemctl daemon-reload\n"
                       "if systemctl is-active -q containerd; then systemctl restart "
                       "containerd; fi\n"
                       "if systemctl is-active -q kubelet; then systemctl restart kubelet; fi\n"),
      std::string::npos);
}

TEST(ProxyPhase, AReRunChangesNothingAndARemovedProxyIsRemoved) {
  InstallSettings s = proxy_install_settings();
  auto files = proxy_and_mirror_files(s.proxy, s.registry_mirrors);
  std::string out;
  for (const auto& [path, content] : files)
    out += "sum:" + path + "=" + util::sha256_hex(content) + "\n";
  out += "ours:/etc/containerd/certs.d/docker.io/hosts.toml=1\n";
  for (const char* f : {kAptProxyFile, kContainerdProxyDropIn, kKubeletProxyDropIn})
    out += std::string("mode:") + f + "=600\n";
  {
    auto phases = install_phases(s);
    Phase& proxy = named(phases, "proxy");
    ScriptedHosts run;
    HostRun& w = run.add(worker_spec("w1"));
    run.transport.on("sha256sum", {.out = out});
    EXPECT_TRUE(observe(proxy, w).needs.empty());
    // A drop-in someone made world-readable is written again.
    std::string loose = out;
    loose.replace(loose.find(std::string("mode:") + kKubeletProxyDropIn + "=600"),
                  std::string("mode:").size() + std::string(kKubeletProxyDropIn).size() + 4,
                  std::string("mode:") + kKubeletProxyDropIn + "=644");
    run.transport.on("sha256sum", {.out = loose});
    EXPECT_EQ(observe(proxy, w).needs,
              std::vector<std::string>{"write " + std::string(kKubeletProxyDropIn)});
  }
  // The proxy and the mirror taken out of config.yaml: paictl's files removed,
  // and only the drop-ins' services restarted.
  InstallSettings none = install_settings();
  auto phases = install_phases(none);
  Phase& proxy = named(phases, "proxy");
  ScriptedHosts run;
  HostRun& w = run.add(worker_spec("w1"));
  run.transport.on("sha256sum", {.out = out});
  auto o = observe(proxy, w);
  EXPECT_EQ(o.needs, (std::vector<std::string>{
                         "remove /etc/apt/apt.conf.d/95paictl-proxy",
                         "remove /etc/systemd/system/containerd.service.d/paictl-proxy.conf",
                         "remove /etc/systemd/system/kubelet.service.d/paictl-proxy.conf",
                         "remove /etc/containerd/certs.d/docker.io/hosts.toml"}));
  ASSERT_TRUE(proxy.apply(w, o.needs).ok());
  std::string script = run.transport.calls().back().script;
  EXPECT_NE(script.find("rm -f /etc/containerd/certs.d/docker.io/hosts.toml\nrmdir "
                        "/etc/containerd/certs.d/docker.io"),
            std::string::npos);
  EXPECT_NE(script.find("then systemctl restart kubelet"), std::string::npos);
  // Nothing configured and nothing there: nothing to do.
  run.transport.on("sha256sum", {.out = ""});
  EXPECT_TRUE(observe(proxy, w).needs.empty());
}

}  // namespace
}  // namespace pai::deploy::phase_test

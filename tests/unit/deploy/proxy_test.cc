// What install writes for config.yaml's proxies and registry mirrors.

#include "deploy/proxy.h"

#include <gtest/gtest.h>

namespace pai::deploy {
namespace {

ProxySettings proxy_settings() {
  ProxySettings p;
  p.http = "http://ops:p%40ss@proxy.corp:3128";
  p.https = p.http;
  p.no_proxy = complete_no_proxy({".corp.example.com", "apt.corp"}, "10.244.0.0/16", "10.96.0.0/12",
                                 {"10.0.0.1", "10.0.0.2"}, {"master", "w1"}, "lb.corp:6443");
  return p;
}

TEST(Proxy, NoProxyIsCompletedWithTheClustersOwnRangesAndNames) {
  auto p = proxy_settings();
  EXPECT_EQ(p.no_proxy,
            (std::vector<std::string>{".corp.example.com", "apt.corp", "localhost", "127.0.0.1",
                                      "10.244.0.0/16", "10.96.0.0/12", "10.0.0.1", "10.0.0.2",
                                      "master", "w1", "lb.corp", ".svc", ".cluster.local"}));
  // Each once, the operator's first.
  auto again = complete_no_proxy({"localhost", "10.0.0.1"}, "10.244.0.0/16", "10.96.0.0/12",
                                 {"10.0.0.1"}, {"master"}, "");
  EXPECT_EQ(again, (std::vector<std::string>{"localhost", "10.0.0.1", "127.0.0.1", "10.244.0.0/16",
                                             "10.96.0.0/12", "master", ".svc", ".cluster.local"}));
}

TEST(Proxy, AptGetsTheProxiesAndDirectForSingleHosts) {
  std::string apt = render_apt_proxy(proxy_settings());
  EXPECT_EQ(apt.rfind(kWrittenByPaictl, 0), 0u);
  EXPECT_NE(apt.find("Acquire::http::Proxy \"http://ops:p%40ss@proxy.corp:3128\";\n"),
            std::string::npos);
  EXPECT_NE(apt.find("Acquire::https::Proxy \"http://ops:p%40ss@proxy.corp:3128\";\n"),
            std::string::npos);
  EXPECT_NE(apt.find("Acquire::http::Proxy::apt.corp \"DIRECT\";\n"), std::string::npos);
  EXPECT_NE(apt.find("Acquire::https::Proxy::10.0.0.2 \"DIRECT\";\n"), std::string::npos);
  // Domains and ranges are not apt's: no line for them.
  EXPECT_EQ(apt.find("corp.example.com"), std::string::npos);
  EXPECT_EQ(apt.find("10.244.0.0"), std::string::npos);
  EXPECT_EQ(render_apt_proxy(ProxySettings{}), "");
}

TEST(Proxy, DropInSetsBothCasesEscapedForSystemd) {
  std::string d = render_proxy_dropin(proxy_settings());
  EXPECT_NE(d.find("\n[Service]\n"), std::string::npos);
  // systemd would expand %4 as a specifier: '%' doubled.
  EXPECT_NE(d.find("Environment=\"HTTP_PROXY=http://ops:p%%40ss@proxy.corp:3128\" "
                   "\"http_proxy=http://ops:p%%40ss@proxy.corp:3128\"\n"),
            std::string::npos);
  EXPECT_NE(d.find("Environment=\"NO_PROXY=.corp.example.com,apt.corp,localhost,127.0.0.1,"
                   "10.244.0.0/16,10.96.0.0/12,10.0.0.1,10.0.0.2,master,w1,lb.corp,.svc,"
                   ".cluster.local\" \"no_proxy="),
            std::string::npos);
  ProxySettings only_http;
  only_http.http = "http://proxy:3128";
  std::string o = render_proxy_dropin(only_http);
  EXPECT_EQ(o.find("HTTPS_PROXY"), std::string::npos);
  EXPECT_EQ(o.find("NO_PROXY"), std::string::npos);
  EXPECT_EQ(render_proxy_dropin(ProxySettings{}), "");
}

TEST(Proxy, HostsTomlIsContainerdsFormat) {
  EXPECT_EQ(render_hosts_toml("docker.io", {"https://mirror.corp/", "http://10.0.0.5:5000"}),
            std::string(kWrittenByPaictl) +
                " (config.yaml containerd_registry_mirrors): the mirrors of docker.io, tried in "
                "order before it.\n"
                "server = \"https://registry-1.docker.io\"\n"
                "\n[host.\"https://mirror.corp\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
                "\n[host.\"http://10.0.0.5:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n");
  EXPECT_NE(render_hosts_toml("nvcr.io", {"https://m"}).find("server = \"https://nvcr.io\"\n"),
            std::string::npos);
  EXPECT_EQ(render_hosts_toml("_default", {"https://m"}).find("server ="), std::string::npos);
}

TEST(Proxy, TheFilesOfAClusterWithoutAProxyAreEmpty) {
  auto files = proxy_and_mirror_files(ProxySettings{}, {{"registry.k8s.io", {"https://m"}}});
  EXPECT_EQ(files.size(), 4u);
  EXPECT_EQ(files[kAptProxyFile], "");
  EXPECT_EQ(files[kContainerdProxyDropIn], "");
  EXPECT_EQ(files[kKubeletProxyDropIn], "");
  EXPECT_NE(files["/etc/containerd/certs.d/registry.k8s.io/hosts.toml"], "");
}

}  // namespace
}  // namespace pai::deploy

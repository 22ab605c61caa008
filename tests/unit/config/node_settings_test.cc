// Proxies, mirrors, labels and taints: the checks of check config (L080-L088).

#include "config/node_settings.h"

#include <gtest/gtest.h>

namespace pai::config {
namespace {

TEST(NodeSettings, ProxyUrls) {
  for (const char* ok :
       {"http://proxy:3128", "http://proxy.example.com:3128/", "https://10.0.0.1:8443",
        "http://ops:s3cret@proxy:3128", "http://user@proxy", "http://[fd00::1]:3128"})
    EXPECT_TRUE(check_proxy_url(ok).ok()) << ok;
  for (const char* bad :
       {"proxy:3128", "ops:pw@proxy:3128", "socks5://proxy:1080", "http://proxy:99999",
        "http://proxy:3128/path", "http://", "http://@proxy", "http://pro xy:3128"})
    EXPECT_FALSE(check_proxy_url(bad).ok()) << bad;
}

TEST(NodeSettings, CredentialsAreMaskedAndFound) {
  EXPECT_EQ(mask_url_credentials("http://ops:s3cret@proxy:3128"), "http://***@proxy:3128");
  EXPECT_EQ(mask_url_credentials("http://proxy:3128"), "http://proxy:3128");
  EXPECT_EQ(mask_url_credentials("ops:s3cret@proxy:3128"), "***@proxy:3128");
  // An '@' in the password: everything up to the last '@' before the host is hidden.
  EXPECT_EQ(mask_url_credentials("http://ops:p@ss@proxy:3128/"), "http://***@proxy:3128/");
  EXPECT_EQ(url_credentials("http://ops:p@ss@proxy:3128/"), "ops:p@ss");
  EXPECT_EQ(url_credentials("http://proxy:3128"), "");
}

TEST(NodeSettings, NoProxyEntries) {
  EXPECT_EQ(split_no_proxy(" a.b , 10.0.0.0/8,,c "),
            (std::vector<std::string>{"a.b", "10.0.0.0/8", "", "c"}));
  EXPECT_TRUE(split_no_proxy("  ").empty());
  for (const char* ok : {"localhost", ".svc", ".cluster.local", "*.corp.example.com", "10.0.0.1",
                         "10.244.0.0/16", "registry:5000", "*", "::1", "fd00::/8"})
    EXPECT_TRUE(check_no_proxy_entry(ok).ok()) << ok;
  for (const char* bad : {"", "http://registry", "10.0.0.0/33", "a b", "user@host", "a..b",
                          "10.0.0.0/x", "-bad.example.com"})
    EXPECT_FALSE(check_no_proxy_entry(bad).ok()) << bad;
}

TEST(NodeSettings, RegistriesAndMirrors) {
  for (const char* ok : {"registry.example.com", "10.0.0.5:5000", "localhost:5000", "docker.io"})
    EXPECT_TRUE(check_registry_host(ok).ok()) << ok;
  for (const char* bad : {"https://registry.example.com", "registry/images", "reg:0", ""})
    EXPECT_FALSE(check_registry_host(bad).ok()) << bad;
  for (const char* ok : {"https://mirror.example.com", "http://10.0.0.5:5000",
                         "https://mirror.example.com/v2/proxy"})
    EXPECT_TRUE(check_mirror_url(ok).ok()) << ok;
  for (const char* bad : {"mirror.example.com", "ftp://m", "https://u:p@mirror"})
    EXPECT_FALSE(check_mirror_url(bad).ok()) << bad;
}

TEST(NodeSettings, LabelKeysAndValues) {
  for (std::string ok :
       {std::string("rack"), std::string("example.com/rack"), std::string("a.b-c/X_y.z"),
        std::string("node-role.kubernetes.io/gpu"), std::string(63, 'a')})
    EXPECT_TRUE(check_label_key(ok).ok()) << ok;
  std::string long_prefix = std::string(250, 'a') + ".com/x";
  for (std::string bad :
       {std::string(""), std::string("-rack"), std::string("rack-"),
        std::string("Example.com/rack"), std::string("/rack"), std::string("example.com/"),
        std::string("a/b/c"), std::string(64, 'a'), std::string("power feed"), long_prefix})
    EXPECT_FALSE(check_label_key(bad).ok()) << bad;
  for (std::string ok :
       {std::string(""), std::string("r12"), std::string("A.b_c-1"), std::string(63, 'v')})
    EXPECT_TRUE(check_label_value(ok).ok()) << ok;
  for (std::string bad :
       {std::string("kepler/k80"), std::string("-a"), std::string("a "), std::string(64, 'v')})
    EXPECT_FALSE(check_label_value(bad).ok()) << bad;
}

TEST(NodeSettings, ReservedPrefixes) {
  for (const char* ok : {"rack", "example.com/rack", "node-role.kubernetes.io/gpu",
                         "topology.kubernetes.io/zone", "notkubernetes.io/x"})
    EXPECT_TRUE(check_label_key_allowed(ok).ok()) << ok;
  for (const char* bad :
       {"kubernetes.io/arch", "node.kubernetes.io/instance-type", "k8s.io/x", "sub.k8s.io/x",
        "paictl.io/gpu", "x.paictl.io/y", "pai-master", "pai-worker"})
    EXPECT_FALSE(check_label_key_allowed(bad).ok()) << bad;
}

TEST(NodeSettings, TaintEffects) {
  for (const char* ok : {"NoSchedule", "PreferNoSchedule", "NoExecute"})
    EXPECT_TRUE(check_taint_effect(ok).ok()) << ok;
  for (const char* bad : {"noschedule", "NoScheduled", "", "Evict"})
    EXPECT_FALSE(check_taint_effect(bad).ok()) << bad;
  // A near miss is named in the hint (what L086 shows).
  EXPECT_EQ(check_taint_effect("noschedule").error().hint.rfind("did you mean \"NoSchedule\"? ", 0),
            0u);
  EXPECT_EQ(check_taint_effect("Evict").error().hint.find("did you mean"), std::string::npos);
}

}  // namespace
}  // namespace pai::config

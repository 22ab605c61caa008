// SiteOverlap: a hybrid cluster's ranges against each other and the on-prem
// hosts' routes (iproute2's JSON as hosts print it) and interface networks (their facts).

#include <gtest/gtest.h>

#include "check/site_overlap.h"

namespace pai::check {
namespace {

std::vector<ClusterRange> ranges() {
  config::AzureConfig az;
  az.address_space = "10.224.0.0/16";
  az.subnet = "10.224.0.0/24";
  return hybrid_ranges(az, "10.244.0.0/16", "10.96.0.0/12");
}

TEST(SiteOverlap, TheClusterRangesApart) {
  EXPECT_TRUE(overlapping_ranges(ranges()).empty()) << "the subnet inside address-space is fine";
  config::AzureConfig az;
  az.address_space = "10.0.0.0/8";
  az.subnet = "10.1.0.0/24";
  auto clash = overlapping_ranges(hybrid_ranges(az, "10.244.0.0/16", "not-a-cidr"));
  ASSERT_EQ(clash.size(), 1u);
  EXPECT_EQ(clash[0].first.what, "azure.address-space");
  EXPECT_EQ(clash[0].second.what, "kube_pods_subnet");
}

TEST(SiteOverlap, RoutesFromIpJson) {
  auto routes = parse_ip_routes(
      R"([{"dst":"default","gateway":"10.0.0.1","dev":"eth0"},
          {"dst":"10.0.0.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"10.0.0.5"},
          {"dst":"10.244.1.0/24","gateway":"10.244.1.0","dev":"flannel.1"},
          {"dst":"192.168.7.9","gateway":"10.0.0.1","dev":"eth0"},
          {"type":"unreachable","dst":"10.96.0.0/12"}])");
  ASSERT_TRUE(routes.ok());
  const auto& nets = *routes;
  ASSERT_EQ(nets.size(), 3u) << "no default route, no flannel route";
  EXPECT_EQ(nets[0].cidr, "10.0.0.0/24");
  EXPECT_EQ(nets[1].cidr, "192.168.7.9/32");
  EXPECT_EQ(nets[2].cidr, "10.96.0.0/12");
  EXPECT_TRUE(nets[0].route);
  auto bad = parse_ip_routes("Object \"route\" is unknown");
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(bad.error().message.empty());
}

TEST(SiteOverlap, RoutesAndTheFactsAddresses) {
  auto routes = parse_ip_routes(R"([{"dst":"10.244.0.0/16","gateway":"10.0.0.1","dev":"eth1"}])");
  ASSERT_TRUE(routes.ok()) << routes.error().message;
  auto nets = *routes;
  // The addresses as the fact script reads them (`ip -o addr`); `hostname -I`'s
  // bare address has no prefix and says nothing of a network.
  auto addrs = interface_networks({{"lo", "127.0.0.1", 8, false},
                                   {"eth0", "10.224.3.7", 22, false},
                                   {"eth0", "fe80::1", 64, true},
                                   {"", "10.1.2.3", 0, false}});
  nets.insert(nets.end(), addrs.begin(), addrs.end());
  ASSERT_EQ(nets.size(), 2u);
  EXPECT_EQ(nets[1].cidr, "10.224.0.0/22");
  EXPECT_FALSE(nets[1].route);
  auto r = site_overlap_result("gpu-1", nets, ranges());
  EXPECT_EQ(r.status, Status::Fail);
  EXPECT_NE(
      r.message.find("route 10.244.0.0/16 (dev eth1) overlaps kube_pods_subnet 10.244.0.0/16"),
      std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("interface network 10.224.0.0/22 (dev eth0) overlaps "
                           "azure.address-space 10.224.0.0/16"),
            std::string::npos)
      << r.message;
  EXPECT_FALSE(r.hint.empty());
  auto cut = parse_ip_routes(R"([{"dst":"10.0.0.0/24")");
  ASSERT_FALSE(cut.ok()) << "cut off in the middle";
  EXPECT_FALSE(cut.error().message.empty());
}

TEST(SiteOverlap, TheLinkToAzurePassesAWiderRouteWarns) {
  auto r = site_overlap_result("gpu-1",
                               {{"10.0.0.0/24", "eth0", false},
                                {"10.224.0.0/16", "wg0", true},
                                {"10.224.0.0/24", "wg0", true}},
                               ranges());
  EXPECT_EQ(r.status, Status::Pass) << r.message;
  r = site_overlap_result("gpu-1", {{"10.0.0.0/8", "eth0", true}}, ranges());
  EXPECT_EQ(r.status, Status::Fail) << "10.0.0.0/8 covers the pods' and services' ranges too";
  r = site_overlap_result("gpu-1", {{"10.224.0.0/15", "eth0", true}}, ranges());
  EXPECT_EQ(r.status, Status::Warn) << r.message;
  // An interface inside the VNet's range is an error, not the link.
  r = site_overlap_result("gpu-1", {{"10.224.0.0/24", "eth0", false}}, ranges());
  EXPECT_EQ(r.status, Status::Fail);
}

}  // namespace
}  // namespace pai::check

// A highly available control plane's checks (check/masters.h): who probes
// what, and the endpoint's and the masters' ports' results.

#include "check/masters.h"

#include <gtest/gtest.h>

using namespace pai::check;

namespace {

std::vector<SiteHost> masters_hosts() {
  return {{"m1", "10.0.0.1", "", true},
          {"m2", "10.0.0.2", "", true},
          {"m3", "10.0.0.3", "", true},
          {"w1", "10.0.0.4", "", false}};
}

const CheckResult* masters_find(const std::vector<CheckResult>& rs, const std::string& check,
                                const std::string& about) {
  for (const auto& r : rs)
    if (r.check == check && r.message.find(about) != std::string::npos) return &r;
  return nullptr;
}

}  // namespace

TEST(Masters, AWorkerProbesTheEndpointAMasterAlsoTheOtherMasters) {
  auto all = masters_hosts();
  auto w = master_probes(all[3], all, "10.0.0.250:6443");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].address, "10.0.0.250");
  EXPECT_EQ(w[0].port, 6443);
  auto m = master_probes(all[0], all, "10.0.0.250:6443");
  ASSERT_EQ(m.size(), 1u + 2 * 4);
  std::vector<int> ports;
  for (const auto& p : m)
    if (p.address == "10.0.0.2") ports.push_back(p.port);
  EXPECT_EQ(ports, (std::vector<int>{2379, 2380, 6443, 10250}));
  // No endpoint (kube-vip's appears only once it runs): the masters' ports only.
  EXPECT_EQ(master_probes(all[0], all, "").size(), 8u);
  EXPECT_TRUE(master_probes(all[3], all, "").empty());
}

TEST(Masters, TheEndpointMustAcceptTheMastersPortsMustNotTimeOut) {
  auto all = masters_hosts();
  auto probes = master_probes(all[0], all, "10.0.0.250:6443");
  pai::remote::ExecResult r;
  r.out =
      "tcp open 10.0.0.250 6443\n"
      "tcp refused 10.0.0.2 2379\ntcp refused 10.0.0.2 2380\ntcp refused 10.0.0.2 6443\n"
      "tcp refused 10.0.0.2 10250\n"
      "tcp refused 10.0.0.3 2379\ntcp blocked 10.0.0.3 2380 124\ntcp refused 10.0.0.3 6443\n"
      "tcp refused 10.0.0.3 10250\n";
  auto rs = master_results("m1", probes, r);
  ASSERT_EQ(rs.size(), probes.size());
  const auto* ep = masters_find(rs, "ControlPlaneEndpoint", "10.0.0.250:6443");
  ASSERT_TRUE(ep);
  EXPECT_EQ(ep->status, Status::Pass);
  size_t pass = 0;
  for (const auto& x : rs) pass += x.check == "MasterPort" && x.status == Status::Pass;
  EXPECT_EQ(pass, 7u);
  const auto* blocked = masters_find(rs, "MasterPort", "10.0.0.3:2380");
  ASSERT_TRUE(blocked);
  EXPECT_EQ(blocked->status, Status::Fail);
  EXPECT_NE(blocked->hint.find("open TCP 2380 between the masters"), std::string::npos);

  // Nothing listens at the endpoint, or it does not answer: a finding with a hint.
  r.out = "tcp refused 10.0.0.250 6443\n";
  rs = master_results("m1", probes, r);
  ep = masters_find(rs, "ControlPlaneEndpoint", "10.0.0.250:6443");
  ASSERT_TRUE(ep);
  EXPECT_EQ(ep->status, Status::Fail);
  EXPECT_NE(ep->message.find("refuses connections"), std::string::npos) << ep->message;
  EXPECT_NE(ep->hint.find("load balancer"), std::string::npos);
  r.out = "tcp blocked 10.0.0.250 6443 124\n";
  rs = master_results("m1", probes, r);
  ep = masters_find(rs, "ControlPlaneEndpoint", "10.0.0.250:6443");
  ASSERT_TRUE(ep);
  EXPECT_EQ(ep->status, Status::Fail);
  EXPECT_NE(ep->message.find("does not answer"), std::string::npos) << ep->message;
}

// The cross-site probes of a hybrid cluster (check/cross_site.h): who probes
// what, the script's safety, and the results read from its output.

#include "check/cross_site.h"

#include <gtest/gtest.h>

using namespace pai::check;

namespace {

std::vector<SiteHost> hosts() {
  return {{"m", "10.0.0.1", "onprem", true},
          {"w", "10.0.0.2", "onprem", false},
          {"a1", "10.224.0.4", "azure", false},
          {"bad", "10.0.0.3;rm -rf /", "onprem", false}};
}

}  // namespace

TEST(CrossSite, EachHostProbesTheOtherSiteOnly) {
  auto all = hosts();
  auto from_azure = cross_site_probes(all[2], all);
  // m: API server, kubelet, MTU; w: kubelet, MTU; "bad" has an unsafe address: left out.
  ASSERT_EQ(from_azure.size(), 5u);
  EXPECT_EQ(from_azure[0].port, 6443);
  EXPECT_EQ(from_azure[1].port, 10250);
  EXPECT_EQ(from_azure[2].port, 0);
  auto from_master = cross_site_probes(all[0], all);
  ASSERT_EQ(from_master.size(), 2u);
  EXPECT_EQ(from_master[0].peer, "a1");
  std::vector<SiteHost> one_site = {all[0], all[1]};
  EXPECT_TRUE(cross_site_probes(all[0], one_site).empty());
  std::string script = cross_site_script(from_azure, 0);
  EXPECT_NE(script.find("tcp 10.0.0.1 6443 &"), std::string::npos);
  EXPECT_NE(script.find("mtu 10.0.0.2 &"), std::string::npos);
  EXPECT_EQ(script.find("rm -rf"), std::string::npos);
  EXPECT_NE(cross_site_script(from_azure, 1350).find("CNI_MTU=1350"), std::string::npos);
}

TEST(CrossSite, ResultsFromTheOutput) {
  auto all = hosts();
  auto probes = cross_site_probes(all[2], all);
  pai::remote::ExecResult r;
  r.exit_status = 0;
  r.out =
      "tcp refused 10.0.0.1 6443\n"
      "tcp open 10.0.0.1 10250\n"
      "mtu fail 10.0.0.1 1450\n"
      "tcp blocked 10.0.0.2 10250 124\n";  // no MTU line for w: the probe did not run
  auto res = cross_site_results("a1", probes, r);
  ASSERT_EQ(res.size(), 5u);
  EXPECT_EQ(res[0].status, Status::Pass);
  EXPECT_NE(res[0].message.find("refused: nothing listens yet"), std::string::npos);
  EXPECT_EQ(res[1].status, Status::Pass);
  EXPECT_EQ(res[2].check, "CrossSiteMTU");
  EXPECT_EQ(res[2].status, Status::Fail);
  EXPECT_NE(res[2].message.find("a packet of 1500 bytes (the CNI's MTU 1450 + 50 of VXLAN)"),
            std::string::npos)
      << res[2].message;
  EXPECT_EQ(res[3].status, Status::Fail);
  EXPECT_NE(res[3].message.find("cannot reach w (10.0.0.2) on TCP 10250 (the kubelet)"),
            std::string::npos);
  EXPECT_FALSE(res[3].hint.empty());
  EXPECT_EQ(res[4].status, Status::Skip);
  // A host whose command failed: every probe is skipped, with the reason.
  pai::remote::ExecResult down;
  down.failure = pai::remote::Failure::Connect;
  down.error = "connection refused";
  for (const auto& x : cross_site_results("a1", probes, down)) {
    EXPECT_EQ(x.status, Status::Skip);
    EXPECT_NE(x.message.find("connection refused"), std::string::npos);
  }
}

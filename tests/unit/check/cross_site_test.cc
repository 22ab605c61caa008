// The cross-site probes of a hybrid cluster (check/cross_site.h): who probes
// what, the script's safety, and the results read from its output.

#include "check/cross_site.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

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
  // m: API server, kubelet, MTU, UDP 8472 and 4789; w: the same without the API
  // server; "bad" has an unsafe address: left out.
  ASSERT_EQ(from_azure.size(), 9u);
  EXPECT_EQ(from_azure[0].port, 6443);
  EXPECT_EQ(from_azure[1].port, 10250);
  EXPECT_EQ(from_azure[2].port, 0);
  EXPECT_TRUE(from_azure[3].udp && from_azure[3].port == 8472);
  EXPECT_TRUE(from_azure[4].udp && from_azure[4].port == 4789);
  EXPECT_FALSE(from_azure[1].udp);
  auto from_master = cross_site_probes(all[0], all);
  ASSERT_EQ(from_master.size(), 4u);
  EXPECT_EQ(from_master[0].peer, "a1");
  std::vector<SiteHost> one_site = {all[0], all[1]};
  EXPECT_TRUE(cross_site_probes(all[0], one_site).empty());
  std::string script = cross_site_script(from_azure, 0);
  EXPECT_NE(script.find("tcp 10.0.0.1 6443 &"), std::string::npos);
  EXPECT_NE(script.find("mtu 10.0.0.2 &"), std::string::npos);
  EXPECT_NE(script.find("udp 10.0.0.2 8472 &"), std::string::npos);
  EXPECT_EQ(script.find("rm -rf"), std::string::npos);
  EXPECT_NE(cross_site_script(from_azure, 1350).find("CNI_MTU=1350"), std::string::npos);
}

TEST(CrossSite, ResultsFromTheOutput) {
  auto all = hosts();
  auto probes = cross_site_probes(all[2], all);
  std::erase_if(probes, [](const Probe& p) { return p.udp; });
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

namespace {

// A UDP socket on 127.0.0.1 (port from the kernel); `echo`: a thread answers
// every datagram, else it stays silent (as a VXLAN device does).
struct UdpPeer {
  int fd = -1;
  int port = 0;
  std::thread t;
  explicit UdpPeer(bool echo) {
    fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t n = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
    port = ntohs(a.sin_port);
    if (echo)
      t = std::thread([this] {
        char buf[256];
        sockaddr_in from{};
        socklen_t fl = sizeof from;
        ssize_t got = ::recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &fl);
        if (got > 0)
          ::sendto(fd, buf, static_cast<size_t>(got), 0, reinterpret_cast<sockaddr*>(&from), fl);
      });
  }
  ~UdpPeer() {
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    if (t.joinable()) t.join();
  }
};

}  // namespace

// The UDP probe's script run here against peers on loopback: a closed port
// (the kernel answers "port unreachable": the datagram got there), a listener
// that answers, and a silent one (no answer: only a warning, never a pass).
TEST(CrossSite, UdpProbeOverLoopback) {
  if (std::system("command -v bash >/dev/null 2>&1") != 0) GTEST_SKIP() << "no bash";
  UdpPeer silent(false), echo(true);
  int closed = 0;
  {
    UdpPeer gone(false);
    closed = gone.port;
  }
  std::vector<Probe> probes = {{"closed", "127.0.0.1", closed, "a closed port", true},
                               {"echo", "127.0.0.1", echo.port, "an answering port", true},
                               {"silent", "127.0.0.1", silent.port, "a silent port", true}};
  std::string script = cross_site_script(probes, 1450, 1);
  std::string file = ::testing::TempDir() + "cross_site_udp.sh";
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  pai::remote::ExecResult r;
  std::FILE* p = ::popen(("sh " + file).c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) r.out += buf;
  r.exit_status = ::pclose(p) == 0 ? 0 : 1;
  std::remove(file.c_str());
  auto res = cross_site_results("h", probes, r);
  ASSERT_EQ(res.size(), 3u) << r.out;
  EXPECT_EQ(res[0].check, "CrossSiteUDP");
  EXPECT_EQ(res[0].status, Status::Pass) << r.out;
  EXPECT_NE(res[0].message.find("port unreachable"), std::string::npos) << res[0].message;
  EXPECT_EQ(res[1].status, Status::Pass) << r.out;
  EXPECT_NE(res[1].message.find("it answered"), std::string::npos) << res[1].message;
  EXPECT_EQ(res[2].status, Status::Warn) << r.out;
  EXPECT_NE(res[2].message.find("UDP cannot tell a silent listener"), std::string::npos);
  EXPECT_FALSE(res[2].hint.empty());
}

TEST(CrossSite, UdpResultsFromTheOutput) {
  std::vector<Probe> probes = {{"a", "10.0.0.1", 8472, "flannel", true},
                               {"b", "10.0.0.2", 8472, "flannel", true},
                               {"c", "10.0.0.3", 8472, "flannel", true}};
  pai::remote::ExecResult r;
  r.exit_status = 0;
  r.out = "udp blocked 10.0.0.1 8472 1\nudp unknown 10.0.0.2 8472 no-bash\n";
  auto res = cross_site_results("h", probes, r);
  ASSERT_EQ(res.size(), 3u);
  EXPECT_EQ(res[0].status, Status::Fail);
  EXPECT_NE(res[0].message.find("cannot reach a (10.0.0.1) on UDP 8472"), std::string::npos);
  EXPECT_EQ(res[1].status, Status::Skip);
  EXPECT_EQ(res[2].status, Status::Skip);  // no line: the probe did not run
}

// The MTU probe's size follows install's rule: at most azure.tunnel-mtu less 50,
// whatever the host's interface allows (run here: the probe's line names it).
TEST(CrossSite, TheProbedMtuIsCappedByTheTunnel) {
  auto run = [](const std::string& script) {
    std::string out, file = ::testing::TempDir() + "cross_site_mtu.sh";
    std::FILE* w = std::fopen(file.c_str(), "w");
    if (!w) return out;
    std::fputs(script.c_str(), w);
    std::fclose(w);
    std::FILE* f = ::popen(("sh " + file + " 2>/dev/null").c_str(), "r");
    if (f) {
      char buf[256];
      while (std::fgets(buf, sizeof buf, f)) out += buf;
      ::pclose(f);
    }
    std::remove(file.c_str());
    return out;
  };
  std::vector<Probe> probes = {{"peer", "127.0.0.1", 0, "the pods' VXLAN packets"}};
  std::string capped = run(cross_site_script(probes, 0, 1, 1400));
  EXPECT_NE(capped.find(" 127.0.0.1 1350"), std::string::npos) << capped;
  std::string given = run(cross_site_script(probes, 1200, 1, 1400));
  EXPECT_NE(given.find(" 127.0.0.1 1200"), std::string::npos) << given;
}

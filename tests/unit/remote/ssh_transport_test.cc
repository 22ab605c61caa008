// The libssh transport's failure paths, against sockets this test owns (no sshd,
// no root). Logging in over real SSH is tested against sshd test hosts in
// tests/integration/hosts.
#include "remote/ssh_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>

#include <atomic>
#include <chrono>
#include <thread>

using namespace pai::remote;

namespace {

// A loopback listener; `banner` (if any) is sent to each client, which is then held open.
class Listener {
 public:
  explicit Listener(std::string banner = {}, bool accept_clients = true)
      : banner_(std::move(banner)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 8);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    if (accept_clients) {
      thread_ = std::thread([this] {
        while (!stop_) {
          int c = ::accept(fd_, nullptr, nullptr);
          if (c < 0) return;
          if (!banner_.empty()) (void)!::write(c, banner_.data(), banner_.size());
          clients_.push_back(c);
        }
      });
    }
  }
  ~Listener() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (thread_.joinable()) thread_.join();
    for (int c : clients_) ::close(c);
  }
  int port() const { return port_; }

 private:
  std::string banner_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> clients_;
};

Target target_at(int port, int timeout_ms = 400) {
  Target t;
  t.endpoint.name = "test";
  t.endpoint.address = "127.0.0.1";
  t.endpoint.port = port;
  t.endpoint.user = "nobody";
  t.known_hosts_file = "/nonexistent/known_hosts";
  t.global_known_hosts_file = "/nonexistent/ssh_known_hosts";
  t.connect_timeout_ms = timeout_ms;
  return t;
}

int free_port() {
  Listener l("", false);
  return l.port();  // closed when l goes away: nothing listens there afterwards
}

}  // namespace

TEST(SshTransport, RefusedConnection) {
  SshTransport t;
  ExecResult r = t.exec(target_at(free_port()), {"true", "", 1000, 1024});
  EXPECT_EQ(r.failure, Failure::Connect);
  EXPECT_NE(r.error.find("refused"), std::string::npos) << r.error;
  EXPECT_FALSE(r.hint.empty());
}

// A FIFO at known_hosts would block a reader for ever, a directory would read as
// empty (and the hint would say to append to it): both refused before connecting.
TEST(SshTransport, KnownHostsThatIsNoRegularFileIsRefusedBeforeConnecting) {
  std::string dir = ::testing::TempDir() + "paictl-kh-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir + "/d");
  std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& kh : {fifo, dir + "/d"}) {
    Target target = target_at(free_port());
    target.known_hosts_file = kh;
    SshTransport t;
    ExecResult r = t.exec(target, {"true", "", 1000, 1024});
    EXPECT_EQ(r.failure, Failure::HostKeyError) << kh << ": " << r.error;
    EXPECT_NE(r.error.find(kh), std::string::npos) << r.error;
    EXPECT_EQ(r.hint.find(">>"), std::string::npos) << r.hint;
  }
  std::filesystem::remove_all(dir);
}

TEST(SshTransport, SilentServerHitsTheConnectTimeout) {
  Listener silent;
  SshTransport t;
  auto t0 = std::chrono::steady_clock::now();
  ExecResult r = t.exec(target_at(silent.port(), 300), {"true", "", 1000, 1024});
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.failure, Failure::ConnectTimeout) << r.error;
  EXPECT_NE(r.error.find("no SSH answer"), std::string::npos) << r.error;
  EXPECT_LT(ms, 5000);  // bounded by the timeout, not by TCP's
}

TEST(SshTransport, NotAnSshServer) {
  Listener http("HTTP/1.1 400 Bad Request\r\n\r\n");
  SshTransport t;
  ExecResult r = t.exec(target_at(http.port(), 1000), {"true", "", 1000, 1024});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.failure == Failure::Connect || r.failure == Failure::ConnectTimeout)
      << to_string(r.failure);
}

TEST(SshTransport, UnsupportedTargetIsNotContacted) {
  Target tg = target_at(free_port());
  tg.unsupported = "ProxyCommand is not supported";
  SshTransport t;
  ExecResult r = t.exec(tg, {"true", "", 1000, 1024});
  EXPECT_EQ(r.failure, Failure::Unsupported);
  EXPECT_EQ(r.error, "ProxyCommand is not supported");
}

TEST(SshTransport, AFailingJumpHostIsReportedAsTheJumpHost) {
  Target tg = target_at(free_port());
  Endpoint jump = tg.endpoint;
  jump.name = "bastion";
  jump.port = free_port();
  tg.jumps.push_back(jump);
  SshTransport t;
  ExecResult r = t.exec(tg, {"true", "", 1000, 1024});
  EXPECT_EQ(r.failure, Failure::Jump);
  EXPECT_EQ(r.error.rfind("jump host bastion: ", 0), 0u) << r.error;
}

TEST(SshTransport, UnresolvableName) {
  Target tg = target_at(22);
  tg.endpoint.address = "no-such-host.invalid";
  SshTransport t;
  ExecResult r = t.exec(tg, {"true", "", 1000, 1024});
  EXPECT_EQ(r.failure, Failure::Resolve) << r.error;
}

TEST(SshTransport, FailureNames) {
  EXPECT_EQ(to_string(Failure::HostKeyChanged), "host-key-changed");
  EXPECT_EQ(to_string(Failure::CommandTimeout), "command-timeout");
}

TEST(PublicKey, Fingerprint) {
  EXPECT_EQ(
      public_key_fingerprint(
          "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPh2VdqGp0MnOil6tTVN/ZNUYLpckrQeIEuQ69DBvZea fp"),
      "SHA256:QyKrEzdLbylrDgb/V3dp3830S5uJvrCHg+I7VVmT+iU");
  EXPECT_EQ(public_key_fingerprint("ssh-ed25519 notbase64!"), "");
  EXPECT_EQ(public_key_fingerprint(""), "");
}

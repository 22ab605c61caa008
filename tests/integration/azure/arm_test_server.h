#pragma once
// Starts the ARM test server (arm_server.py) over HTTPS with a throwaway CA
// (make_certs.sh) for a C++ test, and talks to its control port with a tiny
// HTTP/1.0 client of its own, so that the checks do not depend on the code
// under test.

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "../rest/test_server.h"

namespace pai::testing {

class ArmServer {
 public:
  static constexpr const char* kClientId = "11111111-2222-3333-4444-555555555555";
  static constexpr const char* kSecret = "sp-secret-Zq8~not-for-logs";
  static constexpr const char* kAssertion = "eyJhbGciOiJSUzI1NiJ9.federated.token";
  static constexpr const char* kIdentityHeader = "identity-header-value";

  // False when openssl is missing (the test skips).
  explicit ArmServer(int polls = 2, int retry_after = 1) {
    dir_ = make_temp_dir("arm");
    std::string src = PAI_SOURCE_DIR;
    certs_ = shared_certs();
    if (certs_.empty()) return;
    write(dir_ + "/secret", kSecret);
    write(dir_ + "/assertion", kAssertion);
    write(dir_ + "/identity", kIdentityHeader);
    std::vector<std::string> args = {python3(),
                                     src + "/tests/integration/azure/arm_server.py",
                                     "--port-file",
                                     dir_ + "/port",
                                     "--control-port-file",
                                     dir_ + "/control-port",
                                     "--tls-cert",
                                     certs_ + "/server.pem",
                                     "--tls-key",
                                     certs_ + "/server.key",
                                     "--client-id",
                                     kClientId,
                                     "--client-secret-file",
                                     dir_ + "/secret",
                                     "--assertion-file",
                                     dir_ + "/assertion",
                                     "--identity-header-file",
                                     dir_ + "/identity",
                                     "--polls",
                                     std::to_string(polls),
                                     "--retry-after",
                                     std::to_string(retry_after)};
    pid_ = spawn_logged(args, dir_ + "/server.log");
    wait_for_ports(pid_, {{dir_ + "/port", &port_}, {dir_ + "/control-port", &control_port_}},
                   "ARM test server", dir_ + "/server.log");
  }
  ~ArmServer() {
    stop_process(pid_);
    remove_tree(dir_);
  }
  ArmServer(const ArmServer&) = delete;
  ArmServer& operator=(const ArmServer&) = delete;

  bool ok() const { return port_ > 0; }
  std::string base() const { return "https://127.0.0.1:" + std::to_string(port_); }
  std::string ca_file() const { return certs_ + "/ca.pem"; }
  std::string secret_file() const { return dir_ + "/secret"; }
  std::string assertion_file() const { return dir_ + "/assertion"; }
  const std::string& dir() const { return dir_; }

  nlohmann::json requests() const {
    return nlohmann::json::parse(control("GET", "/__control/requests"));
  }
  // Only the ARM requests (kind arm, poll, list): not token requests.
  nlohmann::json arm_requests() const {
    nlohmann::json out = nlohmann::json::array();
    for (auto& r : requests())
      if (r["kind"] != "token" && r["kind"] != "msi") out.push_back(r);
    return out;
  }
  void clear_requests() const { control("POST", "/__control/clear-requests", "{}"); }
  void fail(const nlohmann::json& spec) const { control("POST", "/__control/fail", spec.dump()); }
  void fail_operation(const nlohmann::json& spec) const {
    control("POST", "/__control/fail-operation", spec.dump());
  }
  void config(const nlohmann::json& c) const { control("POST", "/__control/config", c.dump()); }
  nlohmann::json resources() const {
    return nlohmann::json::parse(control("GET", "/__control/resources"));
  }

  std::string control(const std::string& method, const std::string& path,
                      const std::string& body = "") const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(control_port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd);
      throw std::runtime_error("cannot reach the ARM test server's control port");
    }
    std::string req = method + " " + path +
                      " HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
                      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
      close(fd);
      throw std::runtime_error("short write to the ARM test server");
    }
    std::string resp;
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) resp.append(buf, static_cast<size_t>(n));
    close(fd);
    size_t sep = resp.find("\r\n\r\n");
    return sep == std::string::npos ? std::string() : resp.substr(sep + 4);
  }

 private:
  // One CA and server certificate for every server of this test process ("" when
  // openssl is missing), removed at exit.
  static std::string shared_certs() {
    struct Certs {
      std::string dir;
      Certs() {
        dir = make_temp_dir("arm-certs");
        std::string cmd = "sh '" + std::string(PAI_SOURCE_DIR) +
                          "/tests/integration/azure/make_certs.sh' '" + dir + "' >/dev/null 2>&1";
        if (std::system(cmd.c_str()) != 0) {
          remove_tree(dir);
          dir.clear();
        }
      }
      ~Certs() {
        if (!dir.empty()) remove_tree(dir);
      }
    };
    static Certs certs;
    return certs.dir;
  }
  static void write(const std::string& path, const std::string& content) {
    std::ofstream f(path);
    f << content << "\n";
    f.close();
    chmod(path.c_str(), 0600);
  }
  std::string dir_;
  std::string certs_;
  pid_t pid_ = -1;
  int port_ = 0;
  int control_port_ = 0;
};

}  // namespace pai::testing

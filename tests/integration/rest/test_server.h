#pragma once
// Starts the OpenPAI REST test server (pai_rest_server.py) for a C++ test and
// talks to its control API with a tiny HTTP/1.0 client of its own, so that the
// checks do not depend on the code under test.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace pai::testing {

inline std::string python3() {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

inline std::string make_temp_dir(const std::string& tag) {
  std::string tmpl =
      (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
      "/paictl-" + tag + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed");
  return buf.data();
}

inline void remove_tree(const std::string& dir) {
  if (dir.size() > 5) std::system(("rm -rf '" + dir + "'").c_str());
}

// Starts `args` with stdout and stderr in `log`; returns its pid.
inline pid_t spawn_logged(std::vector<std::string> args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Waits up to 20 s until every port file holds a port (read into *port). Throws,
// naming `what` and the log, when the server exits first or never writes them;
// `pid` becomes -1 when it exited.
inline void wait_for_ports(pid_t& pid, const std::vector<std::pair<std::string, int*>>& files,
                           const std::string& what, const std::string& log) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    bool all = true;
    for (const auto& [file, port] : files) {
      std::ifstream in(file);
      all = all && static_cast<bool>(in >> *port);
    }
    if (all) return;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      pid = -1;
      throw std::runtime_error("the " + what + " exited; see " + log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("the " + what + " did not start");
}

// SIGTERM, up to 2 s to exit, then SIGKILL.
inline void stop_process(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 200 && waitpid(pid, &status, WNOHANG) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (waitpid(pid, &status, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
}

class RestServer {
 public:
  // `scenario` is a file name in tests/integration/rest/scenarios (without .json).
  explicit RestServer(const std::string& scenario = "lab", std::vector<std::string> extra = {}) {
    dir_ = make_temp_dir("rest");
    std::string src = PAI_SOURCE_DIR;
    std::string port_file = dir_ + "/port";
    std::vector<std::string> args = {
        python3(),     src + "/tests/integration/rest/pai_rest_server.py",
        "--scenario",  src + "/tests/integration/rest/scenarios/" + scenario + ".json",
        "--port-file", port_file};
    for (auto& e : extra) args.push_back(e);
    pid_ = spawn_logged(args, dir_ + "/server.log");
    wait_for_ports(pid_, {{port_file, &port_}}, "REST test server", dir_ + "/server.log");
  }
  ~RestServer() {
    stop_process(pid_);
    remove_tree(dir_);
  }
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  int port() const { return port_; }
  std::string uri() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string https_uri() const { return "https://127.0.0.1:" + std::to_string(port_); }
  std::string rest() const { return uri() + "/rest-server"; }
  const std::string& dir() const { return dir_; }

  // The requests the server received (not the control calls), oldest first.
  nlohmann::json requests() const {
    return nlohmann::json::parse(control("GET", "/__control/requests", ""));
  }
  void reset() const { control("POST", "/__control/reset", "{}"); }
  // {"path": REGEX, "method": "GET", "status": 503, "count": 2, "retryAfter": 1,
  //  "delayMs": 500, "close": true, "text": "...", "code": "...", "message": "..."}
  void fail(const nlohmann::json& spec) const { control("POST", "/__control/fail", spec.dump()); }
  void job(const std::string& id, const nlohmann::json& change) const {
    control("POST", "/__control/jobs/" + id, change.dump());
  }

  std::string control(const std::string& method, const std::string& path,
                      const std::string& body) const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd);
      throw std::runtime_error("cannot reach the test server");
    }
    std::string req = method + " " + path +
                      " HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
                      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
      close(fd);
      throw std::runtime_error("short write to the test server");
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
  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// A self-signed certificate for 127.0.0.1 made with the openssl tool; empty
// strings when openssl is missing.
struct TestCert {
  std::string dir, cert, key;
  TestCert() {
    dir = make_temp_dir("cert");
    cert = dir + "/cert.pem";
    key = dir + "/key.pem";
    std::string cmd =
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout '" + key + "' -out '" + cert +
        "' -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) cert.clear();
  }
  ~TestCert() { remove_tree(dir); }
};

}  // namespace pai::testing

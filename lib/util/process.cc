#include "util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace pai::util {

ProcessRequest ProcessRequest::shell(std::string command) {
  ProcessRequest r;
  r.argv = {"/bin/sh", "-c", std::move(command)};
  return r;
}

namespace {

// A file descriptor closed when it goes out of scope.
struct ProcessFd {
  int fd = -1;
  ProcessFd() = default;
  explicit ProcessFd(int f) : fd(f) {}
  ProcessFd(const ProcessFd&) = delete;
  ProcessFd& operator=(const ProcessFd&) = delete;
  ~ProcessFd() { reset(); }
  void reset(int f = -1) {
    if (fd >= 0) ::close(fd);
    fd = f;
  }
};

std::string errno_text(int e) {
  return std::strerror(e);
}

// The child's stdin: the whole text in an anonymous file it reads from the
// start (no writer to keep alive, no SIGPIPE when it does not read it all).
Result<int> stdin_file(const std::string& text) {
  if (text.empty()) {
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{"cannot open /dev/null: " + errno_text(errno), ""};
    return fd;
  }
  int fd = ::memfd_create("stdin", MFD_CLOEXEC);
  if (fd < 0) return Error{"cannot make a stdin for the program: " + errno_text(errno), ""};
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      return Error{"cannot write the program's stdin: " + errno_text(e), ""};
    }
    off += static_cast<size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

std::vector<std::string> environment_with(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view v(*e);
    auto eq = v.find('=');
    if (eq != std::string_view::npos && extra.count(std::string(v.substr(0, eq)))) continue;
    env.emplace_back(v);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

class RealProcessRunner : public ProcessRunner {
 public:
  Result<ProcessResult> run(const ProcessRequest& req) override {
    if (req.argv.empty()) return Error{"no program to run", ""};
    const std::string& file = req.program.empty() ? req.argv[0] : req.program;

    auto in = stdin_file(req.stdin_text);
    if (!in) return in.error();
    ProcessFd in_fd(in.value());
    ProcessFd out_r, out_w, err_r, err_w;
    for (auto [want, r, w] : {std::tuple{req.capture_out, &out_r, &out_w},
                              std::tuple{req.capture_err, &err_r, &err_w}}) {
      if (!want) continue;
      int fds[2];
      // Close-on-exec: a program started at the same time by another thread
      // must not hold our pipe open (we would wait for its end, not ours).
      if (::pipe2(fds, O_CLOEXEC) != 0)
        return Error{"cannot make a pipe: " + errno_text(errno), ""};
      r->reset(fds[0]);
      w->reset(fds[1]);
      ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    }

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in_fd.fd, 0);
    if (out_w.fd >= 0) posix_spawn_file_actions_adddup2(&fa, out_w.fd, 1);
    if (err_w.fd >= 0) posix_spawn_file_actions_adddup2(&fa, err_w.fd, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // With a timeout the program gets its own process group, so that what it
    // started is killed with it.
    const bool group = req.timeout_s > 0;
    if (group) {
      posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
      posix_spawnattr_setpgroup(&attr, 0);
    }
    std::vector<std::string> args = req.argv;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env = environment_with(req.env);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);

    pid_t pid = -1;
    int rc = file.find('/') != std::string::npos
                 ? ::posix_spawn(&pid, file.c_str(), &fa, &attr, argv.data(), envp.data())
                 : ::posix_spawnp(&pid, file.c_str(), &fa, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    out_w.reset();
    err_w.reset();
    in_fd.reset();
    if (rc != 0) return Error{"cannot start " + file + ": " + errno_text(rc), ""};

    ProcessResult res;
    using Steady = std::chrono::steady_clock;
    const auto deadline =
        Steady::now() + std::chrono::duration_cast<Steady::duration>(
                            std::chrono::duration<double>(req.timeout_s > 0 ? req.timeout_s : 0));
    int status = 0;
    bool ended = false;
    auto drain = [&](ProcessFd& fd, OutputStream which) {
      char buf[65536];
      for (;;) {
        ssize_t n = ::read(fd.fd, buf, sizeof buf);
        if (n > 0) {
          std::string_view chunk(buf, static_cast<size_t>(n));
          (which == OutputStream::Out ? res.out : res.err).append(chunk);
          if (req.on_output) req.on_output(which, chunk);
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n == 0 || errno != EAGAIN) fd.reset();  // its end (or a broken pipe)
        return;
      }
    };
    auto reap = [&](int flags) {
      for (;;) {
        pid_t w = ::waitpid(pid, &status, flags);
        if (w == pid) return true;
        if (w < 0 && errno == EINTR) continue;
        return false;
      }
    };
    auto kill_it = [&] {
      ::kill(group ? -pid : pid, SIGKILL);
      reap(0);
      ended = true;
      res.timed_out = true;
    };
    while (!ended && (out_r.fd >= 0 || err_r.fd >= 0)) {
      int wait_ms = 50;  // how soon a program that ended is noticed while a pipe stays open
      if (req.timeout_s > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
        if (left.count() <= 0) {
          kill_it();
          break;
        }
        wait_ms = static_cast<int>(std::min<long long>(wait_ms, left.count() + 1));
      }
      pollfd p[2];
      nfds_t n = 0;
      if (out_r.fd >= 0) p[n++] = {out_r.fd, POLLIN, 0};
      if (err_r.fd >= 0) p[n++] = {err_r.fd, POLLIN, 0};
      int ready = ::poll(p, n, wait_ms);
      if (ready < 0 && errno != EINTR) break;
      if (out_r.fd >= 0) drain(out_r, OutputStream::Out);
      if (err_r.fd >= 0) drain(err_r, OutputStream::Err);
      // The program ended while something it started still holds a pipe: what
      // it wrote itself is in the pipe already; the rest is not its output.
      if (out_r.fd >= 0 || err_r.fd >= 0) ended = reap(WNOHANG);
    }
    if (out_r.fd >= 0) drain(out_r, OutputStream::Out);
    if (err_r.fd >= 0) drain(err_r, OutputStream::Err);
    while (!ended) {
      if (req.timeout_s <= 0) {
        ended = reap(0);
        if (!ended) return Error{"lost the process of " + file, ""};
        break;
      }
      if (reap(WNOHANG)) break;
      if (Steady::now() >= deadline) {
        kill_it();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (res.timed_out) {
      res.signal = SIGKILL;
    } else if (WIFEXITED(status)) {
      res.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      res.signal = WTERMSIG(status);
    }
    return res;
  }
};

}  // namespace

ProcessRunner& ProcessRunner::real() {
  static RealProcessRunner runner;
  return runner;
}

}  // namespace pai::util

#include "remote/ssh_transport.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh/libssh.h>
#include <libssh/server.h>  // ssh_send_keepalive

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "remote/known_hosts.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::remote {

// The parsed known_hosts files every connection of a transport checks against, and
// the lock that orders reading them before accept-new appends to one.
struct KnownHostsFiles {
  KnownHostsCache cache;
  std::shared_mutex mu;
};

std::string_view to_string(Failure f) {
  switch (f) {
    case Failure::None:
      return "none";
    case Failure::Unsupported:
      return "unsupported";
    case Failure::Resolve:
      return "resolve";
    case Failure::Connect:
      return "connect";
    case Failure::ConnectTimeout:
      return "connect-timeout";
    case Failure::HostKeyUnknown:
      return "host-key-unknown";
    case Failure::HostKeyChanged:
      return "host-key-changed";
    case Failure::HostKeyError:
      return "host-key-error";
    case Failure::Auth:
      return "auth";
    case Failure::Channel:
      return "channel";
    case Failure::CommandTimeout:
      return "command-timeout";
    case Failure::OutputTooLarge:
      return "output-too-large";
    case Failure::Protocol:
      return "protocol";
    case Failure::Jump:
      return "jump";
  }
  return "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

void init_libssh_once() {
  static std::once_flag once;
  std::call_once(once, [] { ssh_init(); });
}

std::string where(const Endpoint& e) {
  if (e.address.find(':') != std::string::npos)
    return "[" + e.address + "]:" + std::to_string(e.port);
  return e.address + ":" + std::to_string(e.port);
}

// known_hosts spells a host "addr" on port 22 and "[addr]:port" elsewhere.
std::string known_hosts_name(const Endpoint& e) {
  return e.port == 22 ? e.address : "[" + e.address + "]:" + std::to_string(e.port);
}

struct SessionDeleter {
  void operator()(ssh_session s) const {
    if (!s) return;
    if (ssh_is_connected(s)) ssh_disconnect(s);
    ssh_free(s);
  }
};
using SessionPtr = std::unique_ptr<std::remove_pointer_t<ssh_session>, SessionDeleter>;

struct ChannelDeleter {
  void operator()(ssh_channel c) const {
    if (!c) return;
    ssh_channel_free(c);
  }
};
using ChannelPtr = std::unique_ptr<std::remove_pointer_t<ssh_channel>, ChannelDeleter>;

struct KeyDeleter {
  void operator()(ssh_key k) const { ssh_key_free(k); }
};
using KeyPtr = std::unique_ptr<std::remove_pointer_t<ssh_key>, KeyDeleter>;

// Relays bytes between a local socket (the inner session's transport) and a
// direct-tcpip channel on a jump host's session. Owns that session once started.
class Pump {
 public:
  Pump(SessionPtr session, ChannelPtr channel, int fd)
      : session_(std::move(session)), channel_(std::move(channel)), fd_(fd) {
    thread_ = std::thread([this] { run(); });
  }
  ~Pump() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (channel_) {
      ssh_channel_close(channel_.get());
      channel_.reset();
    }
    session_.reset();
    if (fd_ >= 0) ::close(fd_);
  }
  Pump(const Pump&) = delete;
  Pump& operator=(const Pump&) = delete;

 private:
  void run() {
    std::vector<char> to_inner;  // bytes from the channel not yet written to fd_
    char buf[32768];
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    bool local_eof = false;
    while (!stop_) {
      pollfd p[2] = {{fd_, static_cast<short>(POLLIN | (to_inner.empty() ? 0 : POLLOUT)), 0},
                     {ssh_get_fd(session_.get()), POLLIN, 0}};
      if (local_eof) p[0].events &= ~POLLIN;
      ::poll(p, 2, 10);
      if (!local_eof && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n > 0) {
          if (ssh_channel_write(channel_.get(), buf, static_cast<uint32_t>(n)) == SSH_ERROR) break;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          local_eof = true;
          ssh_channel_send_eof(channel_.get());
        }
      }
      int n;
      while ((n = ssh_channel_read_nonblocking(channel_.get(), buf, sizeof buf, 0)) > 0)
        to_inner.insert(to_inner.end(), buf, buf + n);
      if (!to_inner.empty()) {
        ssize_t w = ::write(fd_, to_inner.data(), to_inner.size());
        if (w > 0)
          to_inner.erase(to_inner.begin(), to_inner.begin() + w);
        else if (w < 0 && errno != EAGAIN && errno != EINTR)
          break;
      }
      if (n == SSH_ERROR) break;
      if (to_inner.empty() &&
          (ssh_channel_is_eof(channel_.get()) || ssh_channel_is_closed(channel_.get()))) {
        ::shutdown(fd_, SHUT_WR);
        if (local_eof) break;
      }
      if (local_eof && ssh_channel_is_closed(channel_.get())) break;
    }
    ::shutdown(fd_, SHUT_RDWR);
  }

  SessionPtr session_;
  ChannelPtr channel_;
  int fd_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

struct Hops {
  std::vector<std::unique_ptr<Pump>> pumps;  // destroyed after the session that uses them
  std::vector<int> fds;  // our ends of the socket pairs: libssh does not close an
                         // SSH_OPTIONS_FD socket, so we do, after the session
  ~Hops() {
    for (int fd : fds) ::close(fd);
  }
};

class Session {
 public:
  Session(const Target& target, const Secret& password, KnownHostsFiles& kh)
      : target_(target), password_(password), kh_(kh) {}

  // One command on a connection of its own.
  ExecResult run(const ExecRequest& req);
  // One command on the connection kept from the last call (made on first use, and
  // again when the kept one was lost before a command started on it).
  ExecResult run_kept(const ExecRequest& req);

 private:
  // Connects (jumps, key exchange, host key, authentication) into s_. Fills result_ on failure.
  bool connect();
  // Runs one command on s_. Returns false when no channel could be opened (nothing ran).
  bool exec_on_session(const ExecRequest& req);
  void disconnect() {
    s_.reset();
    hops_.reset();
  }

  // Connects, verifies and authenticates `e`, over `fd` when >= 0. Fills result_ on failure.
  SessionPtr open(const Endpoint& e, int fd, bool is_jump);
  bool verify_host_key(ssh_session s, const Endpoint& e, bool is_jump);
  // The user's and the global known_hosts, parsed (kh_.cache keeps them); fills
  // result_ and returns false when one cannot be read.
  bool load_known_hosts(const Endpoint& e, std::vector<std::shared_ptr<const KnownHosts>>& out);
  // accept-new: appends `line` to the user's known_hosts (created 0600 if missing).
  bool append_known_host(const Endpoint& e, const std::string& line);
  bool authenticate(ssh_session s, const Endpoint& e, bool is_jump);
  void fail(Failure f, std::string msg, std::string hint = {}) {
    result_.failure = f;
    result_.error = std::move(msg);
    result_.hint = std::move(hint);
  }
  void fail_jump(const Endpoint& jump) {
    // The jump host's own failure, said as such: the operator must fix the bastion, not the host.
    result_.error = "jump host " + jump.name + ": " + result_.error;
    result_.failure = Failure::Jump;
  }

  const Target target_;
  const Secret& password_;
  KnownHostsFiles& kh_;
  ExecResult result_;
  // Destroyed in reverse order: the session before the jump hosts it runs through.
  std::unique_ptr<Hops> hops_;
  SessionPtr s_;
};

void set_tcp_keepalive(int fd, int interval_s) {
  if (fd < 0 || interval_s <= 0) return;
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  int idle = interval_s, cnt = 3;
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
}

SessionPtr Session::open(const Endpoint& e, int fd, bool is_jump) {
  SessionPtr s(ssh_new());
  if (!s) {
    fail(Failure::Channel, "cannot create an SSH session (out of memory)");
    return nullptr;
  }
  ssh_session ss = s.get();
  int verbosity = SSH_LOG_NOLOG;
  ssh_options_set(ss, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
  // We read ~/.ssh/config ourselves; libssh must not apply it a second time.
  int no = 0;
  ssh_options_set(ss, SSH_OPTIONS_PROCESS_CONFIG, &no);
  ssh_options_set(ss, SSH_OPTIONS_HOST, e.address.c_str());
  unsigned int port = static_cast<unsigned int>(e.port);
  ssh_options_set(ss, SSH_OPTIONS_PORT, &port);
  ssh_options_set(ss, SSH_OPTIONS_USER, e.user.c_str());
  long secs = target_.connect_timeout_ms / 1000;
  long usecs = (target_.connect_timeout_ms % 1000) * 1000;
  ssh_options_set(ss, SSH_OPTIONS_TIMEOUT, &secs);
  ssh_options_set(ss, SSH_OPTIONS_TIMEOUT_USEC, &usecs);
  // paictl checks the host key itself (verify_host_key), against one parsed copy of
  // each known_hosts file: libssh would read and parse the files again in every
  // connection. It is given none to read, and the host-key algorithms in the order
  // it would have taken from them: the key types known for the host first.
  ssh_options_set(ss, SSH_OPTIONS_KNOWNHOSTS, "/dev/null");
  ssh_options_set(ss, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  if (target_.host_key_policy != HostKeyPolicy::Off) {
    std::vector<std::shared_ptr<const KnownHosts>> files;
    {
      std::shared_lock lock(kh_.mu);
      if (!load_known_hosts(e, files)) return nullptr;
    }
    std::vector<std::string> types;
    for (const auto& f : files)
      for (const KnownHostKey* k : f->keys_for(known_hosts_name(e))) types.push_back(k->type);
    std::string algos = host_key_algorithms(types);
    ssh_options_set(ss, SSH_OPTIONS_HOSTKEYS, algos.c_str());
  }
  int nodelay = 1;
  ssh_options_set(ss, SSH_OPTIONS_NODELAY, &nodelay);
  if (fd >= 0) ssh_options_set(ss, SSH_OPTIONS_FD, &fd);

  if (ssh_connect(ss) != SSH_OK) {
    std::string err = ssh_get_error(ss);
    std::string low = util::to_lower(err);
    int secs_shown = (target_.connect_timeout_ms + 999) / 1000;
    if (low.find("resolve") != std::string::npos) {
      fail(Failure::Resolve, "cannot resolve " + e.address + ": " + err,
           "check the name, or use the IP address (layout.yaml hostip)");
    } else if (low.find("timeout") != std::string::npos ||
               low.find("timed out") != std::string::npos) {
      fail(Failure::ConnectTimeout,
           "no SSH answer from " + where(e) + " within " + std::to_string(secs_shown) + " s",
           "check that the host is up, that sshd listens on port " + std::to_string(e.port) +
               " and that no firewall drops the connection; --connect-timeout raises the limit");
    } else if (low.find("refused") != std::string::npos) {
      fail(Failure::Connect, "connection to " + where(e) + " refused",
           "is sshd running and listening on port " + std::to_string(e.port) + "?");
    } else {
      fail(Failure::Connect, "cannot connect to " + where(e) + ": " + err,
           "check the address and port, and the network path to the host");
    }
    return nullptr;
  }
  set_tcp_keepalive(ssh_get_fd(ss), target_.keepalive_interval_s);
  if (!verify_host_key(ss, e, is_jump)) return nullptr;
  if (!authenticate(ss, e, is_jump)) return nullptr;
  return s;
}

bool Session::load_known_hosts(const Endpoint& e,
                               std::vector<std::shared_ptr<const KnownHosts>>& out) {
  for (const std::string* path : {&target_.known_hosts_file, &target_.global_known_hosts_file}) {
    if (path->empty()) continue;
    auto parsed = kh_.cache.get(*path);
    if (!parsed.ok()) {
      fail(Failure::HostKeyError,
           "cannot check the host key of " + where(e) + ": " + parsed.error().message,
           "check that the known_hosts file is a readable regular file (--known-hosts FILE)");
      return false;
    }
    out.push_back(std::move(*parsed));
  }
  return true;
}

bool Session::append_known_host(const Endpoint& e, const std::string& line) {
  const std::string& kh = target_.known_hosts_file;
  std::string dir = kh.substr(0, kh.rfind('/'));
  if (!dir.empty() && dir != kh && !util::is_directory(dir))
    (void)util::make_directories(dir, 0700);
  int fd = ::open(kh.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0600);
  std::string err;
  if (fd < 0) {
    err = std::strerror(errno);
  } else {
    struct stat st {};
    std::string text = line;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      err = "not a regular file";
    } else if (st.st_size > 0) {
      // A file whose last line has no newline gets one first, or the new key
      // would join that line.
      char last = '\n';
      int rfd = ::open(kh.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (rfd >= 0) {
        if (::pread(rfd, &last, 1, st.st_size - 1) != 1) last = '\n';
        ::close(rfd);
      }
      if (last != '\n') text.insert(text.begin(), '\n');
    }
    if (err.empty()) {
      ssize_t n = ::write(fd, text.data(), text.size());
      if (n != static_cast<ssize_t>(text.size()))
        err = n < 0 ? std::strerror(errno) : "short write";
    }
    if (::close(fd) != 0 && err.empty()) err = std::strerror(errno);
  }
  if (err.empty()) return true;
  fail(Failure::HostKeyError, "cannot add the host key of " + where(e) + " to " + kh + ": " + err,
       "check that " + kh + " is writable");
  return false;
}

bool Session::verify_host_key(ssh_session s, const Endpoint& e, bool is_jump) {
  ssh_key raw = nullptr;
  std::string shown, type, b64;
  std::optional<std::string> blob;
  if (ssh_get_server_publickey(s, &raw) == SSH_OK) {
    KeyPtr key(raw);
    type = ssh_key_type_to_char(ssh_key_type(key.get()));
    unsigned char* hash = nullptr;
    size_t hlen = 0;
    if (ssh_get_publickey_hash(key.get(), SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == 0) {
      char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
      if (fp) {
        shown = type + " " + fp;
        ssh_string_free_char(fp);
      }
      ssh_clean_pubkey_hash(&hash);
    }
    char* exported = nullptr;
    if (ssh_pki_export_pubkey_base64(key.get(), &exported) == SSH_OK && exported) {
      b64 = exported;
      ssh_string_free_char(exported);
      blob = util::base64_decode(b64);
    }
  }
  if (!is_jump) result_.host_key = shown;
  if (target_.host_key_policy == HostKeyPolicy::Off) {
    if (!is_jump) result_.host_key_unchecked = true;
    return true;
  }
  const std::string& kh = target_.known_hosts_file;
  if (!blob || type.empty()) {
    fail(Failure::HostKeyError, "cannot read the host key " + where(e) + " sent",
         "check the host's sshd host keys (ssh-keyscan -p " + std::to_string(e.port) + " " +
             e.address + ")");
    return false;
  }
  const std::string name = known_hosts_name(e);
  auto check = [&](KnownHostCheck& out) {
    std::vector<std::shared_ptr<const KnownHosts>> files;
    if (!load_known_hosts(e, files)) return false;
    std::vector<const KnownHosts*> view;
    for (const auto& f : files) view.push_back(f.get());
    out = check_known_host(view, name, type, *blob);
    return true;
  };
  KnownHostCheck found;
  {
    std::shared_lock lock(kh_.mu);
    if (!check(found)) return false;
  }
  // A known key that is not this one, or a revoked one: refused under every policy.
  auto refuse = [&](const KnownHostCheck& c) {
    if (c.status == KnownHostStatus::Revoked) {
      fail(Failure::HostKeyChanged,
           "REVOKED HOST KEY: " + where(e) + " sent " + shown +
               ", which an @revoked line of its known_hosts refuses",
           "the key was revoked on purpose; ask the host's administrator for its new key");
      return false;
    }
    std::string held = c.line > 0 ? " (line " + std::to_string(c.line) + ")" : "";
    fail(Failure::HostKeyChanged,
         "HOST KEY CHANGED: " + where(e) + " sent " + (shown.empty() ? "a key" : shown) +
             ", which is not the key " + kh + " holds for it" + held +
             "; someone may be intercepting the connection",
         "if the host was reinstalled, verify its new key out of band, then remove the old one: "
         "ssh-keygen -f " +
             util::shell_quote(kh) + " -R " + util::shell_quote(name));
    return false;
  };
  if (found.status == KnownHostStatus::Ok) return true;
  if (found.status != KnownHostStatus::NotFound) return refuse(found);
  if (target_.host_key_policy != HostKeyPolicy::AcceptNew) {
    fail(Failure::HostKeyUnknown,
         "the host key of " + where(e) + " (" + (shown.empty() ? "unknown type" : shown) +
             ") is not in " + kh,
         "verify the fingerprint with the host's administrator, then add it with ssh-keyscan -p " +
             std::to_string(e.port) + " " + e.address + " >> " + util::shell_quote(kh) +
             ", or let paictl add unknown hosts with --host-key-policy accept-new");
    return false;
  }
  std::unique_lock lock(kh_.mu);
  // Another connection may have added it meanwhile (a jump host shared by hosts).
  if (!check(found)) return false;
  if (found.status == KnownHostStatus::Ok) return true;
  if (found.status != KnownHostStatus::NotFound) return refuse(found);
  if (!append_known_host(e, known_hosts_line(name, type, b64))) return false;
  if (!is_jump) result_.host_key_added = true;
  return true;
}

bool Session::authenticate(ssh_session s, const Endpoint& e, bool is_jump) {
  (void)is_jump;
  int rc = ssh_userauth_none(s, nullptr);
  if (rc == SSH_AUTH_SUCCESS) {
    result_.auth_method = "none";
    return true;
  }
  if (rc == SSH_AUTH_ERROR) {
    fail(Failure::Protocol,
         "the connection to " + where(e) + " broke during authentication: " + ssh_get_error(s));
    return false;
  }
  int methods = ssh_userauth_list(s, nullptr);
  std::vector<std::string> tried;
  std::vector<std::string> notes;

  if (e.pubkey_auth && (methods & SSH_AUTH_METHOD_PUBLICKEY)) {
    if (!e.agent_socket.empty() && util::path_exists(e.agent_socket)) {
      ssh_options_set(s, SSH_OPTIONS_IDENTITY_AGENT, e.agent_socket.c_str());
      rc = ssh_userauth_agent(s, nullptr);
      tried.push_back("ssh-agent");
      if (rc == SSH_AUTH_SUCCESS) {
        result_.auth_method = "publickey (ssh-agent)";
        return true;
      }
      if (rc == SSH_AUTH_ERROR && !ssh_is_connected(s)) {
        fail(Failure::Protocol,
             "the connection to " + where(e) + " broke during authentication: " + ssh_get_error(s));
        return false;
      }
    }
    for (const auto& file : e.identity_files) {
      if (!util::is_regular_file(file)) continue;
      ssh_key raw = nullptr;
      if (ssh_pki_import_privkey_file(file.c_str(), nullptr, nullptr, nullptr, &raw) != SSH_OK ||
          !raw) {
        notes.push_back(
            file + " could not be read (a passphrase-protected key must be loaded into ssh-agent)");
        continue;
      }
      KeyPtr key(raw);
      rc = ssh_userauth_publickey(s, nullptr, key.get());
      tried.push_back(file);
      if (rc == SSH_AUTH_SUCCESS) {
        result_.auth_method = "publickey (" + file + ")";
        return true;
      }
      if (rc == SSH_AUTH_ERROR && !ssh_is_connected(s)) {
        fail(Failure::Auth,
             "the server at " + where(e) + " closed the connection during authentication as " +
                 e.user + " (too many keys offered?)",
             "set IdentitiesOnly yes and one IdentityFile for this host in ~/.ssh/config");
        return false;
      }
    }
    methods = ssh_userauth_list(s, nullptr);
  }

  const std::string& pw = password_.reveal();
  if (!pw.empty() && e.password_auth) {
    if (methods & SSH_AUTH_METHOD_PASSWORD) {
      rc = ssh_userauth_password(s, nullptr, pw.c_str());
      tried.push_back("password");
      if (rc == SSH_AUTH_SUCCESS) {
        result_.auth_method = "password";
        return true;
      }
    } else if (methods & SSH_AUTH_METHOD_INTERACTIVE) {
      tried.push_back("keyboard-interactive");
      rc = ssh_userauth_kbdint(s, nullptr, nullptr);
      for (int round = 0; rc == SSH_AUTH_INFO && round < 4; ++round) {
        int n = ssh_userauth_kbdint_getnprompts(s);
        for (int i = 0; i < n; ++i) {
          char echo = 0;
          const char* prompt = ssh_userauth_kbdint_getprompt(s, static_cast<unsigned>(i), &echo);
          std::string p = prompt ? util::to_lower(prompt) : "";
          // Only a hidden password prompt gets the password.
          bool is_password = !echo && p.find("password") != std::string::npos;
          ssh_userauth_kbdint_setanswer(s, static_cast<unsigned>(i), is_password ? pw.c_str() : "");
        }
        rc = ssh_userauth_kbdint(s, nullptr, nullptr);
      }
      if (rc == SSH_AUTH_SUCCESS) {
        result_.auth_method = "keyboard-interactive";
        return true;
      }
    }
  }

  std::vector<std::string> accepted;
  if (methods & SSH_AUTH_METHOD_PUBLICKEY) accepted.push_back("publickey");
  if (methods & SSH_AUTH_METHOD_PASSWORD) accepted.push_back("password");
  if (methods & SSH_AUTH_METHOD_INTERACTIVE) accepted.push_back("keyboard-interactive");
  if (methods & SSH_AUTH_METHOD_GSSAPI_MIC) accepted.push_back("gssapi-with-mic");
  std::string msg = "authentication as " + e.user + " at " + where(e) + " failed (tried: " +
                    (tried.empty() ? std::string("nothing usable") : util::join(tried, ", ")) +
                    "; the server accepts: " +
                    (accepted.empty() ? std::string("none") : util::join(accepted, ", ")) + ")";
  for (const auto& n : notes) msg += "; " + n;
  std::string hint =
      "put the public key of config.yaml's ssh_key_file_path (or --identity) into ~" + e.user +
      "/.ssh/authorized_keys on the host";
  if (pw.empty() && (methods & (SSH_AUTH_METHOD_PASSWORD | SSH_AUTH_METHOD_INTERACTIVE)))
    hint += ", or give the password with --password-stdin or PAICTL_SSH_PASSWORD";
  fail(Failure::Auth, msg, hint);
  return false;
}

bool Session::connect() {
  if (!target_.unsupported.empty()) {
    fail(Failure::Unsupported, target_.unsupported,
         "see docs/check-hosts.md for the SSH settings paictl honours");
    return false;
  }
  ++result_.logins;
  auto t0 = Clock::now();
  hops_ = std::make_unique<Hops>();
  Hops& conn = *hops_;
  int fd = -1;
  // Jump hosts: each hop is reached through the previous one.
  for (size_t i = 0; i < target_.jumps.size(); ++i) {
    const Endpoint& hop = target_.jumps[i];
    SessionPtr hs = open(hop, fd, true);
    if (!hs) {
      fail_jump(hop);
      return false;
    }
    const Endpoint& next = i + 1 < target_.jumps.size() ? target_.jumps[i + 1] : target_.endpoint;
    ChannelPtr ch(ssh_channel_new(hs.get()));
    if (!ch || ssh_channel_open_forward(ch.get(), next.address.c_str(), next.port, "127.0.0.1",
                                        0) != SSH_OK) {
      fail(Failure::Jump,
           "jump host " + hop.name + " could not open a connection to " + where(next) + ": " +
               ssh_get_error(hs.get()),
           "check that " + next.address + " is reachable from " + hop.name +
               " and that its sshd allows TCP forwarding");
      return false;
    }
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      fail(Failure::Channel, std::string("cannot create a socket pair: ") + std::strerror(errno));
      return false;
    }
    conn.pumps.push_back(std::make_unique<Pump>(std::move(hs), std::move(ch), sv[1]));
    conn.fds.push_back(sv[0]);
    fd = sv[0];
  }

  s_ = open(target_.endpoint, fd, false);
  result_.connect_ms = ms_since(t0);
  if (!s_) {
    disconnect();
    return false;
  }
  return true;
}

bool Session::exec_on_session(const ExecRequest& req) {
  ssh_session ss = s_.get();
  auto t_exec = Clock::now();

  ChannelPtr ch(ssh_channel_new(ss));
  if (!ch || ssh_channel_open_session(ch.get()) != SSH_OK) {
    fail(Failure::Channel,
         "cannot open a session channel on " + target_.endpoint.name + ": " + ssh_get_error(ss),
         "check MaxSessions and the login shell of the user on the host");
    return false;
  }
  if (ssh_channel_request_exec(ch.get(), req.command.c_str()) != SSH_OK) {
    fail(Failure::Channel, "the host refused to run the command: " + std::string(ssh_get_error(ss)),
         "check that the user may run commands (no ForceCommand, no restricted shell)");
    return false;
  }
  size_t off = 0;
  while (off < req.input.size()) {
    uint32_t chunk = static_cast<uint32_t>(std::min<size_t>(req.input.size() - off, 32768));
    int w = ssh_channel_write(ch.get(), req.input.data() + off, chunk);
    if (w == SSH_ERROR) {
      fail(Failure::Protocol, "the connection broke while sending the command's input: " +
                                  std::string(ssh_get_error(ss)));
      return true;
    }
    off += static_cast<size_t>(w);
  }
  ssh_channel_send_eof(ch.get());

  auto deadline = t_exec + std::chrono::milliseconds(req.timeout_ms);
  auto last_data = Clock::now();
  char buf[65536];
  const size_t max_err = 1u << 20;
  while (true) {
    auto now = Clock::now();
    if (now >= deadline) {
      fail(Failure::CommandTimeout, "the command did not finish within " +
                                        std::to_string((req.timeout_ms + 999) / 1000) + " s");
      break;
    }
    int wait = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    wait = std::max(1, std::min(wait, 1000));
    int n = ssh_channel_read_timeout(ch.get(), buf, sizeof buf, 0, wait);
    if (n == SSH_ERROR) {
      fail(Failure::Protocol, "the connection to " + target_.endpoint.name +
                                  " broke while the command ran: " + ssh_get_error(ss));
      break;
    }
    if (n > 0) {
      last_data = Clock::now();
      if (result_.first_output_epoch == 0)
        result_.first_output_epoch =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count();
      if (result_.out.size() + static_cast<size_t>(n) > req.max_output) {
        fail(Failure::OutputTooLarge,
             "the command printed more than " + std::to_string(req.max_output >> 20) + " MiB");
        break;
      }
      result_.out.append(buf, static_cast<size_t>(n));
    }
    int e;
    while ((e = ssh_channel_read_nonblocking(ch.get(), buf, sizeof buf, 1)) > 0) {
      if (result_.err.size() < max_err)
        result_.err.append(buf,
                           std::min<size_t>(static_cast<size_t>(e), max_err - result_.err.size()));
      last_data = Clock::now();
    }
    if (e == SSH_ERROR) {
      fail(Failure::Protocol, "the connection to " + target_.endpoint.name +
                                  " broke while the command ran: " + ssh_get_error(ss));
      break;
    }
    if (n == 0 && ssh_channel_is_eof(ch.get())) {
      // Drain what arrived with the EOF.
      while ((n = ssh_channel_read_nonblocking(ch.get(), buf, sizeof buf, 0)) > 0)
        result_.out.append(buf, static_cast<size_t>(n));
      while ((e = ssh_channel_read_nonblocking(ch.get(), buf, sizeof buf, 1)) > 0)
        if (result_.err.size() < max_err)
          result_.err.append(
              buf, std::min<size_t>(static_cast<size_t>(e), max_err - result_.err.size()));
      result_.exit_status = ssh_channel_get_exit_status(ch.get());
      break;
    }
    // A keepalive after each quiet interval keeps NAT and firewall state alive while a
    // slow command (nvidia-smi on a sick GPU) runs; a dead peer is caught by the
    // command deadline and by TCP keepalive on the socket.
    if (target_.keepalive_interval_s > 0 &&
        Clock::now() - last_data >= std::chrono::seconds(target_.keepalive_interval_s)) {
      ssh_send_keepalive(ss);
      last_data = Clock::now();
    }
  }
  result_.exec_ms = ms_since(t_exec);
  ssh_channel_close(ch.get());
  return true;
}

ExecResult Session::run(const ExecRequest& req) {
  if (!connect()) return result_;
  exec_on_session(req);
  disconnect();
  return result_;
}

ExecResult Session::run_kept(const ExecRequest& req) {
  // What the login established stays; what one command found does not.
  ExecResult kept;
  kept.host_key = result_.host_key;
  kept.auth_method = result_.auth_method;
  kept.host_key_added = result_.host_key_added;
  kept.host_key_unchecked = result_.host_key_unchecked;
  bool reused = s_ && ssh_is_connected(s_.get());
  result_ = kept;
  if (!reused) {
    disconnect();
    if (!connect()) return result_;
  }
  if (!exec_on_session(req) && reused) {
    // The kept connection died while idle (the host rebooted, a NAT forgot it): the
    // command never started, so it is safe to log in again and run it once.
    result_ = kept;
    disconnect();
    if (!connect()) return result_;
    exec_on_session(req);
  }
  // A connection that broke under the command is not reused.
  if (result_.failure == Failure::Protocol || result_.failure == Failure::CommandTimeout)
    disconnect();
  return result_;
}

// A connection kept for many commands; one command at a time.
class SshConnection : public Connection {
 public:
  SshConnection(const Target& target, const Secret& password, KnownHostsFiles& kh)
      : session_(target, password, kh) {}
  ExecResult exec(const ExecRequest& request) override {
    std::lock_guard lock(mu_);
    auto t0 = Clock::now();
    ExecResult r = session_.run_kept(request);
    if (r.connect_ms == 0 && !r.ok()) r.connect_ms = ms_since(t0);
    return r;
  }

 private:
  std::mutex mu_;
  Session session_;
};

}  // namespace

SshTransport::SshTransport() : known_hosts_(std::make_unique<KnownHostsFiles>()) {
  init_libssh_once();
}
SshTransport::~SshTransport() = default;

ExecResult SshTransport::exec(const Target& target, const ExecRequest& request) {
  Session session(target, password_, *known_hosts_);
  auto t0 = Clock::now();
  ExecResult r = session.run(request);
  if (r.connect_ms == 0) r.connect_ms = ms_since(t0);
  return r;
}

std::unique_ptr<Connection> SshTransport::connect(const Target& target) {
  return std::make_unique<SshConnection>(target, password_, *known_hosts_);
}

std::string public_key_fingerprint(const std::string& openssh_public_key) {
  init_libssh_once();
  auto parts = util::split(util::trim(openssh_public_key), ' ');
  if (parts.size() < 2) return {};
  std::string type(parts[0]), b64(parts[1]);
  ssh_key raw = nullptr;
  if (ssh_pki_import_pubkey_base64(b64.c_str(), ssh_key_type_from_name(type.c_str()), &raw) !=
      SSH_OK)
    return {};
  KeyPtr key(raw);
  unsigned char* hash = nullptr;
  size_t hlen = 0;
  if (ssh_get_publickey_hash(key.get(), SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) != 0) return {};
  char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
  ssh_clean_pubkey_hash(&hash);
  if (!fp) return {};
  std::string out = fp;
  ssh_string_free_char(fp);
  return out;
}

}  // namespace pai::remote

#include "check/hosts_common.h"
#include "flags.h"

#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "check/report.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "remote/executor.h"
#include "remote/ssh_transport.h"
#include "util/stdin.h"
#include "util/strings.h"

namespace paictl {

void add_hosts_options(Flags* cmd, HostsOptions& o) {
  cmd->add_option("PATH", o.paths, "A cluster directory (layout.yaml, config.yaml) or its files");
  cmd->add_option("--hosts", o.hosts,
                  "Hosts to reach instead of a cluster's: [user@]host[:port], comma-separated")
      ->type_name("LIST");
  cmd->add_option("--hosts-file", o.hosts_file,
                  "Read hosts from FILE, one [user@]host[:port] per line ('#' comments)")
      ->type_name("FILE");
  cmd->add_option("--limit", o.limit,
                  "Only these hosts of the layout (hostnames or IPs, comma-separated)")
      ->delimiter(',')
      ->type_name("LIST");
  cmd->add_option("-u,--user", o.user,
                  "Log in as USER (default: config.yaml's user, then ~/.ssh/config, then you)")
      ->type_name("USER");
  cmd->add_option(
         "-i,--identity", o.identities,
         "Private key to try first (repeatable); config.yaml's ssh_key_file_path is tried too")
      ->type_name("FILE");
  cmd->add_option("--ssh-config", o.ssh_config,
                  "Read this SSH client config instead of ~/.ssh/config and /etc/ssh/ssh_config "
                  "('none': no file)")
      ->type_name("FILE");
  cmd->add_option(
         "--known-hosts", o.known_hosts,
         "known_hosts file to verify (and, with accept-new, extend); default ~/.ssh/known_hosts")
      ->type_name("FILE");
  cmd->add_option("--host-key-policy", o.host_key_policy,
                  "strict: the host key must be known; accept-new: add unknown hosts, refuse "
                  "changed keys; off: no check (unsafe)")
      ->check(IsMember({"strict", "accept-new", "off"}))
      ->capture_default_str();
  cmd->add_flag("--no-agent", o.no_agent, "Do not use ssh-agent (SSH_AUTH_SOCK)");
  cmd->add_flag("--password-stdin", o.password_stdin,
                "Read the SSH password (also used for sudo) from the first line of stdin; "
                "PAICTL_SSH_PASSWORD and "
                "PAICTL_SUDO_PASSWORD are read from the environment");
  cmd->add_option("--parallel", o.parallel,
                  "Hosts reached at once (lowered to what the open-file limit allows)")
      ->check(Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--connect-timeout", o.connect_timeout_s, "Seconds to connect and exchange keys")
      ->check(Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--command-timeout", o.command_timeout_s,
                  "Seconds the fact script may run on a host")
      ->check(Range(0.1, 86400.0))
      ->capture_default_str();
  cmd->add_option("--keepalive", o.keepalive_s,
                  "Seconds of silence before an SSH keepalive (0: none)")
      ->check(Range(0, 3600))
      ->capture_default_str();
  cmd->add_option(
         "--docker-data-root", o.docker_data_root,
         "Docker data root to measure (default: config.yaml's docker_data_root, else /mnt/docker)")
      ->type_name("PATH");
  cmd->add_option("--registry", o.registries,
                  "Registry host the fact script resolves (for the DNS check) (repeatable; "
                  "default: config.yaml's, else "
                  "docker.io, gcr.io, quay.io)")
      ->type_name("HOST");
  cmd->add_flag("--dry-run", o.dry_run, "Show how each host would be reached, and contact none");
  cmd->add_flag("--print-script", o.print_script, "Print the script run on every host, and exit");
}

namespace {

// The terminal's width on `fd`, 80 when it does not say.
size_t hosts_common_columns(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

pai::util::Result<pai::remote::Secret> read_password_from_stdin() {
  bool tty = ::isatty(0) == 1;
  termios old{};
  if (tty) {
    std::fprintf(stderr, "SSH password: ");
    std::fflush(stderr);
    if (::tcgetattr(0, &old) == 0) {
      termios quiet = old;
      quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
      ::tcsetattr(0, TCSAFLUSH, &quiet);
    }
  }
  auto s = pai::remote::read_secret_line(0);
  if (tty) {
    ::tcsetattr(0, TCSAFLUSH, &old);
    std::fprintf(stderr, "\n");
  }
  return s;
}

}  // namespace

void validate_hosts_options(const HostsOptions& o, Usage& u) {
  u.error_if(o.hosts_file == "-" && o.password_stdin,
             "--hosts-file - and --password-stdin both want stdin");
  for (const auto& n : o.registries)
    u.error_if(!pai::facts::is_safe_dns_name(n), "registry \"" + n + "\" is not a host name");
}

Step<PreparedHosts> prepare_hosts(const HostsOptions& o, const Globals& g) {
  PreparedHosts out;
  auto policy = pai::remote::parse_host_key_policy(o.host_key_policy);
  pai::inventory::InventoryOptions io;
  io.paths = o.paths;
  io.hosts = o.hosts;
  io.hosts_file = o.hosts_file;
  io.limit = o.limit;
  io.user = o.user;
  io.identities = o.identities;
  io.ssh_config = o.ssh_config;
  io.known_hosts = o.known_hosts;
  io.host_key_policy = policy.value_or(pai::remote::HostKeyPolicy::Strict);
  io.connect_timeout_ms = static_cast<int>(std::lround(o.connect_timeout_s * 1000));
  io.keepalive_s = o.keepalive_s;
  io.use_agent = !o.no_agent;
  io.accept_codes = o.accept_codes;
  if (!o.hosts_file.empty() && o.hosts_file == "-" && o.password_stdin) {
    print_error("--hosts-file - and --password-stdin both want stdin");
    return ExitNow{kExitUsage};
  }
  if (o.hosts_file == "-") {
    auto r = pai::util::read_fd(0, 4u << 20);
    if (!r.ok()) {
      print_error("--hosts-file -: " + r.error().message);
      return ExitNow{kExitUsage};
    }
    io.hosts_file_content = std::move(*r);
  }

  out.inventory = pai::inventory::build_inventory(io);
  print_findings_stderr(out.inventory.diagnostics, g);
  if (out.inventory.input_error) {
    if (out.inventory.cluster_files_invalid)
      std::fprintf(
          stderr,
          "The cluster files must be valid before hosts are checked (paictl check config %s).\n",
          pai::util::join(o.paths, " ").c_str());
    return ExitNow{kExitUsage};
  }

  // Passwords: stdin, then the environment, then config.yaml. Never an argument.
  if (o.password_stdin && o.stdin_password && o.stdin_password->read) {
    out.ssh_password = o.stdin_password->secret;
    out.password_origin = "stdin";
  } else if (o.password_stdin) {
    auto password = read_password_from_stdin();
    if (!password.ok()) {
      print_error("--password-stdin: " + password.error().message);
      return ExitNow{kExitUsage};
    }
    out.ssh_password = std::move(*password);
    out.password_origin = "stdin";
    if (o.stdin_password) {
      o.stdin_password->read = true;
      o.stdin_password->secret = out.ssh_password;
    }
  } else if (const char* env = std::getenv("PAICTL_SSH_PASSWORD"); env && *env) {
    out.ssh_password = pai::remote::Secret(env);
    out.password_origin = "PAICTL_SSH_PASSWORD";
  } else if (!out.inventory.config_password.empty()) {
    out.ssh_password = out.inventory.config_password;
    out.password_origin = "config.yaml";
  }
  if (const char* env = std::getenv("PAICTL_SUDO_PASSWORD"); env && *env) {
    out.collect.sudo_password = pai::remote::Secret(env);
    out.sudo_origin = "PAICTL_SUDO_PASSWORD";
  } else if (!out.ssh_password.empty()) {
    out.collect.sudo_password = out.ssh_password;
    out.sudo_origin = out.password_origin;
  }

  out.collect.parallel = static_cast<size_t>(o.parallel);
  out.collect.command_timeout_ms = static_cast<int>(std::lround(o.command_timeout_s * 1000));
  out.collect.script.docker_data_root =
      !o.docker_data_root.empty() ? o.docker_data_root : out.inventory.docker_data_root;
  std::vector<std::string> names = !o.registries.empty() ? o.registries
                                   : !out.inventory.registries.empty()
                                       ? out.inventory.registries
                                       : pai::inventory::default_registries();
  for (const auto& n : names) {
    if (!pai::facts::is_safe_dns_name(n)) {
      print_error("registry \"" + n + "\" is not a host name");
      return ExitNow{kExitUsage};
    }
  }
  out.collect.script.dns_names = names;

  if (io.host_key_policy == pai::remote::HostKeyPolicy::Off && !o.print_script) {
    bool c = use_color(g.no_color, 2);
    std::fprintf(stderr,
                 "%spaictl: WARNING: host key checking is OFF.%s Any machine that answers at these "
                 "addresses is "
                 "trusted, and it gets the password%s. Use --host-key-policy accept-new to trust "
                 "new hosts once.\n",
                 c ? "\x1b[1;31m" : "", c ? "\x1b[0m" : "",
                 out.ssh_password.empty() ? " if one is given" : "");
  }
  return out;
}

void print_dry_run(const PreparedHosts& p, const HostsOptions& o, const std::string& command,
                   const std::string& format) {
  const auto& hosts = p.inventory.hosts;
  size_t fds = 4;
  for (const auto& h : hosts) fds = std::max(fds, 4 + 3 * h.target.jumps.size());
  size_t effective = pai::remote::effective_parallelism(p.collect.parallel, hosts.size(), fds, 32);
  auto auth_of = [&](const pai::remote::Endpoint& e) {
    std::vector<std::string> a;
    if (!e.agent_socket.empty()) a.push_back("ssh-agent");
    for (const auto& f : e.identity_files) a.push_back(f);
    if (!p.ssh_password.empty() && e.password_auth)
      a.push_back("password (" + p.password_origin + ")");
    return a;
  };
  if (is_structured(format)) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& h : hosts) {
      const auto& e = h.target.endpoint;
      nlohmann::json jumps = nlohmann::json::array();
      for (const auto& j : h.target.jumps)
        jumps.push_back(
            {{"name", j.name}, {"address", j.address}, {"port", j.port}, {"user", j.user}});
      nlohmann::json jh = {{"name", h.name},
                           {"address", e.address},
                           {"port", e.port},
                           {"user", e.user},
                           {"auth", auth_of(e)},
                           {"jumps", jumps},
                           {"known_hosts", h.target.known_hosts_file},
                           {"host_key_policy", pai::remote::to_string(h.target.host_key_policy)},
                           {"roles", nlohmann::json::array()}};
      if (h.master) jh["roles"].push_back("master");
      if (h.worker) jh["roles"].push_back("worker");
      if (h.sku) jh["machine_type"] = h.sku->name;
      if (!h.target.unsupported.empty()) jh["unsupported"] = h.target.unsupported;
      arr.push_back(std::move(jh));
    }
    nlohmann::json j = {{"dry_run", true},
                        {"hosts", arr},
                        {"command", command},
                        {"parallel", effective},
                        {"sudo_password", p.sudo_origin.empty() ? "none" : "from " + p.sudo_origin},
                        {"docker_data_root", p.collect.script.docker_data_root},
                        {"registries", p.collect.script.dns_names},
                        {"command_timeout_s", o.command_timeout_s},
                        {"connect_timeout_s", o.connect_timeout_s}};
    print_document(document("hostsDryRun", Json(j)), format);
    return;
  }
  std::printf(
      "Dry run: nothing is contacted. %zu host%s, %zu at a time, one SSH round trip each.\n\n",
      hosts.size(), hosts.size() == 1 ? "" : "s", effective);
  for (const auto& h : hosts) {
    const auto& e = h.target.endpoint;
    std::printf("%s\n", h.name.c_str());
    std::printf(
        "  connect   %s@%s:%d%s\n", e.user.c_str(), e.address.c_str(), e.port,
        h.sku ? (" (" + h.sku->name + (h.master ? ", master" : ", worker") + ")").c_str() : "");
    for (const auto& j : h.target.jumps)
      std::printf("  via       %s@%s:%d (ProxyJump)\n", j.user.c_str(), j.address.c_str(), j.port);
    std::printf("  auth      %s\n", pai::util::join(auth_of(e), ", ").c_str());
    std::printf("  host key  %s, %s\n",
                std::string(pai::remote::to_string(h.target.host_key_policy)).c_str(),
                h.target.known_hosts_file.c_str());
    if (!h.target.unsupported.empty())
      std::printf("  cannot    %s\n", h.target.unsupported.c_str());
  }
  std::printf("\nRemote command: %s\n", command.c_str());
  std::printf("Its stdin: %s, then the fact script (paictl check hosts --print-script shows it).\n",
              p.sudo_origin.empty() ? "an empty line"
                                    : ("the sudo password from " + p.sudo_origin +
                                       " (only to hosts not logged in as root)")
                                          .c_str());
  std::printf(
      "Timeouts: connect %.1f s, script %.1f s. Docker data root %s. Registries resolved: %s.\n",
      o.connect_timeout_s, o.command_timeout_s, p.collect.script.docker_data_root.c_str(),
      pai::util::join(p.collect.script.dns_names, ", ").c_str());
}

std::string progress_text(const std::string& what, const pai::check::CollectProgress& p,
                          size_t width) {
  std::string head =
      what + ": " + std::to_string(p.done) + "/" + std::to_string(p.total) + " hosts";
  if (p.running.empty()) return head + " done";
  head += ", waiting for ";
  // As many names as fit with the tail "and N more" that the rest needs.
  const size_t n = p.running.size();
  auto tail = [&](size_t shown) {
    return shown < n ? " and " + std::to_string(n - shown) + " more" : std::string();
  };
  std::string names = p.running[0];
  size_t shown = 1;
  while (shown < n) {
    std::string more = names + ", " + p.running[shown];
    if (head.size() + more.size() + tail(shown + 1).size() > width) break;
    names = std::move(more);
    ++shown;
  }
  return head + names + tail(shown);
}

std::vector<pai::check::HostOutcome> collect_with_progress(PreparedHosts& p, const Globals& g,
                                                           const char* what, double* duration_ms,
                                                           size_t* parallel_used) {
  pai::remote::SshTransport transport;
  transport.set_password(p.ssh_password);
  bool progress = !g.quiet && is_tty(2);
  std::mutex mu;
  if (progress) {
    size_t width = hosts_common_columns(2);
    p.collect.on_progress = [&, width](const pai::check::CollectProgress& cp) {
      std::lock_guard lock(mu);
      std::string line = progress_text(what, cp, width > 1 ? width - 1 : 79);
      std::fprintf(stderr, "\r\x1b[K%s", line.c_str());
      std::fflush(stderr);
    };
  }
  auto t0 = std::chrono::steady_clock::now();
  auto outcomes = pai::check::collect(transport, p.inventory.hosts, p.collect, parallel_used);
  if (duration_ms)
    *duration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (progress) std::fprintf(stderr, "\r\x1b[K");
  return outcomes;
}

}  // namespace paictl

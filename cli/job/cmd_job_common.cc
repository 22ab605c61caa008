// Shared by the job, check job and cluster commands.

#include "job/cmd_job_common.h"
#include "flags.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <thread>

#include "api/client.h"
#include "cluster/registry.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "http/client.h"
#include "job/job_usage.h"
#include "job/rules.h"
#include "job/validate.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/printable.h"
#include "util/strings.h"
#include "util/time.h"
#include "util/version.h"
#include "util/yaml_emit.h"

namespace paictl {}  // namespace paictl

namespace paictl::jobcli {

// --- check job -------------------------------------------------------------------------

void add_check_flags(Flags* cmd, CheckOptions& o, Globals& g) {
  cmd->add_option("FILE", o.files, "Job protocol v2 files ('-' reads stdin)")
      ->required()
      ->expected(1, -1);
  add_output_option(*cmd, o.output, g);
  cmd->add_option("--junit", o.junit, "Also write a JUnit XML report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_option("--sarif", o.sarif, "Also write a SARIF 2.1.0 report to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_flag("--fail-on-warn", o.fail_on_warn,
                "Exit 1 when there are warnings, not only errors");
  cmd->add_option("--param", o.params, "Check as if parameter NAME had VALUE (repeatable)")
      ->type_name("NAME=VALUE");
  cmd->add_option("--name", o.name, "Check as if the job were named NAME");
  cmd->add_option("--vc", o.vc, "Check as if defaults.virtualCluster were VC");
}

namespace {

bool valid_job_name(const std::string& name) {
  bool ok = name.size() <= 255;
  for (char c : name)
    ok &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-';
  return ok;
}

const char* kNameRule = "\" may contain only letters, digits, '_' and '-' (at most 255)";

}  // namespace

void validate_overrides(const std::vector<std::string>& params, const std::string& name, Usage& u) {
  for (const auto& p : params) {
    if (auto po = pai::job::parse_param(p); !po.ok())
      u.error(po.error().message, "--param NAME=VALUE");
  }
  if (!name.empty()) u.error_if(!valid_job_name(name), "--name \"" + name + kNameRule);
}

std::optional<pai::job::Overrides> make_overrides(const std::vector<std::string>& params,
                                                  const std::string& name, const std::string& vc) {
  pai::job::Overrides o;
  for (const auto& p : params) {
    auto po = pai::job::parse_param(p);
    if (!po.ok()) {
      print_error(po.error().message);
      return std::nullopt;
    }
    o.params.push_back(*po);
  }
  if (!name.empty()) {
    if (!valid_job_name(name)) {
      print_error("--name \"" + name + kNameRule);
      return std::nullopt;
    }
    o.name = name;
  }
  if (!vc.empty()) o.virtual_cluster = vc;
  return o;
}

int run_check(const CheckOptions& o, const Globals& g, const char* suite) {
  auto ov = make_overrides(o.params, o.name, o.vc);
  if (!ov) return kExitUsage;
  size_t stdin_count = 0;
  for (const auto& f : o.files) stdin_count += f == "-";
  if (stdin_count > 1) {
    print_error("'-' (stdin) can be given only once");
    return kExitUsage;
  }
  pai::job::ValidateOptions vopt;
  vopt.overrides = *ov;
  pai::job::CheckOutcome out = pai::job::check_files(o.files, vopt);
  DiagReport r;
  r.output = o.output;
  r.junit = o.junit;
  r.sarif = o.sarif;
  r.fail_on_warn = o.fail_on_warn;
  r.suite = suite;
  r.rules = &pai::job::rules();
  r.help_base_uri = "docs/jobs.md";
  r.source_line = [&out](const std::string& file, uint32_t line) {
    // Lines that hold a secret value are never shown.
    auto hidden = out.hidden_lines.find(file);
    if (hidden != out.hidden_lines.end() && hidden->second.count(line)) return std::string();
    auto it = out.sources.find(file);
    return it == out.sources.end() ? std::string() : nth_line(it->second, line);
  };
  return report_diagnostics(out.diagnostics, out.files, out.input_error, r, g);
}

// --- output ---------------------------------------------------------------------------

std::string format_duration_ms(double ms) {
  if (ms < 0 || std::isnan(ms)) return "-";
  long s = static_cast<long>(ms / 1000);
  if (s < 60) return std::to_string(s) + "s";
  long m = s / 60;
  if (m < 60) return std::to_string(m) + "m" + (s % 60 ? " " + std::to_string(s % 60) + "s" : "");
  long h = m / 60;
  if (h < 48) return std::to_string(h) + "h" + (m % 60 ? " " + std::to_string(m % 60) + "m" : "");
  return std::to_string(h / 24) + "d" + (h % 24 ? " " + std::to_string(h % 24) + "h" : "");
}

std::string format_time_ms(const Json& v) {
  if (!v.is_number()) return "-";
  return pai::util::format_local(static_cast<std::time_t>(v.get<double>() / 1000),
                                 "%Y-%m-%d %H:%M:%S");
}

// --- clusters ------------------------------------------------------------------------

void add_remote_flags(Flags* cmd, RemoteOptions& o, bool allow_auto) {
  cmd->add_option(
         "--cluster", o.cluster,
         allow_auto
             ? "Registered cluster to use, or 'auto' to pick one (default: the current cluster)"
             : "Registered cluster to use (default: the current cluster)")
      ->type_name("NAME");
  cmd->add_option("--request-timeout", o.timeout, "Seconds to wait for each request")
      ->capture_default_str();
}

std::unique_ptr<pai::cluster::Registry> load_registry() {
  pai::diag::List diags;
  auto reg = std::make_unique<pai::cluster::Registry>(
      pai::cluster::Registry::load(pai::cluster::Registry::default_paths(), diags));
  if (!diags.empty()) {
    pai::diag::TextOptions topt;
    topt.color = use_color(false, 2);
    topt.show_summary = false;
    std::string text = pai::diag::write_text(diags.items(), 1, topt);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  if (diags.has_errors()) {
    print_error("the cluster registry cannot be read; fix or move the file above");
    return nullptr;
  }
  return reg;
}

std::optional<Connection> connect_named(const pai::cluster::Registry& reg, const std::string& name,
                                        const RemoteOptions& o, const Globals& g) {
  const pai::cluster::Cluster* c = reg.find(name);
  if (!c) {
    std::vector<std::string> names;
    for (const auto& cl : reg.clusters()) names.push_back(cl.name);
    std::string guess = pai::util::did_you_mean(name, names);
    print_error("no cluster named \"" + name + "\" is registered" +
                (guess.empty() ? std::string() : " (did you mean \"" + guess + "\"?)"));
    std::fprintf(stderr, "%s\n",
                 names.empty() ? "Register one with 'paictl cluster add NAME --uri URL ...'."
                               : ("Registered: " + pai::util::join(names, ", ")).c_str());
    return std::nullopt;
  }
  if (std::string tls = pai::cluster::tls_problem(*c); !tls.empty()) {
    print_error("cluster " + c->name + ": " + tls);
    return std::nullopt;
  }
  auto token = pai::cluster::read_token(*c);
  if (!token.ok()) {
    print_error("cluster " + c->name + ": " + token.error().message);
    return std::nullopt;
  }
  pai::http::Options hopt;
  hopt.timeout_s = o.timeout;
  hopt.connect_timeout_s = std::min(10.0, o.timeout);
  hopt.tls.ca_file = c->ca_file;
  hopt.tls.insecure = c->insecure;
  if (g.verbose) {
    std::string prefix = c->name;
    hopt.log = [prefix](const std::string& line) {
      std::fprintf(stderr, "paictl: %s: %s\n", prefix.c_str(), line.c_str());
    };
  }
  Connection conn;
  conn.cluster = std::make_shared<pai::cluster::Cluster>(*c);
  conn.http = std::make_shared<pai::http::CurlClient>(hopt);
  conn.api = std::make_shared<pai::api::Client>(
      *conn.http, c->rest_server.empty() ? c->uri : c->rest_server, *token);
  return conn;
}

std::optional<Connection> connect(const pai::cluster::Registry& reg, const RemoteOptions& o,
                                  const Globals& g) {
  std::string name = o.cluster;
  if (name.empty()) name = reg.current();
  if (name.empty()) {
    if (reg.clusters().empty())
      print_error(
          "no cluster is registered; add one with 'paictl cluster add NAME --uri URL --user USER "
          "--password-stdin'");
    else
      print_error("no current cluster: pass --cluster NAME or run 'paictl cluster use NAME'");
    return std::nullopt;
  }
  return connect_named(reg, name, o, g);
}

int report_api_error(const std::string& cluster, const std::string& doing,
                     const pai::api::Error& e) {
  print_error(cluster + ": " + doing + ": " + e.summary());
  for (const auto& d : e.details) std::fprintf(stderr, "  - %s\n", pai::util::printable(d).c_str());
  if (!e.hint.empty()) std::fprintf(stderr, "  hint: %s\n", pai::util::printable(e.hint).c_str());
  if (e.kind == pai::api::Error::Kind::Http &&
      (e.status == 400 || e.status == 409 || e.status == 404 || e.status == 403 || e.status == 413))
    return kExitUsage;
  return kExitRemote;
}

std::optional<std::pair<std::string, std::string>> parse_job_id(const std::string& id,
                                                                const Connection& c) {
  size_t t = id.find('~');
  std::string user = t == std::string::npos ? c.cluster->user : id.substr(0, t);
  std::string name = t == std::string::npos ? id : id.substr(t + 1);
  if (user.empty() || name.empty()) {
    print_error("a job is named USER~NAME (or NAME for your own jobs), got \"" + id + "\"");
    return std::nullopt;
  }
  return std::make_pair(user, name);
}

std::optional<JobTarget> open_job(const std::string& job, const RemoteOptions& o,
                                  const Globals& g) {
  auto reg = load_registry();
  if (!reg) return std::nullopt;
  auto conn = connect(*reg, o, g);
  if (!conn) return std::nullopt;
  auto parsed = parse_job_id(job, *conn);
  if (!parsed) return std::nullopt;
  return JobTarget{*conn, parsed->first, parsed->second,
                   pai::api::job_id(parsed->first, parsed->second)};
}

// --- waiting --------------------------------------------------------------------------

void add_wait_flags(Flags* cmd, WaitOptions& o, const char* prefix) {
  std::string p = prefix;
  cmd->add_option("--" + p + "interval", o.interval, "Seconds between two looks at the job")
      ->check(Range(0.05, 3600.0))
      ->capture_default_str();
  cmd->add_option("--" + p + "timeout", o.timeout,
                  "Give up after this many seconds (exit 4); 0 waits forever")
      ->check(NonNegativeNumber)
      ->capture_default_str();
}

int wait_for_job(const Connection& c, const std::string& user, const std::string& name,
                 const WaitOptions& o, const Globals& g) {
  const std::string id = pai::api::job_id(user, name);
  auto start = std::chrono::steady_clock::now();
  std::string last;
  bool progress = (is_tty(2) || g.verbose) && !g.quiet;
  while (true) {
    auto r = c.api->get_job(user, name);
    if (!r.ok()) return report_api_error(c.cluster->name, "reading job " + id, r.error());
    const Json status = r->contains("jobStatus") ? Json((*r)["jobStatus"]) : Json::object();
    std::string state = pai::util::printable(status.value("state", std::string("UNKNOWN")));
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (state != last && progress)
      std::fprintf(stderr, "paictl: %s: %s%s (after %s)\n", id.c_str(),
                   last.empty() ? "" : (last + " -> ").c_str(), state.c_str(),
                   format_duration_ms(elapsed * 1000).c_str());
    last = state;
    if (state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED") {
      Json exit = status.contains("appExitCode") ? Json(status["appExitCode"]) : Json(nullptr);
      if (o.output == "table") {
        if (!g.quiet) {
          std::string line = id + " " + state;
          if (exit.is_number()) line += " (exit code " + exit.dump() + ")";
          std::printf("%s\n", line.c_str());
        }
      } else {
        print_document(document("jobState", Json{{"cluster", c.cluster->name},
                                                 {"job", id},
                                                 {"state", state},
                                                 {"exitCode", exit}}),
                       o.output);
      }
      return state == "SUCCEEDED" ? kExitOk : kExitFindings;
    }
    if (o.timeout > 0 && elapsed + o.interval > o.timeout) {
      print_error(id + " is still " + state + " after " + format_duration_ms(o.timeout * 1000) +
                  " (--timeout)");
      return kExitWaitTimeout;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
  }
}

// --- follow and watch loops ---------------------------------------------------------

namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}
}  // namespace

void catch_interrupt() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

bool interrupted() {
  return g_interrupted.load();
}

bool pause_for(double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!interrupted()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= end) return true;
    std::chrono::steady_clock::duration left =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(end - now);
    std::chrono::steady_clock::duration step =
        std::min(left, std::chrono::steady_clock::duration(std::chrono::milliseconds(50)));
    std::this_thread::sleep_for(step);
  }
  return false;
}

std::optional<double> parse_duration_ms(const std::string& s) {
  std::string t(pai::util::trim(s));
  if (t.empty()) return std::nullopt;
  double unit = 1000;
  char last = t.back();
  if (last == 's' || last == 'm' || last == 'h' || last == 'd' || last == 'w') {
    unit = last == 's'   ? 1000
           : last == 'm' ? 60e3
           : last == 'h' ? 3600e3
           : last == 'd' ? 86400e3
                         : 7 * 86400e3;
    t.pop_back();
  }
  if (t.empty() || t.size() > 12) return std::nullopt;
  double v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v * unit;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool is_final_state(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "STOPPED";
}

}  // namespace paictl::jobcli

// What the `paictl hived` commands share: their HiveD flags, reaching HiveD
// (--hived or the cluster's pylon), reading the live state, -v's timing, and
// loading a checked HiveD config.

#include <chrono>
#include <cstdio>
#include <ctime>

#include "app.h"
#include "cluster/connection.h"
#include "cluster/registry.h"
#include "command.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "hived/cmd_hived_common.h"
#include "hived/config_file.h"
#include "hived/inspect.h"
#include "hived/live.h"
#include "http/client.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/fs.h"

namespace paictl::hivedcli {

void add_hived_flags(Flags* cmd, HivedOptions& o, Globals& g, bool wide, const char* names) {
  cmd->add_option("--hived", o.hived,
                  "HiveD's web server (default: the cluster's, from cluster add --hived, else "
                  "behind its pylon, /a/<host>:30096)")
      ->type_name("URL");
  cmd->add_option("--ca-file", o.ca_file,
                  "PEM file with the CA of --hived's certificate (default: the cluster's, with "
                  "--cluster, else the system's)")
      ->type_name("FILE");
  cmd->add_flag("--insecure", o.insecure,
                "Do not verify --hived's TLS certificate (not recommended)");
  jobcli::add_remote_flags(cmd, o.remote);
  add_output_option(*cmd, o.output, g, wide, {names});
}

void validate_hived_flags(const HivedOptions& o, Usage& u) {
  if (!o.hived.empty())
    u.error_if(o.hived.rfind("http://", 0) != 0 && o.hived.rfind("https://", 0) != 0,
               "--hived " + o.hived + " is not an http:// or https:// URL",
               "HiveD's web server listens on :30096, e.g. --hived http://10.0.0.1:30096");
  u.error_if(o.hived.empty() && (!o.ca_file.empty() || o.insecure),
             "--ca-file and --insecure are for --hived URL",
             "HiveD behind a registered cluster uses the cluster's TLS settings (cluster add "
             "--ca-file)");
  if (!o.ca_file.empty())
    u.error_if(!pai::util::is_regular_file(o.ca_file),
               "cannot read the CA file " + o.ca_file + ": no such file");
}

// --hived URL (with the TLS settings and token of --cluster when given and on
// the same host), else HiveD behind the registered cluster's pylon.
std::optional<HivedConnection> connect_hived(const HivedOptions& o, const Globals& g) {
  std::optional<jobcli::Connection> conn;
  std::string token;
  if (o.hived.empty() || !o.remote.cluster.empty()) {
    auto reg = jobcli::load_registry();
    if (!reg) return std::nullopt;
    conn = jobcli::connect(*reg, o.remote, g);
    if (!conn) return std::nullopt;
    token = pai::cluster::read_token(*conn->cluster).value_or(std::string());
  }
  pai::http::Options hopt;
  hopt.timeout_s = o.remote.timeout;
  hopt.connect_timeout_s = std::min(10.0, o.remote.timeout);
  if (conn) {
    hopt.tls.ca_file = conn->cluster->ca_file;
    hopt.tls.insecure = conn->cluster->insecure;
  }
  if (!o.ca_file.empty()) hopt.tls.ca_file = o.ca_file;
  if (o.insecure) hopt.tls.insecure = true;
  if (g.verbose)
    hopt.log = [](const std::string& line) {
      std::fprintf(stderr, "paictl: hived: %s\n", line.c_str());
    };
  HivedConnection h;
  h.http = std::make_shared<pai::http::CurlClient>(hopt);
  std::string base = !o.hived.empty() ? o.hived
                     : !conn->cluster->hived.empty()
                         ? conn->cluster->hived
                         : pai::hived::base_behind_pylon(conn->cluster->uri);
  std::string token_host = conn ? pai::http::host_of(conn->cluster->uri) : "";
  h.client = std::make_shared<pai::hived::Client>(*h.http, base, token, token_host);
  h.where = conn ? conn->cluster->name : pai::http::redact_url(base);
  h.rest = std::move(conn);
  return h;
}

int report(const HivedConnection& h, const std::string& doing, const pai::hived::Error& e) {
  print_error("HiveD at " + h.where + ": " + doing + ": " + e.summary());
  if (e.kind == pai::hived::Error::Kind::Transport)
    std::fprintf(stderr, "  hint: check --hived URL (HiveD listens on :30096) or --cluster\n");
  return kExitRemote;
}

// Both reads at once: the cluster status and the affinity groups; then both
// answers parsed at once. The time the answers arrived is kept for -v.

// Both reads at once: the cluster status and the affinity groups; then both
// answers parsed at once. The time the answers arrived is kept for -v.
std::optional<pai::hived::LiveState> read_live(const HivedConnection& h, int& rc) {
  auto t0 = std::chrono::steady_clock::now();
  auto live = pai::hived::read_live(*h.client, [&](size_t bytes) { answers_arrived(t0, bytes); });
  if (!live) {
    rc = report(h, live.error().doing, live.error());
    return std::nullopt;
  }
  for (const auto& w : live->warnings) print_warning(w);
  return std::move(live).value();
}

namespace {
std::chrono::steady_clock::time_point g_arrived{};
double g_arrived_cpu_ms = 0;

// The CPU time of the process (every thread), which other load on a shared
// machine disturbs less than the wall clock.
double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}
}  // namespace

void answers_arrived(std::chrono::steady_clock::time_point sent, size_t bytes) {
  g_arrived = std::chrono::steady_clock::now();
  g_arrived_cpu_ms = process_cpu_ms();
  g_http_ms = std::chrono::duration<double, std::milli>(g_arrived - sent).count();
  g_bytes = bytes;
}

void print_timing(const Globals& g) {
  if (!g.verbose || g_arrived == std::chrono::steady_clock::time_point{}) return;
  double after =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_arrived)
          .count();
  std::fprintf(stderr,
               "paictl: hived: answers (%zu bytes) in %.1f ms; %.1f ms after they arrived (%.1f "
               "ms of CPU)\n",
               g_bytes, g_http_ms, after, process_cpu_ms() - g_arrived_cpu_ms);
}

void print_config_errors(const pai::hived::ConfigLoadError& e, const Globals& g) {
  if (e.kind == pai::hived::ConfigLoadError::Kind::NoHivedConfig) {
    print_error("no HiveD config in " + e.path);
    return;
  }
  pai::diag::TextOptions topt;
  topt.color = use_color(g.no_color, 2);
  std::string text = pai::diag::write_text(e.errors, e.files, topt);
  std::fwrite(text.data(), 1, text.size(), stderr);
  print_error("the HiveD config " + e.path + " has errors (paictl check config " + e.path + ")");
}

std::shared_ptr<pai::config::HivedModel> load_model(const std::string& path, const Globals& g) {
  auto model = pai::hived::load_hived_model(path);
  if (model) return std::move(model).value();
  print_config_errors(model.error(), g);
  return nullptr;
}

}  // namespace paictl::hivedcli

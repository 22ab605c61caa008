#pragma once
// The host inventory: which hosts a command works on, their roles and SKUs, and
// how to reach them over SSH. From a cluster directory (layout.yaml +
// config.yaml, validated first) or from --hosts/--hosts-file, with
// ~/.ssh/config and the command line applied. `check hosts` and `facts
// collect` use it, and so will `install`.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/layout.h"
#include "diag/diagnostic.h"
#include "remote/secret.h"
#include "remote/target.h"

namespace pai::inventory {

// One host: what the cluster files (or --hosts) say it should be.
struct HostPlan {
  std::string name;     // layout hostname, or the host as given with --hosts
  std::string address;  // where to connect (hostip, or the --hosts host)
  std::string hostip;   // layout.yaml hostip; "" with --hosts
  bool master = false;
  bool worker = true;
  bool from_layout = false;
  std::optional<config::MachineSku> sku;
  remote::Target target;
};

struct InventoryOptions {
  std::vector<std::string> paths;  // cluster directories or files
  std::vector<std::string> hosts;  // --hosts entries: [user@]host[:port]
  std::string hosts_file;          // --hosts-file: one entry per line, '#' comments ("-": stdin)
  std::string hosts_file_content;  // what the caller read for "-"
  std::vector<std::string> limit;  // --limit: only these hosts (names or addresses)
  std::string user;                // --user
  std::vector<std::string> identities;  // --identity
  std::string ssh_config;   // --ssh-config FILE|none; "" = ~/.ssh/config + /etc/ssh/ssh_config
  std::string known_hosts;  // --known-hosts
  remote::HostKeyPolicy host_key_policy = remote::HostKeyPolicy::Strict;
  std::optional<int> connect_timeout_ms;
  std::optional<int> keepalive_s;
  bool use_agent = true;
  // Codes of the cluster files' errors that do not stop the inventory (shown as
  // warnings): node remove of a master accepts L007, the control plane of two
  // masters it leaves until a third replaces the lost one.
  std::vector<std::string> accept_codes;
};

struct Inventory {
  std::vector<HostPlan> hosts;
  diag::List diagnostics;    // what stops the run (errors) and what the user should know (warnings)
  bool input_error = false;  // exit 2: the cluster files or the host list are invalid
  bool cluster_files_invalid = false;  // the cluster files themselves have errors
  std::vector<std::string> files;      // files read, for reports
  std::string layout_file;
  std::map<std::string, uint32_t> layout_lines;  // host name -> its line in layout.yaml
  // From config.yaml (or defaults when there is none).
  bool has_cluster_config = false;
  std::string config_file;
  remote::Secret config_password;
  std::vector<std::string> registries;
  std::string docker_data_root = "/mnt/docker";
};

// Findings about the host list have codes I001-I005 (docs/check-hosts.md):
// I001 a bad host entry, I002 no hosts or two host sources, I003 no usable
// layout.yaml, I004 a --limit name that is not in layout.yaml, I005 a host
// listed twice. The cluster files' own findings keep their check config codes.
Inventory build_inventory(const InventoryOptions& opts);

// Parses a --hosts-file text; errors name the file and line.
std::vector<std::string> parse_hosts_file(const std::string& text, const std::string& file,
                                          diag::List& diags);

// Registries the DNS check resolves when the cluster names none: what the
// installer pulls from by default.
const std::vector<std::string>& default_registries();

}  // namespace pai::inventory

#pragma once
// paictl init's options and its validate step (cmd_init.cc), shared with its unit tests.

#include <string>
#include <vector>

#include "command.h"

namespace paictl {

struct InitCliOptions {
  std::string cluster_dir;
  std::vector<std::string> facts;
  std::vector<std::string> hosts;
  std::string hosts_file;
  std::string master;
  std::vector<std::string> vcs;
  std::vector<std::string> profiles;
  std::vector<int> counts;
  std::string ssh_user;
  std::string ssh_key;
  std::string ssh_config;
  std::string known_hosts;
  std::vector<std::string> ignore;
  std::string hived_url;
  std::string docker_image_tag = "v1.8.0";
  std::string layouts;
  int reserve_cpu = -1;        // per host; -1: the planner's default
  std::string reserve_memory;  // per host, a quantity; "": the planner's default
  std::string host_key_policy = "strict";
  double connect_timeout_s = 10;
  double command_timeout_s = 120;
  bool dry_run = false;
  bool force = false;
};

// Every usage error of `o`, without reaching a host or writing a file: no cluster
// directory, nothing to plan from, --profile and --count not paired, a file flag
// that names no file, unknown check names, a hived URL that is not http(s), an
// existing non-empty directory without --force, a bad --reserve-memory.
void validate_init(const InitCliOptions& o, Usage& u);

}  // namespace paictl

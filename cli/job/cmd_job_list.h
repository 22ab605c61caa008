#pragma once
// paictl job list: its options and validate step (cmd_job_list.cc), shared with
// its unit tests.

#include <string>
#include <vector>

#include "cluster/connection.h"
#include "command.h"

namespace paictl {

struct JobListOptions {
  jobcli::RemoteOptions remote;
  bool all_clusters = false;
  std::string state;
  std::string user;
  bool all_users = false;
  std::string vc;
  std::string keyword;
  std::vector<std::string> tags;
  std::vector<std::string> no_tags;
  std::string since;
  std::string order;
  int offset = 0;
  bool all_pages = false;
  bool starred = false;
  int limit = 100;
  std::string output = "table";
  bool watch = false;
  double interval = 5;
  // Set by run(): the server's order ("submissionTime,DESC") and the oldest
  // submission time --since lets through (epoch ms; -1 without --since).
  std::string server_order;
  double since_ms = -1;
};

// Every usage error before the registry is read or a cluster asked: each unknown
// --state, --cluster with --all-clusters, each bad --tag and --no-tag, --since,
// --order (with the closest field), --watch with -o json|yaml.
void validate_job_list(const JobListOptions& o, Usage& u);

}  // namespace paictl

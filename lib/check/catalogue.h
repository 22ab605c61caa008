#pragma once
// The pre-install check catalogue: every check's stable name, default severity,
// scope and purpose, and the result type. docs/check-hosts.md has a line per check.

#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.h"

namespace pai::check {

// Install: a finding `paictl install` sets right itself on this host (it is
// neither a failure nor a warning of the host; see ByInstall and judge()).
enum class Status { Pass, Warn, Fail, Skip, Install };
std::string_view to_string(Status s);

// What `paictl install` does about a check's finding: the one table both
// `check hosts` and install's checks phase judge by (check/verdict.h).
enum class ByInstall {
  Cannot,  // install cannot fix it: the operator must (hardware, drivers, disks, names, ...)
  SetsUp,  // install sets it up itself (swap off, the container runtime, modules, sysctls, ...)
  Keeps,   // what this cluster's own install left on a host it installed (its files, its
           // processes, its ports): install keeps it; on any other host an error
};
std::string_view to_string(ByInstall b);

struct CheckInfo {
  std::string_view name;    // stable, greppable, used by --ignore-check-errors and as SARIF rule id
  diag::Severity severity;  // Error: a violation fails; Warning: it warns
  std::string_view scope;   // "host", or "cluster" (compares hosts)
  std::string_view summary;  // one line
  std::string_view origin;   // "openpai", "kubeadm", "non-clean", "paictl"
  ByInstall install = ByInstall::Cannot;
  // SetsUp, Keeps: what install does about it, a phrase whose subject is
  // install ("turns swap off ..."); empty for Cannot.
  std::string_view install_does;
};

// In the order results are reported. Port checks are one family, "Port-<N>".
const std::vector<CheckInfo>& catalogue();
// Case-insensitive; "Port-6443" finds the Port-<N> family.
const CheckInfo* find_check(std::string_view name);

// The ports each role needs free: kubeadm's control-plane ports and OpenPAI's
// services on the master; the kubelet port everywhere.
const std::vector<int>& master_ports();
const std::vector<int>& worker_ports();
std::string_view port_purpose(int port);

struct CheckResult {
  std::string host;
  std::string check;
  Status status = Status::Pass;
  std::string message;
  std::string hint;
  bool demoted = false;  // an error turned into a warning by --ignore-check-errors
};

}  // namespace pai::check

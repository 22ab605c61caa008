#pragma once
// The one remote command of `check hosts` and `facts collect`: a POSIX sh
// script that gathers every fact in one SSH round trip, and the parser of its
// output. The script changes nothing on the host and needs no Python.
//
// Wire format (stdout), one section per step:
//   @@paictl-facts 1
//   @@begin NAME
//   <raw output of the step>
//   @@end NAME STATUS
// A step that did not end tells where the script was when it was cut off.

#include <string>
#include <vector>

#include "facts/host_facts.h"

namespace pai::facts {

struct ScriptOptions {
  std::string docker_data_root = "/mnt/docker";
  std::vector<std::string> dns_names;  // registries to resolve (host names only)
};

// The script, sent on stdin after the first line.
std::string fact_script(const ScriptOptions& opts);

// The command line run by the login shell. It reads one line from stdin (the
// sudo password, or an empty line), then runs the rest of stdin as the script:
// as root when it logged in as root, else under `sudo -n` when that works,
// else under `sudo` with the password when one was given, else as the user.
// The password never appears in a process argument.
std::string bootstrap_command();

// A DNS name the script may pass to getent: letters, digits, '.', '-', '_'.
bool is_safe_dns_name(const std::string& name);

// One section of the script's output.
struct Section {
  std::string name;
  std::string body;
  int status = -1;  // -1: the section did not end
  bool ended = false;
};

struct ParsedOutput {
  bool header = false;  // "@@paictl-facts 1" seen
  std::vector<Section> sections;
  std::vector<std::pair<std::string, std::string>> markers;  // @@privilege root, @@ssh ..., @@done
  bool done = false;
};

ParsedOutput split_sections(const std::string& out);

// What a step runs, for messages: "nvidia" -> "nvidia-smi --query-gpu".
std::string step_description(const std::string& section);

// Fills `facts` from the script's output. `first_byte_epoch` is this machine's
// clock when the first output byte arrived (0 = unknown), for the clock skew.
// Never throws; what cannot be parsed is noted in facts.notes.
void parse_fact_output(const std::string& out, double first_byte_epoch, HostFacts& facts);

}  // namespace pai::facts

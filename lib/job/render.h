#pragma once
// Renders a job's commands as the OpenPAI rest-server does at submission
// (middlewares/v2/protocol.js protocolRender), so a user sees the exact script
// each task role runs:
//
//   commands = default deployment's preCommands + commands + postCommands
//   script   = trim each line, join with "\n", substitute <% %>, trim
//
// Variables are $parameters (with --param overrides), and this task role's
// $script, $output and $data prerequisites. `$secrets` is never substituted in
// commands (the server leaves that to the runtime inside the container), so
// secret values never appear in the output. Registry credentials in dockerimage
// prerequisites are shown masked.

#include <optional>
#include <string>
#include <vector>

#include "job/job_file.h"
#include "job/template.h"

namespace pai::job {

// The value a --param override stands for: quoted ('x' or "x") is a string,
// anything else is read as a plain YAML scalar (so 10 is a number, as in a file).
JsScalar override_value(const ParamOverride& p);

// Looks up template variables for one task role (or for registry auth when
// `task_role` is nullptr and `with_secrets` is set).
class Scope {
 public:
  Scope(const JobFile& f, const Overrides& o, const yaml::Node* task_role,
        bool with_secrets = false);

  struct Resolution {
    bool found = false;
    std::string text;                         // the substituted text when found
    const yaml::Node* node = nullptr;         // the value's node when it comes from the file
    const ParamOverride* override = nullptr;  // or from --param
    bool secret = false;                      // the name starts with $secrets
    std::string root;                         // "$parameters", "$script", ...
  };
  // `name` after the [N] -> .N rewrite.
  Resolution resolve(const std::string& name) const;

 private:
  const JobFile& f_;
  const Overrides& o_;
  const yaml::Node* params_ = nullptr;
  const yaml::Node* script_ = nullptr;
  const yaml::Node* output_ = nullptr;
  const yaml::Node* data_ = nullptr;
  const yaml::Node* secrets_ = nullptr;
  bool with_secrets_ = false;
};

// The prerequisite of `type` named `name`, or nullptr.
const yaml::Node* find_prerequisite(const JobFile& f, std::string_view type, std::string_view name);

// `export NAME=value` lines for every parameter that can be exported, in file
// order (overrides replace values and add names at the end). Names that are not
// shell identifiers and values that are lists, mappings or null are skipped and
// listed in `skipped` with the reason.
std::vector<std::string> export_lines(
    const JobFile& f, const Overrides& o,
    std::vector<std::pair<std::string, std::string>>* skipped = nullptr);

struct RenderedAuth {
  std::string prerequisite;
  std::string username;       // "******" when it comes from a secret
  bool has_password = false;  // shown only as "******"
  std::string registry_uri;
};

struct RenderedTaskRole {
  std::string name;
  int64_t instances = 1;
  int64_t cpu = 0, gpu = 0, memory_mb = 0;
  std::string docker_image;      // the prerequisite's name
  std::string docker_image_uri;  // its uri
  std::optional<RenderedAuth> auth;
  std::vector<std::string>
      commands;        // the lines before substitution (pre + commands + post, trimmed)
  std::string script;  // the server's USER_CMD
  std::vector<std::string> unresolved;  // variables left as <% %>
  std::vector<std::string> secrets;     // $secrets references left for the runtime
  std::optional<std::string> error;     // template syntax error: the server would refuse the job
};

struct RenderResult {
  std::string name;
  std::string virtual_cluster;
  std::optional<std::string> deployment;
  std::vector<RenderedTaskRole> task_roles;
};

// Renders a job that validate() accepted (it tolerates invalid ones).
RenderResult render(const JobFile& f, const Overrides& o = {});

// JavaScript string length (UTF-16 code units) of UTF-8 text.
size_t utf16_length(std::string_view s);

}  // namespace pai::job

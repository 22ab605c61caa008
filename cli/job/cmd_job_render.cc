// paictl job render FILE [--param k=v]... [--export-params]

#include <cstdio>

#include "app.h"
#include "command.h"
#include "diag/report.h"
#include "exit_codes.h"
#include "flags.h"
#include "job/follow.h"
#include "job/job_usage.h"
#include "job/render.h"
#include "job/validate.h"
#include "output/diag_output.h"
#include "output/output.h"
#include "output/printer.h"
#include "util/strings.h"

namespace paictl {

namespace {

struct RenderOptions {
  std::string file;
  std::vector<std::string> params;
  std::string name;
  std::string vc;
  bool export_params = false;
  std::string output = "text";
  std::string task_role;
};

// Prints the findings of a job file to stderr; true when it has errors.
bool print_findings(const pai::job::JobFile& f, const pai::job::Overrides& ov, const Globals& g) {
  pai::diag::List diags;
  pai::job::ValidateOptions vo;
  vo.overrides = ov;
  pai::job::validate(f, diags, vo);
  diags.sort({f.path});
  print_findings_stderr(diags, g);
  return diags.has_errors();
}

int run(const RenderOptions& o, const Globals& g) {
  auto ov = jobcli::make_overrides(o.params, o.name, o.vc);
  if (!ov) return kExitUsage;
  ov->export_params = o.export_params;
  pai::job::JobFile f = pai::job::JobFile::load(o.file);
  if (!f.read_error.empty()) {
    print_error("cannot read " + o.file + ": " + f.read_error);
    return kExitUsage;
  }
  if (print_findings(f, *ov, g)) {
    print_error(o.file + " has errors; the server would refuse it (see above)");
    return kExitUsage;
  }
  std::vector<std::pair<std::string, std::string>> skipped;
  if (o.export_params) pai::job::export_lines(f, *ov, &skipped);
  for (const auto& [name, why] : skipped)
    if (!g.quiet)
      print_warning("--export-params: parameter \"" + name + "\" is not exported: " + why);

  pai::job::RenderResult r = pai::job::render(f, *ov);
  bool found = o.task_role.empty();
  for (const auto& tr : r.task_roles) found |= tr.name == o.task_role;
  if (!found) {
    std::vector<std::string> names;
    for (const auto& tr : r.task_roles) names.push_back(tr.name);
    print_error("no task role \"" + o.task_role +
                "\" (task roles: " + pai::util::join(names, ", ") + ")");
    return kExitUsage;
  }

  if (o.output == "json" || o.output == "yaml") {
    jobcli::Json j = jobcli::Json::object();
    j["name"] = r.name;
    j["virtualCluster"] = r.virtual_cluster;
    j["deployment"] = r.deployment ? jobcli::Json(*r.deployment) : jobcli::Json(nullptr);
    jobcli::Json roles = jobcli::Json::array();
    for (const auto& tr : r.task_roles) {
      if (!o.task_role.empty() && tr.name != o.task_role) continue;
      jobcli::Json t = jobcli::Json::object();
      t["name"] = tr.name;
      t["instances"] = tr.instances;
      t["resourcePerInstance"] = {{"cpu", tr.cpu}, {"memoryMB", tr.memory_mb}, {"gpu", tr.gpu}};
      jobcli::Json img = {{"prerequisite", tr.docker_image}, {"uri", tr.docker_image_uri}};
      if (tr.auth) {
        img["auth"] = {{"username", tr.auth->username},
                       {"password", tr.auth->has_password ? "******" : ""},
                       {"registryuri", tr.auth->registry_uri}};
      }
      t["dockerImage"] = img;
      t["commands"] = tr.commands;
      t["script"] = tr.script;
      t["unresolved"] = tr.unresolved;
      t["secretsLeftForRuntime"] = tr.secrets;
      roles.push_back(t);
    }
    j["taskRoles"] = roles;
    print_document(document("jobRender", j), o.output);
    return kExitOk;
  }

  std::string out;
  out += "# job " + r.name + " -> virtual cluster " + r.virtual_cluster;
  if (r.deployment) out += ", deployment " + *r.deployment;
  out += "\n";
  bool first = true;
  for (const auto& tr : r.task_roles) {
    if (!o.task_role.empty() && tr.name != o.task_role) continue;
    if (!first) out += "\n";
    first = false;
    out += "# task role " + tr.name + ": " + std::to_string(tr.instances) + " instance" +
           (tr.instances == 1 ? "" : "s") + " x (" + std::to_string(tr.cpu) + " CPU, " +
           std::to_string(tr.gpu) + " GPU, " + std::to_string(tr.memory_mb) + " MiB)\n";
    out += "# image " + (tr.docker_image_uri.empty() ? tr.docker_image : tr.docker_image_uri);
    if (tr.auth)
      out += " (registry " + tr.auth->registry_uri + ", user " + tr.auth->username +
             (tr.auth->has_password ? ", password ******" : "") + ")";
    out += "\n";
    if (!tr.secrets.empty())
      out +=
          "# secrets left for the runtime to fill in: " + pai::util::join(tr.secrets, ", ") + "\n";
    out += tr.script + "\n";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

void add_job_render(Flags& parent, Globals& g) {
  auto o = std::make_shared<RenderOptions>();
  Flags* cmd = &parent;
  cmd->add_option("FILE", o->file, "Job protocol v2 file ('-' reads stdin)")->required();
  cmd->add_option("--param", o->params,
                  "Override parameter NAME (repeatable; quote to force a string)")
      ->type_name("NAME=VALUE");
  cmd->add_option("--name", o->name, "Render as if the job were named NAME");
  cmd->add_option("--vc", o->vc, "Render as if defaults.virtualCluster were VC");
  cmd->add_flag("--export-params", o->export_params,
                "Start each task role's commands with 'export NAME=value' for every parameter");
  cmd->add_option("--task-role", o->task_role, "Show only this task role");
  add_output_option(*cmd, o->output, g);
  cmd->footer(
      "Works offline. The script of a task role is the default deployment's preCommands, the "
      "commands and the\n"
      "postCommands, each line trimmed, joined and rendered: <% $parameters.x %>, <% $script.name "
      "%>,\n"
      "<% $data.uri[0] %> ... Secrets are never rendered (the runtime does that in the container) "
      "and\n"
      "registry passwords are shown as ******.\n\n"
      "EXIT STATUS:\n"
      "  0 rendered, 2 bad usage, unreadable file or a job the server would refuse\n\n");
  define_command(*cmd, g, o, {.run = [](const auto& o, Globals& g) { return run(o, g); }});
}

}  // namespace

void build_job_render(Flags& cmd, Globals& g) {
  add_job_render(cmd, g);
}

}  // namespace paictl

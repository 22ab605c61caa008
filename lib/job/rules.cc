#include "job/rules.h"

namespace pai::job {

using diag::Severity;

const std::vector<diag::Rule>& rules() {
  static const std::vector<diag::Rule> kRules = {
      // The file as the server's YAML loader (js-yaml safeLoad) sees it
      {"J001", "yaml-syntax", Severity::Error, "The file is not valid YAML"},
      {"J002", "duplicate-key", Severity::Error,
       "A mapping defines the same key twice; the server refuses the file"},
      {"J003", "multiple-documents", Severity::Error,
       "The file holds several YAML documents; the server loads exactly one"},
      {"J004", "empty-file", Severity::Error, "The file is empty"},
      {"J005", "unreadable-file", Severity::Error, "The file cannot be read"},
      {"J006", "unsupported-tag", Severity::Error,
       "A YAML tag that the server's loader does not know"},
      {"J007", "body-too-large", Severity::Error,
       "The file is larger than the 100 KiB the server accepts in a request"},
      {"J008", "yaml11-reading", Severity::Warning,
       "A plain value that js-yaml reads unlike YAML 1.2: 0755, 1:30, 1_000, 2024-01-01"},
      {"J009", "cluster-file", Severity::Error,
       "The file is a cluster file (layout.yaml, services-configuration.yaml, a HiveD config), "
       "not a job"},
      // The rest-server's schema (AJV, every error reported)
      {"J010", "missing-key", Severity::Error, "A required key is missing"},
      {"J011", "wrong-type", Severity::Error,
       "A value has the wrong type as the server's loader reads it"},
      {"J012", "unknown-key", Severity::Error,
       "A key the schema does not allow (additionalProperties: false)"},
      {"J013", "invalid-protocol-version", Severity::Error, "protocolVersion is not 2"},
      {"J014", "invalid-name", Severity::Error,
       "A job, prerequisite or deployment name does not match ^[a-zA-Z0-9_-]+$ (at most 255)"},
      {"J015", "invalid-job-type", Severity::Error, "type is not \"job\""},
      {"J016", "invalid-task-role-name", Severity::Error,
       "A task role name does not match ^[a-zA-Z_][a-zA-Z0-9_]*$"},
      {"J017", "empty-collection", Severity::Error,
       "A list or mapping that must have at least one entry is empty"},
      {"J018", "value-out-of-range", Severity::Error,
       "A number is outside its range (instances >= 1, jobRetryCount >= 0, integers within "
       "32 bits)"},
      {"J019", "invalid-port-label", Severity::Error,
       "A port label does not match ^[a-zA-Z_][a-zA-Z0-9_]*$"},
      {"J020", "invalid-prerequisite", Severity::Error,
       "A prerequisite matches none of the script/output, data and dockerimage shapes"},
      {"J021", "memory-instead-of-memoryMB", Severity::Error,
       "resourcePerInstance uses memory; the server requires memoryMB (MiB, an integer)"},
      // The rest-server's semantic checks
      {"J030", "duplicate-prerequisite", Severity::Error,
       "Two prerequisites of the same type have the same name"},
      {"J031", "duplicate-deployment", Severity::Error, "Two deployments have the same name"},
      {"J032", "unknown-prerequisite", Severity::Error,
       "A task role lists a prerequisite that is not defined"},
      {"J033", "prerequisite-kind-mismatch", Severity::Error,
       "dockerImage, data, output or script names no prerequisite of that type"},
      {"J034", "unknown-default-deployment", Severity::Error,
       "defaults.deployment names no deployment"},
      // HiveD extras (rejected by clusters that run the HiveD scheduler, the default)
      {"J040", "invalid-priority-class", Severity::Error,
       "extras.hivedScheduler.jobPriorityClass is not prod, test or oppo"},
      {"J041", "sku-and-pinned-cell", Severity::Error,
       "A task role sets both skuType and pinnedCellId"},
      {"J042", "hived-unknown-task-role", Severity::Error,
       "extras.hivedScheduler.taskRoles names a task role the job does not have"},
      {"J043", "affinity-group-mismatch", Severity::Error,
       "Task roles of one affinity group ask for different skuType or pinnedCellId"},
      {"J044", "hived-key-ignored", Severity::Warning,
       "extras.hivedscheduler (lower case) is ignored; the server reads hivedScheduler"},
      {"J045", "sku-count-ignored", Severity::Warning,
       "skuNum/skuNumber is ignored; the server computes the SKU count from resourcePerInstance"},
      // Templates in commands
      {"J050", "unresolved-reference", Severity::Warning,
       "A <% %> reference that the server cannot resolve is left in the command as is"},
      {"J051", "secret-in-commands", Severity::Warning,
       "A secret is referenced in commands, where the container's command line shows it"},
      {"J052", "template-syntax", Severity::Error,
       "A <% %> tag is not closed, or a section is unbalanced; the server fails to render"},
      {"J053", "template-tag-dropped", Severity::Warning,
       "A section, comment or other non-variable tag that the server removes"},
      {"J054", "value-changes-when-rendered", Severity::Warning,
       "A parameter the server reads as a number or date renders differently from the file"},
      // Known pitfalls
      {"J060", "task-retry-ignored", Severity::Warning,
       "taskRetryCount has an effect only with extras.gangAllocation: false"},
      {"J061", "deployment-unknown-task-role", Severity::Warning,
       "A deployment has commands for a task role the job does not have"},
      {"J062", "completion-unreachable", Severity::Warning,
       "minSucceededInstances or minFailedInstances is above instances"},
      {"J063", "ignored-container-option", Severity::Warning,
       "An extraContainerOptions key the server passes through but never uses"},
      {"J064", "plaintext-registry-password", Severity::Warning,
       "A registry password is written in the job file instead of <% $secrets.x %>"},
      {"J065", "default-virtual-cluster", Severity::Info,
       "defaults.virtualCluster is not set; the job goes to the VC named default"},
      {"J066", "invalid-storages", Severity::Error,
       "extras.storages is not a list of {name, mountPath}"},
      {"J067", "param-export-skipped", Severity::Warning,
       "A parameter cannot be exported as an environment variable"},
  };
  return kRules;
}

const diag::Rule* find_rule(std::string_view code) {
  for (const auto& r : rules())
    if (r.code == code) return &r;
  return nullptr;
}

}  // namespace pai::job

#include "config/rules.h"

namespace pai::config {

using diag::Severity;

const std::vector<diag::Rule>& rules() {
  static const std::vector<diag::Rule> kRules = {
      // Files and YAML
      {"F001", "yaml-syntax", Severity::Error, "The file is not valid YAML"},
      {"F002", "duplicate-key", Severity::Error, "A mapping defines the same key twice; loaders silently keep one"},
      {"F003", "empty-file", Severity::Error, "The file or document is empty"},
      {"F004", "multiple-documents", Severity::Error, "The file holds several YAML documents where one is read"},
      {"F005", "wrong-type", Severity::Error, "A value has the wrong type (a map where a list belongs, a string where a number belongs)"},
      {"F006", "unknown-key", Severity::Warning, "A key that the consumer of this file ignores"},
      {"F007", "missing-key", Severity::Error, "A required key is missing"},
      {"F008", "unreadable-file", Severity::Error, "A path cannot be read"},
      {"F009", "unrecognized-file", Severity::Error, "A file is none of the OpenPAI/HiveD files paictl knows"},
      {"F010", "no-cluster-files", Severity::Error, "A directory holds none of the OpenPAI/HiveD file names"},
      // layout.yaml
      {"L001", "invalid-hostname", Severity::Error, "hostname is not a lower-case RFC 1123 name"},
      {"L002", "invalid-hostip", Severity::Error, "hostip is not an IPv4 address"},
      {"L003", "duplicate-hostname", Severity::Error, "Two machines have the same hostname"},
      {"L004", "duplicate-hostip", Severity::Error, "Two machines have the same hostip"},
      {"L005", "unknown-machine-type", Severity::Error, "machine-type is not defined in machine-sku"},
      {"L006", "no-master", Severity::Error, "No machine has pai-master: \"true\""},
      {"L007", "multiple-masters", Severity::Error, "More than one machine has pai-master: \"true\""},
      {"L008", "no-worker", Severity::Error, "No machine has pai-worker: \"true\""},
      {"L009", "master-is-worker", Severity::Error, "The master is also a worker"},
      {"L010", "role-not-string", Severity::Error, "pai-master/pai-worker/pai-storage must be the strings \"true\" or \"false\""},
      {"L011", "invalid-quantity", Severity::Error, "mem is not a Kubernetes quantity such as 60Gi"},
      {"L012", "legacy-layout", Severity::Error, "The layout uses the OpenPAI 0.x schema, which the v1.5+ installer refuses"},
      {"L013", "unused-sku", Severity::Warning, "A machine-sku that no machine uses"},
      {"L014", "invalid-count", Severity::Error, "A count (vcore, computing-device count) is not positive"},
      {"L015", "unknown-device-type", Severity::Warning, "computing-device type is not a known device-plugin resource"},
      {"L016", "no-role", Severity::Warning, "A machine is neither master, worker nor storage"},
      // config.yaml
      {"C001", "ignored-key", Severity::Warning, "A documented key that OpenPAI's templates never read"},
      {"C002", "legacy-key", Severity::Warning, "A key of the pre-v1.5 installer that is no longer read"},
      {"C003", "invalid-value", Severity::Error, "A value outside the accepted set"},
      {"C004", "string-boolean", Severity::Warning, "A quoted \"true\"/\"false\" where the installer tests for a real boolean"},
      {"C005", "docker-cache-incomplete", Severity::Error, "enable_docker_cache is on but its backend settings are missing"},
      {"C006", "kubelet-flags-override", Severity::Warning, "kubelet_custom_flags replaces OpenPAI's default kubelet flags"},
      {"C007", "invalid-port-range", Severity::Error, "A port or port range is invalid or overlaps the job port range"},
      // services-configuration.yaml
      {"S001", "hived-config-not-string", Severity::Error, "hivedscheduler.config must be a YAML string (config: |)"},
      {"S002", "invalid-port", Severity::Error, "A service port is not in 1..65535"},
      {"S003", "schedule-port-range", Severity::Error, "rest-server schedule-port-start is not below schedule-port-end"},
      {"S004", "invalid-cluster-id", Severity::Error, "cluster-id is not a valid Kubernetes name"},
      // HiveD config
      {"H001", "unknown-cell-type", Severity::Error, "A cell type is not defined in cellTypes"},
      {"H002", "top-cell-below-node", Severity::Error, "A physicalCells entry is below node level"},
      {"H003", "pinned-cell-not-found", Severity::Error, "A VC pins a cell ID that no physical cell has"},
      {"H004", "leaf-address-not-integer", Severity::Error, "A leaf cell address is not an integer GPU index"},
      {"H005", "vc-infeasible", Severity::Error, "The virtual clusters need more cells than the chain has at some level"},
      {"H006", "vc-chain-not-found", Severity::Error, "A VC uses a chain that has no physical cells"},
      {"H007", "cell-type-cycle", Severity::Error, "cellTypes contain a cycle (HiveD recurses forever)"},
      {"H008", "child-type-typo", Severity::Error, "An undefined childCellType that looks like a typo of a defined type"},
      {"H009", "too-many-children", Severity::Error, "More cellChildren than childCellNumber"},
      {"H010", "too-few-children", Severity::Warning, "Fewer cellChildren than childCellNumber"},
      {"H011", "duplicate-address", Severity::Error, "Two physical cells have the same address"},
      {"H012", "duplicate-pinned-id", Severity::Error, "The same pinnedCellId is on two physical cells"},
      {"H013", "pinned-cell-shared", Severity::Error, "A pinned cell is used by two VCs, or twice"},
      {"H014", "vc-cell-type-path", Severity::Error, "A dotted VC cell type is not a path down its chain"},
      {"H015", "invalid-vc-name", Severity::Error, "A VC name is not a valid Kubernetes name"},
      {"H016", "invalid-cell-number", Severity::Error, "childCellNumber or cellNumber is not positive"},
      {"H017", "several-node-levels", Severity::Warning, "More than one cell type in a chain has isNodeLevel: true"},
      {"H018", "child-type-mismatch", Severity::Warning, "A child cell names a cellType other than its parent's childCellType"},
      {"H019", "node-address-defaulted", Severity::Warning, "A node-level cell has no cellAddress, so its node name is an index"},
      {"H020", "legacy-gpu-types", Severity::Warning, "gpuTypes is the old name of skuTypes"},
      {"H021", "undeclared-sku-type", Severity::Error, "A leaf cell type is missing from skuTypes"},
      {"H022", "invalid-sku-type", Severity::Error, "A skuTypes entry has a bad gpu, cpu or memory"},
      {"H023", "unused-cell-type", Severity::Warning, "A cell type that no physical cell uses"},
      {"H024", "vc-capacity-unassigned", Severity::Info, "Physical capacity that no VC is guaranteed"},
      {"H025", "no-virtual-clusters", Severity::Warning, "The config has no virtualClusters"},
      // Across files
      {"X001", "node-not-in-layout", Severity::Error, "A node-level cell address is not a layout.yaml hostname"},
      {"X002", "leaf-count-mismatch", Severity::Error, "A node's leaf cells differ from its machine SKU's device count"},
      {"X003", "sku-exceeds-machine", Severity::Error, "skuTypes cpu/memory per leaf times leaves exceeds the machine SKU"},
      {"X004", "worker-not-scheduled", Severity::Warning, "A pai-worker that no HiveD cell covers"},
      {"X005", "master-in-cells", Severity::Warning, "The pai-master appears in the HiveD cells"},
      {"X006", "mixed-devices-without-hived", Severity::Error, "Several worker device types while the HiveD scheduler is disabled"},
  };
  return kRules;
}

}  // namespace pai::config

// The codes of `paictl check config`: the cluster files (F), layout.yaml (L),
// config.yaml (C), its azure section (A), services-configuration.yaml (S), the HiveD
// config (H) and the files read together (X). Examples are from tests/data/config/cases.
#include "diag/codes_tables.h"

namespace pai::diag::codes_detail {

using diag::Severity;

const std::vector<CodeInfo>& config_codes() {
  static const std::vector<CodeInfo> kCodes = {
      {.code = "F001",
       .name = "yaml-syntax",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "The file is not valid YAML",
       .meaning =
           "The file is not valid YAML. paictl reads every cluster file (layout.yaml, config.yaml, "
           "services-configuration.yaml, hivedscheduler.yaml) as YAML first; what it cannot read, "
           "it cannot check further. An error: the installer, HiveD or OpenPAI refuses the file or "
           "does the wrong thing with it, and paictl check config exits 1.",
       .fix =
           "Fix the YAML at the reported position; the hint says what the reader expected there.",
       .example =
           "services-configuration.yaml (a syntax error inside the embedded HiveD config points at "
           "the outer line):\n        K80-POOL:\n          childCellType: K80-NODE\n          "
           "childCellNumber: 2\n           bad: indent\n      physicalCells:\n      - cellType: "
           "K80-POOL\npaictl check config says:\nservices-configuration.yaml:20:15: error[F001]: "
           "YAML syntax error: mapping values are not allowed here\n  hint: this line is indented "
           "more than the key above it, so it continues that key's value; align it with the other "
           "keys"},
      {.code = "F002",
       .name = "duplicate-key",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A mapping defines the same key twice; loaders silently keep one",
       .meaning = "A mapping defines the same key twice; loaders silently keep one. paictl reads "
                  "every cluster file (layout.yaml, config.yaml, services-configuration.yaml, "
                  "hivedscheduler.yaml) as YAML first; what it cannot read, it cannot check "
                  "further. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix =
           "Keep one of the two keys. PyYAML (OpenPAI) and Go (HiveD) silently keep the last one.",
       .example =
           "layout.yaml (hostip written twice for one machine):\n    pai-worker: \"true\"\n  - "
           "hostname: pai-worker2\n    hostip: 10.0.0.3\n    hostip: 10.0.0.4\n    machine-type: "
           "k80-machine\n    pai-worker: \"true\"\npaictl check config says:\nlayout.yaml:25:5: "
           "error[F002]: duplicate key \"hostip\" (first defined at line 24)\n  hint: YAML loaders "
           "keep only the last one, silently; remove or rename one of them"},
      {.code = "F003",
       .name = "empty-file",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "The file or document is empty",
       .meaning =
           "The file or document is empty. paictl reads every cluster file (layout.yaml, "
           "config.yaml, services-configuration.yaml, hivedscheduler.yaml) as YAML first; what it "
           "cannot read, it cannot check further. An error: the installer, HiveD or OpenPAI "
           "refuses the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Fill the file, or leave it out of the cluster directory.",
       .example = "config.yaml (an empty config.yaml):\n# nothing here\n\npaictl check config "
                  "says:\nconfig.yaml:1:1: error[F003]: config.yaml is empty\n  hint: a "
                  "config.yaml holds a mapping; see docs/check-config.md for an example"},
      {.code = "F004",
       .name = "multiple-documents",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "The file holds several YAML documents where one is read",
       .meaning = "The file holds several YAML documents where one is read. paictl reads every "
                  "cluster file (layout.yaml, config.yaml, services-configuration.yaml, "
                  "hivedscheduler.yaml) as YAML first; what it cannot read, it cannot check "
                  "further. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix = "Remove the `---` separator, or split the documents into separate files.",
       .example =
           "layout.yaml (two YAML documents in layout.yaml):\n    machine-type: k80-machine\n    "
           "pai-worker: \"true\"\n---\nmachine-sku: {}\n\npaictl check config "
           "says:\nlayout.yaml:28:1: error[F004]: layout.yaml holds 2 YAML documents; only one is "
           "read\n  hint: remove the '---' separator, or split the documents into separate files"},
      {.code = "F005",
       .name = "wrong-type",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A value has the wrong type (a map where a list belongs, a string where a number "
                "belongs)",
       .meaning =
           "A value has the wrong type (a map where a list belongs, a string where a number "
           "belongs). paictl reads every cluster file (layout.yaml, config.yaml, "
           "services-configuration.yaml, hivedscheduler.yaml) as YAML first; what it cannot read, "
           "it cannot check further. An error: the installer, HiveD or OpenPAI refuses the file or "
           "does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Give the value the type the message names; the hint shows how.",
       .example = "layout.yaml (machine-list is a mapping instead of a list):\n    cpu:\n      "
                  "vcore: 24\nmachine-list:\n  hostname: pai-master\n\npaictl check config "
                  "says:\nlayout.yaml:15:3: error[F005]: machine-list must be a list, found a "
                  "mapping\n  hint: write each entry as '- key: value'"},
      {.code = "F006",
       .name = "unknown-key",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A key that the consumer of this file ignores",
       .meaning = "A key that the consumer of this file ignores. paictl reads every cluster file "
                  "(layout.yaml, config.yaml, services-configuration.yaml, hivedscheduler.yaml) as "
                  "YAML first; what it cannot read, it cannot check further. A warning: the file "
                  "works, but not as it reads.",
       .fix = "Fix the spelling (the hint suggests the closest known key) or remove the key.",
       .example = "layout.yaml (a misspelled key in a machine entry):\nmachine-list:\n  - "
                  "hostname: pai-master\n    hostip: 10.0.0.1\n    machine-typ: master-machine\n   "
                  " machine-type: master-machine\n    pai-master: \"true\"\npaictl check config "
                  "says:\nlayout.yaml:17:5: warning[F006]: unknown key \"machine-typ\" in "
                  "machine-list[0]; it is ignored\n  hint: did you mean \"machine-type\"?"},
      {.code = "F007",
       .name = "missing-key",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A required key is missing",
       .meaning =
           "A required key is missing. paictl reads every cluster file (layout.yaml, config.yaml, "
           "services-configuration.yaml, hivedscheduler.yaml) as YAML first; what it cannot read, "
           "it cannot check further. An error: the installer, HiveD or OpenPAI refuses the file or "
           "does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Add the key.",
       .example = "layout.yaml (a machine without hostip):\n    hostip: 10.0.0.2\n    "
                  "machine-type: k80-machine\n    pai-worker: \"true\"\n  - hostname: "
                  "pai-worker2\n    machine-type: k80-machine\n    pai-worker: \"true\"\npaictl "
                  "check config says:\nlayout.yaml:23:5: error[F007]: machine-list[2] is missing "
                  "the required key \"hostip\"\n  hint: add hostip: <value>"},
      {.code = "F008",
       .name = "unreadable-file",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A path cannot be read",
       .meaning =
           "A path cannot be read. paictl reads every cluster file (layout.yaml, config.yaml, "
           "services-configuration.yaml, hivedscheduler.yaml) as YAML first; what it cannot read, "
           "it cannot check further. An error: the installer, HiveD or OpenPAI refuses the file or "
           "does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Check the path and its permissions. Exit code 2.",
       .example = ""},
      {.code = "F009",
       .name = "unrecognized-file",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A file is none of the OpenPAI/HiveD files paictl knows",
       .meaning = "A file is none of the OpenPAI/HiveD files paictl knows. paictl reads every "
                  "cluster file (layout.yaml, config.yaml, services-configuration.yaml, "
                  "hivedscheduler.yaml) as YAML first; what it cannot read, it cannot check "
                  "further. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix = "Name the file after its kind (`layout.yaml`, `config.yaml`, "
              "`services-configuration.yaml`, `hivedscheduler.yaml`). Exit code 2: the input is "
              "not a cluster file.",
       .example = ""},
      {.code = "F010",
       .name = "no-cluster-files",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A directory holds none of the OpenPAI/HiveD file names",
       .meaning = "A directory holds none of the OpenPAI/HiveD file names. paictl reads every "
                  "cluster file (layout.yaml, config.yaml, services-configuration.yaml, "
                  "hivedscheduler.yaml) as YAML first; what it cannot read, it cannot check "
                  "further. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix = "Point paictl at the directory that holds the cluster files.",
       .example = ""},
      {.code = "F011",
       .name = "yaml11-reading",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A plain value that OpenPAI (PyYAML) or HiveD (Go) reads unlike YAML 1.2: yes, on, "
                "0777, 1:20",
       .meaning = "A plain value that OpenPAI (PyYAML) or HiveD (Go) reads unlike YAML 1.2: yes, "
                  "on, 0777, 1:20. paictl reads every cluster file (layout.yaml, config.yaml, "
                  "services-configuration.yaml, hivedscheduler.yaml) as YAML first; what it cannot "
                  "read, it cannot check further. A warning: the file works, but not as it reads.",
       .fix = "Quote the value to keep the text (`\"yes\"`, `\"0777\"`), or write what the "
              "consumer should see (`true`, `511`). OpenPAI reads its files with PyYAML and HiveD "
              "its config with Go's yaml.v2, both YAML 1.1; paictl reads YAML 1.2. HiveD reads the "
              "original text into string fields, so for the HiveD config only number and boolean "
              "fields are affected.",
       .example =
           "layout.yaml (vcore: 024, which OpenPAI's PyYAML reads as the octal number 20):\n  "
           "master-machine:\n    mem: 60Gi\n    cpu:\n      vcore: 024\n  k80-machine:\n    "
           "computing-device:\npaictl check config says:\nlayout.yaml:5:14: warning[F011]: OpenPAI "
           "(PyYAML) reads 024 as the number 20, while YAML 1.2 (and paictl) reads the number 24\n "
           " hint: write the number in plain decimal if that is what you mean, or quote it "
           "(\"024\") for the text"},
      {.code = "F012",
       .name = "not-installable",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A cluster directory that paictl install cannot use: no config.yaml or no "
                "layout.yaml",
       .meaning = "The directory passes the checks of the files it has, but `paictl install DIR` "
                  "needs both\n`layout.yaml` and `config.yaml` (with at least `user` and "
                  "`docker_image_tag`), and refuses\nthe directory with the same words.",
       .fix = "Add the file the message names (`paictl plan` writes `layout.yaml`), or let\n"
              "`paictl init DIR` write the whole directory.",
       .example = "plan/: warning[F012]: plan has no config.yaml: paictl install cannot use it\n"
                  "  hint: add config.yaml with user and docker_image_tag, or run paictl init"},
      {.code = "L001",
       .name = "invalid-hostname",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "hostname is not a lower-case RFC 1123 name",
       .meaning = "hostname is not a lower-case RFC 1123 name. layout.yaml is what OpenPAI's "
                  "installer and paictl install turn into the Kubernetes nodes, their labels and "
                  "the machine SKUs. An error: the installer, HiveD or OpenPAI refuses the file or "
                  "does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Use a lower-case RFC 1123 name: it becomes the Kubernetes node name.",
       .example =
           "layout.yaml (an upper-case hostname):\n    hostip: 10.0.0.2\n    machine-type: "
           "k80-machine\n    pai-worker: \"true\"\n  - hostname: PAI_Worker2\n    hostip: "
           "10.0.0.3\n    machine-type: k80-machine\npaictl check config says:\nlayout.yaml:23:15: "
           "error[L001]: hostname \"PAI_Worker2\" is not a valid host name\n  hint: use lower case "
           "only: \"pai_worker2\" (Kubernetes node names are lower case)"},
      {.code = "L002",
       .name = "invalid-hostip",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "hostip is not an IPv4 address",
       .meaning = "hostip is not an IPv4 address. layout.yaml is what OpenPAI's installer and "
                  "paictl install turn into the Kubernetes nodes, their labels and the machine "
                  "SKUs. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix = "Write a dotted-quad IPv4 address.",
       .example = "layout.yaml (an IP with an octet above 255):\n    machine-type: k80-machine\n   "
                  " pai-worker: \"true\"\n  - hostname: pai-worker2\n    hostip: 10.0.0.256\n    "
                  "machine-type: k80-machine\n    pai-worker: \"true\"\npaictl check config "
                  "says:\nlayout.yaml:24:13: error[L002]: hostip \"10.0.0.256\" is not an IPv4 "
                  "address\n  hint: write four numbers 0-255 separated by dots, e.g. 10.0.0.2"},
      {.code = "L003",
       .name = "duplicate-hostname",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "Two machines have the same hostname",
       .meaning = "Two machines have the same hostname. layout.yaml is what OpenPAI's installer "
                  "and paictl install turn into the Kubernetes nodes, their labels and the machine "
                  "SKUs. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix = "Give every machine its own hostname.",
       .example =
           "layout.yaml (two machines named pai-worker1):\n    hostip: 10.0.0.2\n    machine-type: "
           "k80-machine\n    pai-worker: \"true\"\n  - hostname: pai-worker1\n    hostip: "
           "10.0.0.3\n    machine-type: k80-machine\npaictl check config says:\nlayout.yaml:23:15: "
           "error[L003]: duplicate hostname \"pai-worker1\" (first used at line 19)\n  hint: every "
           "machine needs its own hostname"},
      {.code = "L004",
       .name = "duplicate-hostip",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "Two machines have the same hostip",
       .meaning = "Two machines have the same hostip. layout.yaml is what OpenPAI's installer and "
                  "paictl install turn into the Kubernetes nodes, their labels and the machine "
                  "SKUs. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix = "Give every machine its own IP address.",
       .example = "layout.yaml (two machines with 10.0.0.2):\n    machine-type: k80-machine\n    "
                  "pai-worker: \"true\"\n  - hostname: pai-worker2\n    hostip: 10.0.0.2\n    "
                  "machine-type: k80-machine\n    pai-worker: \"true\"\npaictl check config "
                  "says:\nlayout.yaml:24:13: error[L004]: duplicate hostip 10.0.0.2 (also used by "
                  "\"pai-worker1\" at line 20)\n  hint: every machine needs its own IP address"},
      {.code = "L005",
       .name = "unknown-machine-type",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "machine-type is not defined in machine-sku",
       .meaning = "machine-type is not defined in machine-sku. layout.yaml is what OpenPAI's "
                  "installer and paictl install turn into the Kubernetes nodes, their labels and "
                  "the machine SKUs. An error: the installer, HiveD or OpenPAI refuses the file or "
                  "does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Use a machine-type defined under `machine-sku` (the hint suggests the closest one).",
       .example = "layout.yaml (a machine-type with a typo):\n    pai-master: \"true\"\n  - "
                  "hostname: pai-worker1\n    hostip: 10.0.0.2\n    machine-type: k80-machin\n    "
                  "pai-worker: \"true\"\n  - hostname: pai-worker2\npaictl check config "
                  "says:\nlayout.yaml:21:19: error[L005]: machine-type \"k80-machin\" is not "
                  "defined in machine-sku\n  hint: did you mean \"k80-machine\"?"},
      {.code = "L006",
       .name = "no-master",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "No machine has pai-master: \"true\"",
       .meaning = "No machine has pai-master: \"true\". layout.yaml is what OpenPAI's installer "
                  "and paictl install turn into the Kubernetes nodes, their labels and the machine "
                  "SKUs. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix = "Mark exactly one machine `pai-master: \"true\"`.",
       .example =
           "layout.yaml (no machine is the master):\n    cpu:\n      vcore: 24\nmachine-list:\n  - "
           "hostname: pai-master\n    hostip: 10.0.0.1\n    machine-type: master-machine\npaictl "
           "check config says:\nlayout.yaml:15:3: error[L006]: no machine has pai-master: "
           "\"true\"\n  hint: mark exactly one machine with pai-master: \"true\""},
      {.code = "L007",
       .name = "master-count",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "The number of masters is not 1, 3 or 5",
       .meaning = "Several machines have pai-master: \"true\", but not 3 or 5. The masters run "
                  "the control plane with stacked etcd, which works while a majority of its "
                  "members is up: 2 masters survive no lost master, as 1 does, and 4 "
                  "survive one, as 3 do. paictl install "
                  "installs 1, 3 or 5 masters (docs/install.md, a highly available control "
                  "plane).",
       .fix = "Mark 1, 3 or 5 machines `pai-master: \"true\"`.",
       .example =
           "layout.yaml (two masters):\n    hostip: 10.0.0.1\n    machine-type: master-machine\n   "
           " pai-master: \"true\"\n  - hostname: pai-worker1\n    hostip: 10.0.0.2\n    "
           "machine-type: k80-machine\npaictl check config says:\nlayout.yaml:19:5: error[L007]: 2 "
           "machines have pai-master: \"true\" (the last is \"pai-worker1\"); a control plane has "
           "1, 3 or 5 masters\n  hint: etcd works while most masters are up: with 2 masters it "
           "survives 0 lost, as with 1; mark 1, 3 or 5 machines pai-master: \"true\""},
      {.code = "L008",
       .name = "no-worker",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "No machine has pai-worker: \"true\"",
       .meaning = "No machine has pai-worker: \"true\". layout.yaml is what OpenPAI's installer "
                  "and paictl install turn into the Kubernetes nodes, their labels and the machine "
                  "SKUs. An error: the installer, HiveD or OpenPAI refuses the file or does the "
                  "wrong thing with it, and paictl check config exits 1.",
       .fix = "Mark the machines that run jobs `pai-worker: \"true\"`.",
       .example =
           "layout.yaml (no workers at all):\n    cpu:\n      vcore: 24\nmachine-list:\n  - "
           "hostname: pai-master\n    hostip: 10.0.0.1\n    machine-type: master-machine\npaictl "
           "check config says:\nlayout.yaml:15:3: error[L008]: no machine has pai-worker: "
           "\"true\"\n  hint: mark the machines that run jobs with pai-worker: \"true\""},
      {.code = "L009",
       .name = "master-is-worker",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "The master is also a worker",
       .meaning = "The master is also a worker. layout.yaml is what OpenPAI's installer and paictl "
                  "install turn into the Kubernetes nodes, their labels and the machine SKUs. An "
                  "error: the installer, HiveD or OpenPAI refuses the file or does the wrong thing "
                  "with it, and paictl check config exits 1.",
       .fix = "Set `pai-worker: \"false\"` on the master.",
       .example =
           "layout.yaml (the master is also a worker):\n    cpu:\n      vcore: 24\nmachine-list:\n "
           " - hostname: pai-master\n    hostip: 10.0.0.1\n    machine-type: "
           "master-machine\npaictl check config says:\nlayout.yaml:15:5: error[L009]: the master "
           "\"pai-master\" is also a worker\n  hint: OpenPAI does not let a machine be pai-master "
           "and pai-worker at the same time; set pai-worker: \"false\" on it"},
      {.code = "L010",
       .name = "role-not-string",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "pai-master/pai-worker/pai-storage must be the strings \"true\" or \"false\"",
       .meaning =
           "pai-master/pai-worker/pai-storage must be the strings \"true\" or \"false\". "
           "layout.yaml is what OpenPAI's installer and paictl install turn into the Kubernetes "
           "nodes, their labels and the machine SKUs. An error: the installer, HiveD or OpenPAI "
           "refuses the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Quote it: `pai-worker: \"true\"`. OpenPAI's schema accepts only the strings.",
       .example = "layout.yaml (pai-worker: true without quotes):\n  - hostname: pai-worker1\n    "
                  "hostip: 10.0.0.2\n    machine-type: k80-machine\n    pai-worker: true\n  - "
                  "hostname: pai-worker2\n    hostip: 10.0.0.3\npaictl check config "
                  "says:\nlayout.yaml:22:17: error[L010]: machine-list[1].pai-worker must be the "
                  "string \"true\", not the boolean true\n  hint: quote it: pai-worker: \"true\""},
      {.code = "L011",
       .name = "invalid-quantity",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "mem is not a Kubernetes quantity such as 60Gi",
       .meaning = "mem is not a Kubernetes quantity such as 60Gi. layout.yaml is what OpenPAI's "
                  "installer and paictl install turn into the Kubernetes nodes, their labels and "
                  "the machine SKUs. An error: the installer, HiveD or OpenPAI refuses the file or "
                  "does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Write a Kubernetes quantity: `220Gi` (binary) or `220G` (decimal).",
       .example = "layout.yaml (mem written as 220GB):\n      type: nvidia.com/gpu\n      model: "
                  "K80\n      count: 4\n    mem: 220GB\n    cpu:\n      vcore: 24\npaictl check "
                  "config says:\nlayout.yaml:11:10: error[L011]: machine-sku.k80-machine.mem "
                  "\"220GB\" is not a Kubernetes memory quantity\n  hint: write it like 60Gi, "
                  "220Gi or 512000Mi (Gi = 1024^3 bytes; G = 1000^3)"},
      {.code = "L012",
       .name = "legacy-layout",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "The layout uses the OpenPAI 0.x schema, which the v1.5+ installer refuses",
       .meaning =
           "The layout uses the OpenPAI 0.x schema, which the v1.5+ installer refuses. layout.yaml "
           "is what OpenPAI's installer and paictl install turn into the Kubernetes nodes, their "
           "labels and the machine SKUs. An error: the installer, HiveD or OpenPAI refuses the "
           "file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Convert the layout to the v1.5+ schema, as the hint describes.",
       .example =
           "layout.yaml (an OpenPAI 0.x layout):\nmachine-sku:\n  NC24R:\n    mem: 224\npaictl "
           "check config says:\nlayout.yaml:1:1: error[L012]: this is an OpenPAI 0.x layout; the "
           "v1.5+ installer does not accept it\n  hint: convert it: machine-sku mem becomes a "
           "quantity string (\"224Gi\"), gpu: {type, count} becomes computing-device: {type: "
           "nvidia.com/gpu, model, count}, os is dropped, and machines keep only hostname, hostip, "
           "machine-type and pai-master/pai-worker: \"true\""},
      {.code = "L013",
       .name = "unused-sku",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A machine-sku that no machine uses",
       .meaning =
           "A machine-sku that no machine uses. layout.yaml is what OpenPAI's installer and paictl "
           "install turn into the Kubernetes nodes, their labels and the machine SKUs. A warning: "
           "the file works, but not as it reads.",
       .fix = "Remove the unused SKU, or assign it to machines.",
       .example = "layout.yaml (a machine-sku no machine uses):\n    mem: 220Gi\n    cpu:\n      "
                  "vcore: 24\n  spare-machine:\n    mem: 8Gi\n    cpu:\npaictl check config "
                  "says:\nlayout.yaml:14:3: warning[L013]: machine-sku \"spare-machine\" is not "
                  "used by any machine\n  hint: remove it, or set machine-type: spare-machine on "
                  "the machines of that kind"},
      {.code = "L014",
       .name = "invalid-count",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A count (vcore, computing-device count) is not positive",
       .meaning = "A count (vcore, computing-device count) is not positive. layout.yaml is what "
                  "OpenPAI's installer and paictl install turn into the Kubernetes nodes, their "
                  "labels and the machine SKUs. An error: the installer, HiveD or OpenPAI refuses "
                  "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Use a positive count; remove `computing-device` for a CPU-only machine.",
       .example = "layout.yaml (a computing-device count of 0):\n    computing-device:\n      "
                  "type: nvidia.com/gpu\n      model: K80\n      count: 0\n    mem: 220Gi\n    "
                  "cpu:\npaictl check config says:\nlayout.yaml:10:14: error[L014]: "
                  "machine-sku.k80-machine.computing-device.count must be positive, found 0\n  "
                  "hint: remove computing-device for a CPU-only machine"},
      {.code = "L015",
       .name = "unknown-device-type",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "computing-device type is not a known device-plugin resource",
       .meaning = "computing-device type is not a known device-plugin resource. layout.yaml is "
                  "what OpenPAI's installer and paictl install turn into the Kubernetes nodes, "
                  "their labels and the machine SKUs. A warning: the file works, but not as it "
                  "reads.",
       .fix = "Use the device-plugin resource name: `nvidia.com/gpu`, `amd.com/gpu` or "
              "`enflame.com/dtu`.",
       .example = "layout.yaml (a device type with a typo):\n      vcore: 24\n  k80-machine:\n    "
                  "computing-device:\n      type: nvidia.com/gpus\n      model: K80\n      count: "
                  "4\npaictl check config says:\nlayout.yaml:8:13: warning[L015]: computing-device "
                  "type \"nvidia.com/gpus\" is not a device-plugin resource that OpenPAI "
                  "supports\n  hint: did you mean \"nvidia.com/gpu\"?"},
      {.code = "L016",
       .name = "no-role",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A machine is neither master, worker nor storage",
       .meaning = "A machine is neither master, worker nor storage. layout.yaml is what OpenPAI's "
                  "installer and paictl install turn into the Kubernetes nodes, their labels and "
                  "the machine SKUs. A warning: the file works, but not as it reads.",
       .fix = "Give the machine a role, or remove it.",
       .example =
           "layout.yaml (a machine with no role at all):\n    hostip: 10.0.0.3\n    machine-type: "
           "k80-machine\n    pai-worker: \"true\"\n  - hostname: spare\n    hostip: 10.0.0.9\n    "
           "machine-type: master-machine\npaictl check config says:\nlayout.yaml:27:5: "
           "warning[L016]: machine \"spare\" has no role, so OpenPAI will not use it\n  hint: add "
           "pai-worker: \"true\" (or pai-master: \"true\")"},
      {.code = "L060",
       .name = "no-control-plane-endpoint",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "Several masters and no control-plane endpoint",
       .meaning = "layout.yaml has 3 or 5 masters, and config.yaml sets neither "
                  "kube_control_plane_endpoint (an operator's load balancer in front of the "
                  "masters' API servers) nor kube_vip (a virtual address kube-vip moves between "
                  "the masters). The workers, the kubeconfigs and the other masters' joins need "
                  "one address that answers while any master is up.",
       .fix = "Set `kube_control_plane_endpoint: \"HOST:PORT\"` or `kube_vip: {address: IP, "
              "interface: NAME}` in config.yaml.",
       .example =
           "layout.yaml (three masters and no endpoint in front of them):\n    hostip: 10.0.0.1\n  "
           "  machine-type: master-machine\n    pai-master: \"true\"\n  - hostname: pai-master2\n  "
           "  hostip: 10.0.0.11\n    machine-type: master-machine\npaictl check config "
           "says:\nlayout.yaml:19:5: error[L060]: 3 masters but no control-plane endpoint: "
           "config.yaml sets neither kube_control_plane_endpoint nor kube_vip\n  hint: put a load "
           "balancer in front of the masters' port 6443 and set kube_control_plane_endpoint: "
           "\"HOST:PORT\", or let kube-vip hold an address: kube_vip: {address: 10.0.0.250, "
           "interface: eth0}"},
      {.code = "L061",
       .name = "invalid-kube-vip",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "kube_vip's address or interface is not valid",
       .meaning = "kube_vip.address must be an IPv4 address (kube-vip announces it with ARP) and "
                  "kube_vip.interface the name of the masters' network interface that carries "
                  "it (1-15 characters, no '/', ':' or white space).",
       .fix = "Write `kube_vip: {address: 10.0.0.250, interface: eth0}` with a free address of "
              "the masters' network and the interface `ip -br link` shows.",
       .example =
           "config.yaml (kube_vip with an address that is not IPv4 and an interface name with a "
           "slash):\npassword: secret-pw\ndocker_image_tag: v1.8.0\nkube_vip:\n  address: "
           "10.0.0.256\n  interface: eth0/1\n\npaictl check config says:\nconfig.yaml:5:12: "
           "error[L061]: kube_vip.address \"10.0.0.256\" is not an IPv4 address\n  hint: a free "
           "address on the masters' network that kube-vip announces with ARP, e.g. 10.0.0.250"},
      {.code = "L062",
       .name = "two-endpoints",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "kube_vip and kube_control_plane_endpoint name different endpoints",
       .meaning = "With kube_vip the control plane's endpoint is its address:6443; a "
                  "kube_control_plane_endpoint that differs leaves it unclear which one the "
                  "certificates, the joins and the kubeconfigs use.",
       .fix = "Keep one of them (or make kube_control_plane_endpoint kube_vip's address:6443).",
       .example = "config.yaml (a load balancer and a kube-vip address that "
                  "differ):\ndocker_image_tag: v1.8.0\nkube_control_plane_endpoint: "
                  "\"10.0.0.250:6443\"\nkube_vip:\n  address: 10.0.0.251\n  interface: "
                  "eth0\n\npaictl check config says:\nconfig.yaml:6:3: error[L062]: "
                  "kube_vip.address 10.0.0.251 and kube_control_plane_endpoint 10.0.0.250:6443 "
                  "name two different endpoints\n  hint: keep one: kube_vip (the endpoint is then "
                  "10.0.0.251:6443) or an operator's load balancer in kube_control_plane_endpoint"},
      {.code = "L063",
       .name = "invalid-endpoint",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "kube_control_plane_endpoint is not HOST:PORT",
       .meaning = "kube_control_plane_endpoint is kubeadm's controlPlaneEndpoint: a DNS name or "
                  "an IPv4 address and a port, which every node and kubeconfig uses to reach "
                  "the API servers.",
       .fix = "Write it as HOST:PORT, e.g. `kube_control_plane_endpoint: \"10.0.0.250:6443\"`.",
       .example = "config.yaml (an endpoint without a port):\nuser: openpai\npassword: "
                  "secret-pw\ndocker_image_tag: v1.8.0\nkube_control_plane_endpoint: "
                  "\"lb.example.com\"\n\npaictl check config says:\nconfig.yaml:4:30: error[L063]: "
                  "kube_control_plane_endpoint must be HOST:PORT, found \"lb.example.com\"\n  "
                  "hint: the load balancer in front of the masters' API servers, e.g. "
                  "kube_control_plane_endpoint: \"10.0.0.250:6443\""},
      {.code = "L064",
       .name = "masters-with-azure",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "Several masters in a cluster with an Azure part",
       .meaning = "paictl installs a highly available control plane on premises only: an Azure "
                  "or hybrid cluster has one master (an on-prem machine or an Azure pool with "
                  "role: master), which its VPN and network security rules are made for.",
       .fix = "Keep one `pai-master: \"true\"`, or install the Azure part as a cluster of its "
              "own.",
       .example =
           "layout.yaml (three on-prem masters in a cluster with an Azure part):\n    hostip: "
           "10.0.0.1\n    machine-type: master-machine\n    pai-master: \"true\"\n  - hostname: "
           "pai-master2\n    hostip: 10.0.0.11\n    machine-type: master-machine\npaictl check "
           "config says:\nlayout.yaml:19:5: error[L064]: 3 masters in a cluster with an Azure "
           "part: paictl installs a highly available control plane on premises only\n  hint: keep "
           "one pai-master: \"true\" (Azure and hybrid clusters have one master), or install the "
           "Azure part as a cluster of its own"},
      {.code = "L065",
       .name = "kube-vip-is-host",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "kube_vip's address is a machine's hostip",
       .meaning = "kube-vip holds its address on one master at a time and moves it when that "
                  "master is lost: an address a machine already has would be announced twice.",
       .fix = "Give kube_vip.address a free address of the masters' network.",
       .example = "config.yaml (kube_vip's address is a master's own):\npassword: "
                  "secret-pw\ndocker_image_tag: v1.8.0\nkube_vip:\n  address: 10.0.0.12\n  "
                  "interface: eth0\n\npaictl check config says:\nconfig.yaml:5:3: error[L065]: "
                  "kube_vip.address 10.0.0.12 is the hostip of \"pai-master3\" (layout.yaml line "
                  "24)\n  hint: kube-vip needs an address of its own that it moves between the "
                  "masters: pick a free one on their network"},
      {.code = "L080",
       .name = "bad-proxy-url",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A proxy in config.yaml is not an http(s) URL",
       .meaning =
           "http_proxy or https_proxy in config.yaml is not http(s)://[USER:PASSWORD@]HOST[:PORT]. "
           "paictl install writes the proxies for apt, containerd and the kubelet on every host; a "
           "value they cannot read would leave every host without a way out. The password in a "
           "proxy URL is never shown: paictl prints the URL as http://***@HOST:PORT.",
       .fix = "Write the proxy as a URL, e.g. `http_proxy: http://proxy.example.com:3128`.",
       .example =
           "config.yaml (a proxy without a scheme, whose password is never shown):\npassword: "
           "secret-pw\ndocker_image_tag: v1.8.0\nhttp_proxy: "
           "http://proxy.example.com:3128\nhttps_proxy: "
           "ops:s3cret-pw@proxy.example.com:3128\n\npaictl check config says:\nconfig.yaml:5:14: "
           "error[L080]: https_proxy \"***@proxy.example.com:3128\" is not an http:// or https:// "
           "URL\n  hint: write the proxy as a URL, e.g. http://proxy.example.com:3128"},
      {.code = "L081",
       .name = "bad-no-proxy",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A no_proxy entry is not a host, an address or a CIDR",
       .meaning = "An entry of no_proxy (a list, or one comma-separated string) is not a host "
                  "name, a domain (.example.com), an IPv4 address or CIDR, HOST:PORT or *. paictl "
                  "install completes no_proxy with the cluster's own ranges and names; an entry "
                  "the tools cannot read is dropped by some of them and breaks others.",
       .fix =
           "One entry per host, domain or range, e.g. `no_proxy: [.corp.example.com, 10.0.0.0/8]`.",
       .example =
           "config.yaml (a no_proxy entry that is a URL):\npassword: secret-pw\ndocker_image_tag: "
           "v1.8.0\nhttp_proxy: http://proxy.example.com:3128\nno_proxy: .corp.example.com, "
           "http://registry.corp, 10.0.0.0/8\n\npaictl check config says:\nconfig.yaml:5:11: "
           "error[L081]: no_proxy entry \"http://registry.corp\" has a scheme; no_proxy holds "
           "hosts, not URLs\n  hint: a host name (.example.com for its subdomains), an IPv4 "
           "address or CIDR (10.0.0.0/8), HOST:PORT or *; one entry each"},
      {.code = "L082",
       .name = "bad-registry-mirror",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A registry mirror is not a registry address or URL",
       .meaning = "image_registry_mirror must be HOST[:PORT] (every image is pulled as "
                  "HOST[:PORT]/REPOSITORY:TAG), and containerd_registry_mirrors maps a registry "
                  "(HOST[:PORT], or _default) to a list of http(s) mirror URLs, which paictl "
                  "install writes as containerd's hosts.toml.",
       .fix = "Write `image_registry_mirror: registry.example.com:5000`, and "
              "`containerd_registry_mirrors: {docker.io: [https://mirror.example.com]}`.",
       .example =
           "config.yaml (a mirror written as a URL where HOST:PORT is expected):\nuser: "
           "openpai\npassword: secret-pw\ndocker_image_tag: v1.8.0\nimage_registry_mirror: "
           "https://registry.example.com:5000/images\ncontainerd_registry_mirrors:\n  docker.io: "
           "[https://mirror.example.com]\npaictl check config says:\nconfig.yaml:4:24: "
           "error[L082]: image_registry_mirror \"https://registry.example.com:5000/images\" has a "
           "scheme; a registry is HOST[:PORT]\n  hint: HOST or HOST:PORT without a scheme or a "
           "path, e.g. registry.example.com:5000 (every image is pulled as "
           "HOST[:PORT]/REPOSITORY:TAG)"},
      {.code = "L083",
       .name = "bad-label-key",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A node label key is not a Kubernetes label key",
       .meaning =
           "A key under labels: (or a taint's key) in layout.yaml is not [PREFIX/]NAME: PREFIX a "
           "DNS subdomain of at most 253 characters, NAME at most 63 letters, digits, '-', '_' and "
           "'.', starting and ending with a letter or digit. The API server would refuse the label "
           "and the labels phase of paictl install would fail.",
       .fix = "Rename the key, e.g. `example.com/rack: r12`.",
       .example = "layout.yaml (a label key with a blank in its name):\n    pai-worker: \"true\"\n "
                  "   labels:\n      example.com/rack: r12\n      \"example.com/power feed\": a\n  "
                  "- hostname: pai-worker2\n    hostip: 10.0.0.3\npaictl check config "
                  "says:\nlayout.yaml:25:7: error[L083]: label key \"example.com/power feed\" has "
                  "a name \"power feed\" that is not letters, digits, '-', '_' and '.' starting "
                  "and ending with a letter or digit\n  hint: a label key is [PREFIX/]NAME: PREFIX "
                  "a DNS subdomain (lower case, at most 253), NAME at most 63 of letters, digits, "
                  "'-', '_' and '.', starting and ending with a letter or digit"},
      {.code = "L084",
       .name = "bad-label-value",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A node label value is not a Kubernetes label value",
       .meaning = "A label's value in layout.yaml is longer than 63 characters or holds characters "
                  "other than letters, digits, '-', '_' and '.' (starting and ending with a letter "
                  "or digit). The API server would refuse it.",
       .fix = "Shorten the value or replace the other characters; an empty value is allowed.",
       .example =
           "layout.yaml (a label value with a slash):\n      count: 4\n    mem: 220Gi\n    "
           "labels:\n      example.com/gpu-family: kepler/k80\n    cpu:\n      vcore: 24\npaictl "
           "check config says:\nlayout.yaml:13:31: error[L084]: label example.com/gpu-family: "
           "value \"kepler/k80\" is not letters, digits, '-', '_' and '.' starting and ending with "
           "a letter or digit\n  hint: a label value is empty or at most 63 of letters, digits, "
           "'-', '_' and '.', starting and ending with a letter or digit; quote it in YAML when it "
           "looks like a number or boolean"},
      {.code = "L085",
       .name = "reserved-label",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A node label or taint uses a prefix Kubernetes or paictl reserves",
       .meaning = "A label or taint key in layout.yaml has the prefix kubernetes.io/ or k8s.io/ "
                  "(or a subdomain of them), which Kubernetes reserves for itself, or paictl.io/ "
                  "(or pai-master, pai-worker), which paictl sets from the layout. "
                  "node-role.kubernetes.io/ and topology.kubernetes.io/ are allowed.",
       .fix = "Use a prefix of your own, e.g. `example.com/dedicated`.",
       .example = "layout.yaml (a label under Kubernetes' own prefix):\n    pai-worker: \"true\"\n "
                  "   labels:\n      node-role.kubernetes.io/gpu: \"\"\n      kubernetes.io/arch: "
                  "amd64\n\npaictl check config says:\nlayout.yaml:29:7: error[L085]: label key "
                  "\"kubernetes.io/arch\" has the prefix kubernetes.io/ that Kubernetes reserves\n "
                  " hint: use a prefix of your own, e.g. example.com/; node-role.kubernetes.io/ "
                  "and topology.kubernetes.io/ are allowed"},
      {.code = "L086",
       .name = "bad-taint-effect",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A taint's effect is not NoSchedule, PreferNoSchedule or NoExecute",
       .meaning = "A taint in layout.yaml has no effect or one Kubernetes does not know. The API "
                  "server would refuse the node's taints and the labels phase of paictl install "
                  "would fail. Effects are case-sensitive.",
       .fix = "Write `effect: NoSchedule`, `PreferNoSchedule` or `NoExecute`.",
       .example = "layout.yaml (a taint whose effect is in the wrong case):\n    taints:\n      - "
                  "key: example.com/dedicated\n        value: ops\n        effect: noschedule\n  - "
                  "hostname: pai-worker1\n    hostip: 10.0.0.2\npaictl check config "
                  "says:\nlayout.yaml:22:17: error[L086]: taint effect \"noschedule\" is not a "
                  "taint effect\n  hint: did you mean \"NoSchedule\"? effect is one of NoSchedule, "
                  "PreferNoSchedule, NoExecute (case matters)"},
      {.code = "L087",
       .name = "bad-taint",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A taint has no key, a malformed key or value, or is given twice",
       .meaning = "A taint in layout.yaml is {key, value, effect}: the key a label key, the value "
                  "a label value (or none), and one taint per key and effect on a machine or SKU.",
       .fix = "Fix the key or value, or remove the second taint.",
       .example =
           "layout.yaml (a taint without a key):\n    machine-type: master-machine\n    "
           "pai-master: \"true\"\n    taints:\n      - value: ops\n        effect: NoSchedule\n  - "
           "hostname: pai-worker1\npaictl check config says:\nlayout.yaml:20:9: error[L087]: "
           "machine-list[0].taints[0] has no key\n  hint: a taint is {key: example.com/dedicated, "
           "value: team-a, effect: NoSchedule}"},
      {.code = "L088",
       .name = "taint-hides-worker",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A taint keeps OpenPAI's jobs off a worker that HiveD still counts",
       .meaning =
           "A NoSchedule or NoExecute taint on a pai-worker keeps every pod without a matching "
           "toleration off it, OpenPAI's jobs included. HiveD judges a node by Ready and "
           "unschedulable only, so it still counts the node's cells as free and may place jobs "
           "there that then wait. A warning: the taint works, but not for OpenPAI.",
       .fix = "Use PreferNoSchedule, or take the node out of HiveD's view with `kubectl cordon`, "
              "or leave pai-worker off it.",
       .example =
           "layout.yaml (a NoSchedule taint on a GPU worker):\n    machine-type: k80-machine\n    "
           "pai-worker: \"true\"\n    taints:\n      - {key: example.com/maintenance, effect: "
           "NoSchedule}\n\npaictl check config says:\nlayout.yaml:28:9: warning[L088]: taint "
           "example.com/maintenance:NoSchedule keeps OpenPAI's jobs off the worker "
           "\"pai-worker2\", but HiveD still counts its cells as free\n  hint: jobs HiveD places "
           "there wait; to take a node out of HiveD's view cordon it (kubectl cordon), or use "
           "PreferNoSchedule"},
      {.code = "C001",
       .name = "ignored-key",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A documented key that OpenPAI's templates never read",
       .meaning = "A documented key that OpenPAI's templates never read. config.yaml holds the "
                  "installer's settings and paictl's own (ssh_user, ssh_config, known_hosts, "
                  "ignore_check_errors, hived_url). A warning: the file works, but not as it "
                  "reads.",
       .fix = "Rename `docker_cache_htpasswd` to `docker_cache_registry_htpasswd`.",
       .example = "config.yaml (docker_cache_htpasswd, which the templates never read):\nuser: "
                  "openpai\npassword: secret-pw\ndocker_image_tag: v1.8.0\ndocker_cache_htpasswd: "
                  "\"user:hash\"\n\npaictl check config says:\nconfig.yaml:4:1: warning[C001]: "
                  "docker_cache_htpasswd is never read: OpenPAI's services-configuration template "
                  "reads docker_cache_registry_htpasswd\n  hint: rename the key to "
                  "docker_cache_registry_htpasswd"},
      {.code = "C002",
       .name = "legacy-key",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A key of the pre-v1.5 installer that is no longer read",
       .meaning = "A key of the pre-v1.5 installer that is no longer read. config.yaml holds the "
                  "installer's settings and paictl's own (ssh_user, ssh_config, known_hosts, "
                  "ignore_check_errors, hived_url). A warning: the file works, but not as it "
                  "reads.",
       .fix = "Remove the key: v1.5+ reads the device type from `layout.yaml`.",
       .example = "config.yaml (gpu_type from the pre-v1.5 installer):\nuser: openpai\npassword: "
                  "secret-pw\ndocker_image_tag: v1.8.0\ngpu_type: nvidia\n\npaictl check config "
                  "says:\nconfig.yaml:4:1: warning[C002]: gpu_type belongs to the pre-v1.5 "
                  "installer and is no longer read\n  hint: the NVIDIA checks now follow "
                  "machine-sku computing-device in layout.yaml; remove it"},
      {.code = "C003",
       .name = "invalid-value",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A value outside the accepted set",
       .meaning = "A value outside the accepted set. config.yaml holds the installer's settings "
                  "and paictl's own (ssh_user, ssh_config, known_hosts, ignore_check_errors, "
                  "hived_url). An error: the installer, HiveD or OpenPAI refuses the file or does "
                  "the wrong thing with it, and paictl check config exits 1.",
       .fix = "Use one of the accepted values named in the message.",
       .example =
           "config.yaml (an unknown docker cache backend):\npassword: secret-pw\ndocker_image_tag: "
           "v1.8.0\nenable_docker_cache: true\ndocker_cache_storage_backend: s3\n\npaictl check "
           "config says:\nconfig.yaml:5:31: error[C003]: docker_cache_storage_backend must be "
           "\"azure\" or \"filesystem\", found \"s3\"\n  hint: OpenPAI's docker cache stores "
           "images in an Azure blob container or on a local filesystem"},
      {.code = "C004",
       .name = "string-boolean",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A quoted \"true\"/\"false\" where the installer tests for a real boolean",
       .meaning = "A quoted \"true\"/\"false\" where the installer tests for a real boolean. "
                  "config.yaml holds the installer's settings and paictl's own (ssh_user, "
                  "ssh_config, known_hosts, ignore_check_errors, hived_url). A warning: the file "
                  "works, but not as it reads.",
       .fix = "Remove the quotes: `enable_hived_scheduler: false`. The installer tests `is False`, "
              "which a string never is.",
       .example =
           "config.yaml (enable_hived_scheduler: \"false\" as a string):\nuser: openpai\npassword: "
           "secret-pw\ndocker_image_tag: v1.8.0\nenable_hived_scheduler: \"false\"\n\npaictl check "
           "config says:\nconfig.yaml:4:25: warning[C004]: enable_hived_scheduler: \"false\" is a "
           "string, not a boolean; the installer keeps the default (true), so the HiveD scheduler "
           "stays enabled\n  hint: remove the quotes: enable_hived_scheduler: false"},
      {.code = "C005",
       .name = "docker-cache-incomplete",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "enable_docker_cache is on but its backend settings are missing",
       .meaning =
           "enable_docker_cache is on but its backend settings are missing. config.yaml holds the "
           "installer's settings and paictl's own (ssh_user, ssh_config, known_hosts, "
           "ignore_check_errors, hived_url). An error: the installer, HiveD or OpenPAI refuses the "
           "file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Set the backend's settings (`docker_cache_azure_account_name` and `_key`, or "
              "`docker_cache_fs_mount_path`).",
       .example = "config.yaml (the azure cache backend without its account):\npassword: "
                  "secret-pw\ndocker_image_tag: v1.8.0\nenable_docker_cache: "
                  "true\ndocker_cache_storage_backend: azure\n\npaictl check config "
                  "says:\nconfig.yaml:5:31: error[C005]: the azure docker cache backend needs "
                  "docker_cache_azure_account_key\n  hint: set docker_cache_azure_account_key (the "
                  "storage account the cache writes to)"},
      {.code = "C006",
       .name = "kubelet-flags-override",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "kubelet_custom_flags replaces OpenPAI's default kubelet flags",
       .meaning = "kubelet_custom_flags replaces OpenPAI's default kubelet flags. config.yaml "
                  "holds the installer's settings and paictl's own (ssh_user, ssh_config, "
                  "known_hosts, ignore_check_errors, hived_url). A warning: the file works, but "
                  "not as it reads.",
       .fix = "Add `image-pull-progress-deadline: 10m` to `kubelet_custom_flags` to keep OpenPAI's "
              "default.",
       .example = "config.yaml (kubelet_custom_flags replaces the defaults):\nuser: "
                  "openpai\npassword: secret-pw\ndocker_image_tag: v1.8.0\nkubelet_custom_flags:\n "
                  " max-pods: \"110\"\n\npaictl check config says:\nconfig.yaml:4:1: "
                  "warning[C006]: kubelet_custom_flags replaces OpenPAI's default kubelet flags, "
                  "including --image-pull-progress-deadline=10m\n  hint: add "
                  "image-pull-progress-deadline: 10m to kubelet_custom_flags to keep it"},
      {.code = "C007",
       .name = "invalid-port-range",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A port or port range is invalid or overlaps the job port range",
       .meaning =
           "A port or port range is invalid or overlaps the job port range. config.yaml holds the "
           "installer's settings and paictl's own (ssh_user, ssh_config, known_hosts, "
           "ignore_check_errors, hived_url). An error: the installer, HiveD or OpenPAI refuses the "
           "file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Keep the host daemon ports at 40000 or above (or move the rest-server's job port "
              "range).",
       .example = "config.yaml (a host daemon port range inside the job port range):\nuser: "
                  "openpai\npassword: secret-pw\ndocker_image_tag: v1.8.0\nhost_daemon_port_start: "
                  "20000\nhost_daemon_port_end: 30000\n\npaictl check config "
                  "says:\nconfig.yaml:4:25: error[C007]: host daemon port range 20000-30000 "
                  "overlaps the job port range 15000-40000 that the rest-server hands out\n  hint: "
                  "start it at 40000 or above, or move rest-server schedule-port-start/end"},
      {.code = "C008",
       .name = "no-password-for-sudo",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "No password for a user other than root: sudo must not ask for one",
       .meaning = "No password for a user other than root: sudo must not ask for one. config.yaml "
                  "holds the installer's settings and paictl's own (ssh_user, ssh_config, "
                  "known_hosts, ignore_check_errors, hived_url). A warning: the file works, but "
                  "not as it reads.",
       .fix = "Give `password`, or allow passwordless sudo for `user` on every host. `password` is "
              "optional: key-only SSH as root needs none (OpenPAI's inventory then has an empty "
              "`ansible_ssh_pass`). `paictl check hosts` shows whether sudo asks for a password "
              "(`Privileges`).",
       .example = "config.yaml (a user other than root and no password: sudo must not ask for "
                  "one):\nuser: openpai\nssh_key_file_path: "
                  "/home/openpai/.ssh/id_ed25519\ndocker_image_tag: v1.8.0\npaictl check config "
                  "says:\nconfig.yaml:1:1: warning[C008]: config.yaml has no password, so the "
                  "installer runs sudo as \"openpai\" without one; it fails on hosts where sudo "
                  "asks for a password\n  hint: give password, or allow passwordless sudo for "
                  "openpai; paictl check hosts shows whether sudo asks (Privileges)"},
      {.code = "C009",
       .name = "missing-file",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A file that config.yaml names (ssh_config, known_hosts, a relative "
                "ssh_key_file_path) does not exist",
       .meaning = "paictl's own settings in config.yaml name files that every command given the "
                  "directory\nreads: `ssh_config`, `known_hosts` and a relative "
                  "`ssh_key_file_path` resolve against the\ndirectory of config.yaml.",
       .fix = "Make the path name an existing file: absolute, or relative to the directory of "
              "`config.yaml`\n(the paths `paictl init` writes are absolute). An "
              "absolute `ssh_key_file_path`\nis OpenPAI's, read where install runs, and is not "
              "checked.",
       .example =
           "config.yaml (paictl settings in config.yaml that name files that are not there: a "
           "relative\nssh_config and ssh_key_file_path (relative to this directory), an absolute "
           "known_hosts.):\nuser: root\ndocker_image_tag: v1.8.0\nssh_config: "
           "ssh_config\nknown_hosts: /nonexistent/known_hosts\nssh_key_file_path: "
           "keys/id_ed25519\npaictl check config says:\nconfig.yaml:3:13: error[C009]: ssh_config: "
           "tests/data/config/cases/C009-missing-file/ssh_config does not exist\n  hint: name an "
           "SSH client config (ssh -F), absolute or relative to the directory of config.yaml"},
      {.code = "A001",
       .name = "secret-in-config",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "azure.client-secret puts the service principal's secret in config.yaml",
       .meaning = "azure.client-secret puts the service principal's secret in config.yaml. "
                  "config.yaml's azure: section describes the Azure part of a hybrid cluster: the "
                  "subscription, the network and the VM pools paictl install creates. An error: "
                  "the installer, HiveD or OpenPAI refuses the file or does the wrong thing with "
                  "it, and paictl check config exits 1.",
       .fix = "Remove `client-secret`; put the secret in a file of mode 0600 and name it with "
              "`client-secret-file`, or set `AZURE_CLIENT_SECRET` (docs/azure.md).",
       .example = "config.yaml (the service principal's secret written into config.yaml):\n  "
                  "subscription: 00000000-0000-0000-0000-000000000001\n  tenant: "
                  "contoso.onmicrosoft.com\n  client-id: 11111111-2222-3333-4444-555555555555\n  "
                  "client-secret: Zq8~not-a-real-secret\n  location: eastus\n  resource-group: "
                  "pai-rg\npaictl check config says:\nconfig.yaml:8:3: error[A001]: "
                  "azure.client-secret holds a secret in config.yaml; paictl never reads it from "
                  "there\n  hint: put the secret in a file (mode 0600) and name it with "
                  "client-secret-file, or set AZURE_CLIENT_SECRET"},
      {.code = "A002",
       .name = "invalid-azure-id",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A subscription, tenant, client id, location, resource group or image that Azure "
                "would refuse",
       .meaning = "A subscription, tenant, client id, location, resource group or image that Azure "
                  "would refuse. config.yaml's azure: section describes the Azure part of a hybrid "
                  "cluster: the subscription, the network and the VM pools paictl install creates. "
                  "An error: the installer, HiveD or OpenPAI refuses the file or does the wrong "
                  "thing with it, and paictl check config exits 1.",
       .fix = "Use the id Azure shows: `az account list -o table` (subscription, tenant), `az ad "
              "sp list` (client id), `az account list-locations` (location).",
       .example =
           "config.yaml (a subscription name where its id belongs):\npassword: "
           "secret-pw\ndocker_image_tag: v1.8.0\nazure:\n  subscription: My Subscription\n  "
           "tenant: contoso.onmicrosoft.com\n  client-id: "
           "11111111-2222-3333-4444-555555555555\npaictl check config says:\nconfig.yaml:5:17: "
           "error[A002]: azure.subscription must be a subscription id (a GUID), found \"My "
           "Subscription\"\n  hint: az account list -o table shows the ids of your subscriptions"},
      {.code = "A003",
       .name = "invalid-address-range",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "An Azure address range that is not a CIDR, lies outside address-space or overlaps "
                "another site or the cluster's ranges",
       .meaning =
           "An Azure address range that is not a CIDR, lies outside address-space or overlaps "
           "another site or the cluster's ranges. config.yaml's azure: section describes the Azure "
           "part of a hybrid cluster: the subscription, the network and the VM pools paictl "
           "install creates. An error: the installer, HiveD or OpenPAI refuses the file or does "
           "the wrong thing with it, and paictl check config exits 1.",
       .fix =
           "Use IPv4 CIDRs; keep `subnet` inside `address-space`, and keep the Azure range apart "
           "from the on-prem network and from `kube_pods_subnet`/`kube_service_addresses`.",
       .example =
           "config.yaml (an Azure subnet outside the virtual network's address space):\n  "
           "location: eastus\n  resource-group: pai-rg\n  address-space: 10.224.0.0/16\n  subnet: "
           "10.200.1.0/24\n  ssh-public-key-file: id_ed25519.pub\n  pools:\npaictl check config "
           "says:\nconfig.yaml:11:11: error[A003]: azure.subnet 10.200.1.0/24 is not inside "
           "address-space 10.224.0.0/16\n  hint: pick a subnet inside the virtual network's range"},
      {.code = "A004",
       .name = "ssh-from-anywhere",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "allowed-ssh-from admits SSH from the whole internet",
       .meaning = "allowed-ssh-from admits SSH from the whole internet. config.yaml's azure: "
                  "section describes the Azure part of a hybrid cluster: the subscription, the "
                  "network and the VM pools paictl install creates. A warning: the file works, but "
                  "not as it reads.",
       .fix = "Admit only the operator's address (`allowed-ssh-from: [203.0.113.10/32]`); the "
              "cluster's own traffic between sites needs no SSH rule.",
       .example = "config.yaml (SSH to the Azure VMs admitted from the whole internet):\n  "
                  "location: eastus\n  resource-group: pai-rg\n  ssh-public-key-file: "
                  "id_ed25519.pub\n  allowed-ssh-from: [0.0.0.0/0]\n  pools:\n    - name: "
                  "gpu\npaictl check config says:\nconfig.yaml:11:22: warning[A004]: "
                  "azure.allowed-ssh-from admits SSH from the whole internet (0.0.0.0/0)\n  hint: "
                  "admit only the operator's address, e.g. 203.0.113.10/32"},
      {.code = "A005",
       .name = "invalid-pool",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "An Azure pool with a bad name, role, size or count (InfiniBand pools: 100 VMs at "
                "most; a master pool: one VM)",
       .meaning = "An Azure pool with a bad name, role, size or count (InfiniBand pools: 100 VMs "
                  "at most; a master pool: one VM). config.yaml's azure: section describes the "
                  "Azure part of a hybrid cluster: the subscription, the network and the VM pools "
                  "paictl install creates. An error: the installer, HiveD or OpenPAI refuses the "
                  "file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Name pools with lower-case letters, digits and `-`; use an Azure size "
              "(`Standard_…`); keep InfiniBand pools at 100 VMs or fewer, one placement group; a "
              "pool with `role: master` has `count: 1`, and only one pool has it.",
       .example = "config.yaml (an InfiniBand pool larger than one placement group):\n  pools:\n   "
                  " - name: gpu\n      sku: Standard_ND96asr_v4\n      count: 120\n      "
                  "machine-type: k80-machine\n\npaictl check config says:\nconfig.yaml:14:14: "
                  "error[A005]: azure.pools[0].count 120 exceeds 100, the size of one placement "
                  "group, which InfiniBand between the VMs needs\n  hint: split the pool into "
                  "several pools of at most 100 VMs"},
      {.code = "A006",
       .name = "two-masters",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "layout.yaml has an on-prem pai-master while an Azure pool has role: master",
       .meaning = "layout.yaml has an on-prem pai-master while an Azure pool has role: master. "
                  "config.yaml's azure: section describes the Azure part of a hybrid cluster: the "
                  "subscription, the network and the VM pools paictl install creates. An error: "
                  "the installer, HiveD or OpenPAI refuses the file or does the wrong thing with "
                  "it, and paictl check config exits 1.",
       .fix = "Keep one master: the Azure pool's VM (drop `pai-master: \"true\"` from the on-prem "
              "host) or the on-prem host (drop `role: master` from the pool). Install writes the "
              "master pool's VM into layout.yaml marked `# azure pool NAME`; that entry is the "
              "master and no finding.",
       .example = "layout.yaml (an on-prem pai-master and an Azure pool with role: master):\n    "
                  "cpu:\n      vcore: 24\nmachine-list:\n  - hostname: pai-master\n    hostip: "
                  "10.0.0.1\n    machine-type: master-machine\npaictl check config "
                  "says:\nlayout.yaml:15:5: error[A006]: \"pai-master\" has pai-master: \"true\" "
                  "but azure pool \"cp\" (config.yaml line 12) has role: master\n  hint: one "
                  "master: set pai-master: \"false\" here, or drop role: master from the pool"},
      {.code = "S001",
       .name = "hived-config-not-string",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "hivedscheduler.config must be a YAML string (config: |)",
       .meaning = "hivedscheduler.config must be a YAML string (config: |). "
                  "services-configuration.yaml configures OpenPAI's services; paictl install "
                  "deploys them with it. An error: the installer, HiveD or OpenPAI refuses the "
                  "file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Write the HiveD config as a block string: `config: |` with the config indented "
              "below it.",
       .example =
           "services-configuration.yaml (hivedscheduler.config written as a "
           "mapping):\nhivedscheduler:\n  config:\n    physicalCluster: {}\n\npaictl check config "
           "says:\nservices-configuration.yaml:3:5: error[S001]: hivedscheduler.config must be a "
           "YAML string holding the HiveD config, found a mapping\n  hint: write it as a block "
           "string: 'config: |' followed by the HiveD config indented below"},
      {.code = "S002",
       .name = "invalid-port",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A service port is not in 1..65535",
       .meaning = "A service port is not in 1..65535. services-configuration.yaml configures "
                  "OpenPAI's services; paictl install deploys them with it. An error: the "
                  "installer, HiveD or OpenPAI refuses the file or does the wrong thing with it, "
                  "and paictl check config exits 1.",
       .fix = "Use a port number between 1 and 65535.",
       .example = "services-configuration.yaml (a webportal port above 65535):\nwebportal:\n  "
                  "server-port: 92860\nhivedscheduler:\n  config: |\npaictl check config "
                  "says:\nservices-configuration.yaml:2:16: error[S002]: webportal.server-port "
                  "must be a port number 1-65535, found the number 92860\n  hint: pick a free TCP "
                  "port; the OpenPAI defaults are in docs/check-config.md"},
      {.code = "S003",
       .name = "schedule-port-range",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "rest-server schedule-port-start is not below schedule-port-end",
       .meaning = "rest-server schedule-port-start is not below schedule-port-end. "
                  "services-configuration.yaml configures OpenPAI's services; paictl install "
                  "deploys them with it. An error: the installer, HiveD or OpenPAI refuses the "
                  "file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Make `schedule-port-start` smaller than `schedule-port-end`.",
       .example =
           "services-configuration.yaml (schedule-port-start above "
           "schedule-port-end):\nrest-server:\n  schedule-port-start: 40000\n  schedule-port-end: "
           "15000\n\npaictl check config says:\nservices-configuration.yaml:2:24: error[S003]: "
           "rest-server schedule-port-start (40000) must be below schedule-port-end (15000)\n  "
           "hint: the defaults are 15000 and 40000"},
      {.code = "S004",
       .name = "invalid-cluster-id",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "cluster-id is not a valid Kubernetes name",
       .meaning = "cluster-id is not a valid Kubernetes name. services-configuration.yaml "
                  "configures OpenPAI's services; paictl install deploys them with it. An error: "
                  "the installer, HiveD or OpenPAI refuses the file or does the wrong thing with "
                  "it, and paictl check config exits 1.",
       .fix = "Use a lower-case RFC 1123 name for `cluster-id`.",
       .example =
           "services-configuration.yaml (a cluster-id with upper case):\ncluster:\n  common:\n    "
           "cluster-id: My_Cluster\n\npaictl check config says:\nservices-configuration.yaml:3:17: "
           "error[S004]: cluster-id \"My_Cluster\" is not a valid Kubernetes name\n  hint: use "
           "lower-case letters, digits and '-' (at most 63); OpenPAI stores it in a configmap"},
      {.code = "H001",
       .name = "unknown-cell-type",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A cell type is not defined in cellTypes",
       .meaning =
           "A cell type is not defined in cellTypes. HiveD reads its config (hivedscheduler.yaml, "
           "or hivedscheduler.config in services-configuration.yaml) once, when it starts: a "
           "mistake stops it from starting, or silently changes what it guarantees to the virtual "
           "clusters. An error: the installer, HiveD or OpenPAI refuses the file or does the wrong "
           "thing with it, and paictl check config exits 1.",
       .fix = "Define the cell type under `cellTypes`, or fix the name (the hint suggests the "
              "closest one).",
       .example =
           "services-configuration.yaml (the same mistake inside services-configuration.yaml: the "
           "outer line is reported):\n          childCellType: K80-NODE\n          "
           "childCellNumber: 2\n      physicalCells:\n      - cellType: K80-POOLS\n        "
           "cellChildren:\n        - cellAddress: pai-worker1\npaictl check config "
           "says:\nservices-configuration.yaml:21:19: error[H001]: physicalCells[0] has cellType "
           "\"K80-POOLS\", which is not defined in cellTypes\n  hint: did you mean \"K80-POOL\"?"},
      {.code = "H002",
       .name = "top-cell-below-node",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A physicalCells entry is below node level",
       .meaning =
           "A physicalCells entry is below node level. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Mark the cell type that is one machine `isNodeLevel: true`; list cells at node "
              "level or above.",
       .example =
           "hivedscheduler.yaml (a chain with no node level):\n      childCellType: K80-NODE\n     "
           " childCellNumber: 2\n  physicalCells:\n  - cellType: K80-POOL\n    cellChildren:\n    "
           "- cellAddress: pai-worker1\npaictl check config says:\nhivedscheduler.yaml:15:15: "
           "error[H002]: physicalCells[0] is a \"K80-POOL\" cell, which is below node level; HiveD "
           "requires a top cell to be node-level or above\n  hint: set isNodeLevel: true on the "
           "cell type that is one machine, and list cells of that type (or above)"},
      {.code = "H003",
       .name = "pinned-cell-not-found",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A VC pins a cell ID that no physical cell has",
       .meaning =
           "A VC pins a cell ID that no physical cell has. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Set that `pinnedCellId` on the physical cell to pin, or fix the ID.",
       .example =
           "hivedscheduler.yaml (a VC pins an ID no cell has):\n    - cellType: "
           "K80-POOL.K80-NODE\n      cellNumber: 2\n    pinnedCells:\n    - pinnedCellId: "
           "no-such-cell\n\npaictl check config says:\nhivedscheduler.yaml:26:21: error[H003]: "
           "virtual cluster \"default\" pins \"no-such-cell\", but no physical cell has that "
           "pinnedCellId\n  hint: set pinnedCellId: no-such-cell on the physical cell to pin"},
      {.code = "H004",
       .name = "leaf-address-not-integer",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A leaf cell address is not an integer GPU index",
       .meaning =
           "A leaf cell address is not an integer GPU index. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Use the GPU index (an integer) as a leaf cell's address.",
       .example = "hivedscheduler.yaml (a GPU address that is not a number):\n      "
                  "cellChildren:\n      - cellAddress: 0\n      - cellAddress: 1\n      - "
                  "cellAddress: gpu2\n      - cellAddress: 3\nvirtualClusters:\npaictl check "
                  "config says:\nhivedscheduler.yaml:23:22: error[H004]: leaf cell address "
                  "\"gpu2\" is not an integer; HiveD reads it as the GPU index\n  hint: use the "
                  "device index, e.g. cellAddress: 0"},
      {.code = "H005",
       .name = "vc-infeasible",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "The virtual clusters need more cells than the chain has at some level",
       .meaning =
           "The virtual clusters need more cells than the chain has at some level. HiveD reads its "
           "config (hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) "
           "once, when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Lower `cellNumber`, or add physical cells to the chain. HiveD applies the same rule "
              "at start-up and refuses to start.",
       .example =
           "hivedscheduler.yaml (VCs ask for more nodes than the pool has):\nvirtualClusters:\n  "
           "default:\n    virtualCells:\n    - cellType: K80-POOL.K80-NODE\n      cellNumber: "
           "3\n\npaictl check config says:\nhivedscheduler.yaml:23:17: error[H005]: virtual "
           "clusters need 3 \"K80-NODE\" cells (level 2 of chain \"K80-POOL\") but only 2 are left "
           "at that level (default: 3)\n  hint: HiveD refuses to start ('Illegal initial VC "
           "assignment: Insufficient physical cells'); lower cellNumber, or add physical cells to "
           "the chain"},
      {.code = "H006",
       .name = "vc-chain-not-found",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A VC uses a chain that has no physical cells",
       .meaning =
           "A VC uses a chain that has no physical cells. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Start the VC's cell type with the top type of a `physicalCells` entry.",
       .example =
           "hivedscheduler.yaml (a VC on a chain with no physical cells):\nvirtualClusters:\n  "
           "default:\n    virtualCells:\n    - cellType: K80-RACK.K80-POOL\n      cellNumber: "
           "2\n\npaictl check config says:\nhivedscheduler.yaml:26:17: error[H006]: virtual "
           "cluster \"default\" uses chain \"K80-RACK\", but no physicalCells entry has that top "
           "cell type\n  hint: HiveD refuses to start ('Chain K80-RACK does not exists in physical "
           "cluster'); the first part must be one of: K80-POOL"},
      {.code = "H007",
       .name = "cell-type-cycle",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "cellTypes contain a cycle (HiveD recurses forever)",
       .meaning =
           "cellTypes contain a cycle (HiveD recurses forever). HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Break the cycle: a chain ends in a leaf type that is not defined under `cellTypes`.",
       .example = "hivedscheduler.yaml (two cell types that contain each other):\n    K80-POOL:\n  "
                  "    childCellType: K80-NODE\n      childCellNumber: 2\n    LOOP-A:\n      "
                  "childCellType: LOOP-B\n      childCellNumber: 2\npaictl check config "
                  "says:\nhivedscheduler.yaml:15:5: error[H007]: cellTypes form a cycle: LOOP-A -> "
                  "LOOP-B -> LOOP-A\n  hint: HiveD would recurse forever at start-up; a chain must "
                  "end in a leaf type that is not defined under cellTypes"},
      {.code = "H008",
       .name = "child-type-typo",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "An undefined childCellType that looks like a typo of a defined type",
       .meaning =
           "An undefined childCellType that looks like a typo of a defined type. HiveD reads its "
           "config (hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) "
           "once, when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. A warning: the file works, but not as it reads.",
       .fix = "A warning: HiveD runs the config with a leaf type of that name (its own design "
              "example has `IB-DGX2-V100-V100`). If it is a typo, fix the spelling; if it is a "
              "leaf type, declare it under `skuTypes` to say so.",
       .example =
           "hivedscheduler.yaml (childCellType misspells a defined type):\n      childCellNumber: "
           "4\n      isNodeLevel: true\n    K80-POOL:\n      childCellType: K80-NDOE\n      "
           "childCellNumber: 2\n  physicalCells:\npaictl check config "
           "says:\nhivedscheduler.yaml:13:22: warning[H008]: childCellType \"K80-NDOE\" of "
           "\"K80-POOL\" is not defined, so HiveD makes it a new leaf cell type (a new SKU); its "
           "name is close to \"K80-NODE\"\n  hint: if you meant \"K80-NODE\", fix the name; if it "
           "is a leaf type, declare it under skuTypes to say so"},
      {.code = "H009",
       .name = "too-many-children",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "More cellChildren than childCellNumber",
       .meaning =
           "More cellChildren than childCellNumber. HiveD reads its config (hivedscheduler.yaml, "
           "or hivedscheduler.config in services-configuration.yaml) once, when it starts: a "
           "mistake stops it from starting, or silently changes what it guarantees to the virtual "
           "clusters. An error: the installer, HiveD or OpenPAI refuses the file or does the wrong "
           "thing with it, and paictl check config exits 1.",
       .fix = "List at most `childCellNumber` children, or raise `childCellNumber`.",
       .example = "hivedscheduler.yaml (a node with five GPU children):\n  - cellType: K80-POOL\n  "
                  "  cellChildren:\n    - cellAddress: pai-worker1\n    - cellAddress: "
                  "pai-worker2\n      cellChildren:\n      - cellAddress: 0\npaictl check config "
                  "says:\nhivedscheduler.yaml:19:7: error[H009]: \"K80-NODE\" cell has 5 "
                  "cellChildren but childCellNumber is 4\n  hint: HiveD does not check this and "
                  "the cell's capacity becomes wrong; fix childCellNumber or the children"},
      {.code = "H010",
       .name = "too-few-children",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "Fewer cellChildren than childCellNumber",
       .meaning = "Fewer cellChildren than childCellNumber. HiveD reads its config "
                  "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) "
                  "once, when it starts: a mistake stops it from starting, or silently changes "
                  "what it guarantees to the virtual clusters. A warning: the file works, but not "
                  "as it reads.",
       .fix = "Describe a machine with a missing device with its own cell type, so the capacity "
              "checks stay right.",
       .example =
           "hivedscheduler.yaml (a pool that lists one node but declares two):\n      "
           "childCellType: K80-NODE\n      childCellNumber: 2\n  physicalCells:\n  - cellType: "
           "K80-POOL\n    cellChildren:\n    - cellAddress: pai-worker1\npaictl check config "
           "says:\nhivedscheduler.yaml:16:5: warning[H010]: \"K80-POOL\" cell has 1 cellChildren "
           "but childCellNumber is 2\n  hint: if a device is missing, describe the machine with "
           "its own cell type; HiveD's capacity checks assume childCellNumber children"},
      {.code = "H011",
       .name = "duplicate-address",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "Two physical cells have the same address",
       .meaning =
           "Two physical cells have the same address. HiveD reads its config (hivedscheduler.yaml, "
           "or hivedscheduler.config in services-configuration.yaml) once, when it starts: a "
           "mistake stops it from starting, or silently changes what it guarantees to the virtual "
           "clusters. An error: the installer, HiveD or OpenPAI refuses the file or does the wrong "
           "thing with it, and paictl check config exits 1.",
       .fix = "Give each cell a distinct address, and each machine one node-level cell per chain.",
       .example = "hivedscheduler.yaml (the same node twice):\n  - cellType: K80-POOL\n    "
                  "cellChildren:\n    - cellAddress: pai-worker1\n    - cellAddress: "
                  "pai-worker1\nvirtualClusters:\n  default:\npaictl check config "
                  "says:\nhivedscheduler.yaml:19:20: error[H011]: duplicate cell address "
                  "\"0/pai-worker1\" (also at line 18)\n  hint: HiveD identifies cells by address; "
                  "give each cell a distinct cellAddress"},
      {.code = "H012",
       .name = "duplicate-pinned-id",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "The same pinnedCellId is on two physical cells",
       .meaning =
           "The same pinnedCellId is on two physical cells. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Give every pinned cell its own ID.",
       .example = "hivedscheduler.yaml (one pinnedCellId on two cells):\n    - cellAddress: "
                  "pai-worker1\n      pinnedCellId: pin-a\n    - cellAddress: pai-worker2\n      "
                  "pinnedCellId: pin-a\nvirtualClusters:\n  default:\npaictl check config "
                  "says:\nhivedscheduler.yaml:21:21: error[H012]: pinnedCellId \"pin-a\" is "
                  "already on another cell (line 19); HiveD keeps only the last one\n  hint: give "
                  "every pinned cell its own ID"},
      {.code = "H013",
       .name = "pinned-cell-shared",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A pinned cell is used by two VCs, or twice",
       .meaning =
           "A pinned cell is used by two VCs, or twice. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Pin a cell in one VC only, once.",
       .example = "hivedscheduler.yaml (two VCs pin the same cell):\n    - pinnedCellId: pin-a\n  "
                  "other:\n    pinnedCells:\n    - pinnedCellId: pin-a\n\npaictl check config "
                  "says:\nhivedscheduler.yaml:30:21: error[H013]: pinned cell \"pin-a\" is already "
                  "pinned by virtual cluster \"default\"\n  hint: a pinned cell belongs to one VC; "
                  "HiveD fails later when it removes the cell twice"},
      {.code = "H014",
       .name = "vc-cell-type-path",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A dotted VC cell type is not a path down its chain",
       .meaning =
           "A dotted VC cell type is not a path down its chain. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Write the path from the chain's top type down, with the chain's own types.",
       .example =
           "hivedscheduler.yaml (an unknown middle segment in a VC cell type):\nvirtualClusters:\n "
           " default:\n    virtualCells:\n    - cellType: K80-POOL.K80-RACK.K80-NODE\n      "
           "cellNumber: 2\n\npaictl check config says:\nhivedscheduler.yaml:23:17: error[H014]: "
           "\"K80-RACK\" in \"K80-POOL.K80-RACK.K80-NODE\" is not a cell type of chain "
           "\"K80-POOL\" (HiveD ignores middle parts, so this goes unnoticed)\n  hint: the chain's "
           "types, top to leaf, are: K80-POOL, K80-NODE, K80"},
      {.code = "H015",
       .name = "invalid-vc-name",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A VC name is not a lower-case Kubernetes name (HiveD accepts it)",
       .meaning =
           "A VC name is not a lower-case Kubernetes name (HiveD accepts it). HiveD reads its "
           "config (hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) "
           "once, when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. A warning: the file works, but not as it reads.",
       .fix = "A warning: HiveD accepts any VC name (its design example uses `VC1`); OpenPAI's "
              "manual asks for lower-case RFC 1123 labels (at most 63 characters).",
       .example = "hivedscheduler.yaml (a VC name with upper case and '_'):\n    - cellAddress: "
                  "pai-worker1\n    - cellAddress: pai-worker2\nvirtualClusters:\n  Team_A:\n    "
                  "virtualCells:\n    - cellType: K80-POOL.K80-NODE\npaictl check config "
                  "says:\nhivedscheduler.yaml:21:3: warning[H015]: virtual cluster name \"Team_A\" "
                  "is not a lower-case Kubernetes name; HiveD accepts it, but OpenPAI's manual "
                  "asks for such names\n  hint: use at most 63 lower-case letters, digits and '-', "
                  "starting and ending with a letter or digit (e.g. \"team-a\")"},
      {.code = "H016",
       .name = "invalid-cell-number",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "childCellNumber is not positive, or cellNumber is negative",
       .meaning =
           "childCellNumber is not positive, or cellNumber is negative. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Use a positive `childCellNumber`, and a `cellNumber` of 0 or more.",
       .example = "hivedscheduler.yaml (childCellNumber 0):\n  cellTypes:\n    K80-NODE:\n      "
                  "childCellType: K80\n      childCellNumber: 0\n      isNodeLevel: true\n    "
                  "K80-POOL:\npaictl check config says:\nhivedscheduler.yaml:10:24: error[H016]: "
                  "cellTypes.K80-NODE.childCellNumber must be between 1 and 1000000, found 0\n  "
                  "hint: childCellNumber is how many K80 cells one K80-NODE holds"},
      {.code = "H017",
       .name = "several-node-levels",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "More than one cell type in a chain has isNodeLevel: true",
       .meaning =
           "More than one cell type in a chain has isNodeLevel: true. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. A warning: the file works, but not as it reads.",
       .fix = "Set `isNodeLevel: true` only on the type that is one machine.",
       .example =
           "hivedscheduler.yaml (isNodeLevel on the node and the pool):\n      childCellType: "
           "K80\n      childCellNumber: 4\n      isNodeLevel: true\n    K80-POOL:\n      "
           "childCellType: K80-NODE\n      childCellNumber: 2\npaictl check config "
           "says:\nhivedscheduler.yaml:12:5: warning[H017]: \"K80-POOL\" and \"K80-NODE\" both "
           "have isNodeLevel: true in chain \"K80-POOL\"; only \"K80-NODE\" is one machine\n  "
           "hint: set isNodeLevel: true only on the cell type that is one machine"},
      {.code = "H018",
       .name = "child-type-mismatch",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A child cell names a cellType other than its parent's childCellType",
       .meaning =
           "A child cell names a cellType other than its parent's childCellType. HiveD reads its "
           "config (hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) "
           "once, when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. A warning: the file works, but not as it reads.",
       .fix = "Remove `cellType` from child cells, or fix the parent's `childCellType`.",
       .example = "hivedscheduler.yaml (a child cell names another type):\n    cellChildren:\n    "
                  "- cellAddress: pai-worker1\n    - cellAddress: pai-worker2\n      cellType: "
                  "K80-POOL\nvirtualClusters:\n  default:\npaictl check config "
                  "says:\nhivedscheduler.yaml:20:17: warning[H018]: this child cell says cellType "
                  "\"K80-POOL\", but its parent's childCellType is \"K80-NODE\"; HiveD uses "
                  "\"K80-NODE\"\n  hint: remove cellType from child cells, or fix the parent's "
                  "childCellType"},
      {.code = "H019",
       .name = "node-address-defaulted",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A node-level cell has no cellAddress, so its node name is an index",
       .meaning =
           "A node-level cell has no cellAddress, so its node name is an index. HiveD reads its "
           "config (hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) "
           "once, when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. A warning: the file works, but not as it reads.",
       .fix = "Set `cellAddress` of node-level cells to the node's hostname.",
       .example = "hivedscheduler.yaml (node cells without addresses):\n      childCellType: "
                  "K80-NODE\n      childCellNumber: 2\n  physicalCells:\n  - cellType: "
                  "K80-POOL\nvirtualClusters:\n  default:\npaictl check config "
                  "says:\nhivedscheduler.yaml:16:5: warning[H019]: node-level cell \"K80-NODE\" "
                  "has no cellAddress, so HiveD takes \"0\" as its Kubernetes node name\n  hint: "
                  "set cellAddress to the node's name (its hostname in layout.yaml)"},
      {.code = "H020",
       .name = "legacy-gpu-types",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "gpuTypes is the old name of skuTypes",
       .meaning = "gpuTypes is the old name of skuTypes. HiveD reads its config "
                  "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) "
                  "once, when it starts: a mistake stops it from starting, or silently changes "
                  "what it guarantees to the virtual clusters. A warning: the file works, but not "
                  "as it reads.",
       .fix = "Rename `gpuTypes` to `skuTypes`.",
       .example = "hivedscheduler.yaml (gpuTypes instead of skuTypes):\nphysicalCluster:\n  "
                  "gpuTypes:\n    K80:\n      gpu: 1\npaictl check config "
                  "says:\nhivedscheduler.yaml:2:3: warning[H020]: gpuTypes is the old name of "
                  "skuTypes\n  hint: rename it to skuTypes; current OpenPAI reads only skuTypes"},
      {.code = "H021",
       .name = "undeclared-sku-type",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A leaf cell type is missing from skuTypes",
       .meaning =
           "A leaf cell type is missing from skuTypes. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix =
           "Declare the leaf type under `skuTypes` with `gpu`, `cpu` and `memory` per leaf cell.",
       .example = "hivedscheduler.yaml (a leaf type missing from skuTypes):\n      memory: 54Gi\n  "
                  "cellTypes:\n    K80-NODE:\n      childCellType: K80\n      childCellNumber: 4\n "
                  "     isNodeLevel: true\npaictl check config says:\nhivedscheduler.yaml:9:22: "
                  "error[H021]: leaf cell type \"K80\" is not declared in skuTypes\n  hint: did "
                  "you mean \"K-80\"? (a leaf type is any childCellType not under cellTypes)"},
      {.code = "H022",
       .name = "invalid-sku-type",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A skuTypes entry has a bad gpu, cpu or memory",
       .meaning =
           "A skuTypes entry has a bad gpu, cpu or memory. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An error: the installer, HiveD or OpenPAI refuses "
           "the file or does the wrong thing with it, and paictl check config exits 1.",
       .fix = "Use a positive number for `cpu`, 0 or 1 for `gpu`, and a quantity such as `54Gi` "
              "for `memory`.",
       .example =
           "hivedscheduler.yaml (skuTypes memory that is not a quantity):\n    K80:\n      gpu: "
           "1\n      cpu: 5\n      memory: 54 gigs\n  cellTypes:\n    K80-NODE:\npaictl check "
           "config says:\nhivedscheduler.yaml:6:15: error[H022]: skuTypes.K80.memory \"54 gigs\" "
           "is not a memory quantity\n  hint: write it like 54Gi or 16384Mi"},
      {.code = "H023",
       .name = "unused-cell-type",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A cell type that no physical cell uses",
       .meaning = "A cell type that no physical cell uses. HiveD reads its config "
                  "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) "
                  "once, when it starts: a mistake stops it from starting, or silently changes "
                  "what it guarantees to the virtual clusters. A warning: the file works, but not "
                  "as it reads.",
       .fix = "Remove the type, or add physical cells that use it.",
       .example = "hivedscheduler.yaml (a cell type no physical cell uses):\n    K80-POOL:\n      "
                  "childCellType: K80-NODE\n      childCellNumber: 2\n    SPARE-NODE:\n      "
                  "childCellType: K80\n      childCellNumber: 8\npaictl check config "
                  "says:\nhivedscheduler.yaml:15:5: warning[H023]: cell type \"SPARE-NODE\" is not "
                  "used by any physical cell\n  hint: remove it, or add physicalCells of a chain "
                  "that contains it"},
      {.code = "H024",
       .name = "vc-capacity-unassigned",
       .severity = Severity::Info,
       .reporter = "check config",
       .title = "Physical capacity that no VC is guaranteed",
       .meaning =
           "Physical capacity that no VC is guaranteed. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. An info: nothing is wrong; paictl -v shows it.",
       .fix = "Nothing to fix: an info. Give the capacity to a VC if it should be guaranteed.",
       .example =
           "hivedscheduler.yaml (one node is not given to any VC (info)):\n      childCellType: "
           "K80-NODE\n      childCellNumber: 2\n  physicalCells:\n  - cellType: K80-POOL\n    "
           "cellChildren:\n    - cellAddress: pai-worker1\npaictl check config "
           "says:\nhivedscheduler.yaml:16:5: info[H024]: 4 of 8 \"K80\" leaf cells in chain "
           "\"K80-POOL\" are not guaranteed to any virtual cluster\n  hint: they still run "
           "opportunistic (priority -1) jobs; give them to a VC to guarantee them"},
      {.code = "H025",
       .name = "no-virtual-clusters",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "The config has no virtualClusters",
       .meaning = "The config has no virtualClusters. HiveD reads its config (hivedscheduler.yaml, "
                  "or hivedscheduler.config in services-configuration.yaml) once, when it starts: "
                  "a mistake stops it from starting, or silently changes what it guarantees to the "
                  "virtual clusters. A warning: the file works, but not as it reads.",
       .fix = "Add `virtualClusters`.",
       .example = "hivedscheduler.yaml (no virtualClusters):\nphysicalCluster:\n  skuTypes:\n    "
                  "K80:\npaictl check config says:\nhivedscheduler.yaml:1:1: warning[H025]: the "
                  "config has no virtualClusters\n  hint: HiveD accepts it, but no job can get "
                  "guaranteed resources; add virtualClusters"},
      {.code = "H026",
       .name = "empty-virtual-cell",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A virtualCells entry with cellNumber: 0 guarantees nothing",
       .meaning =
           "A virtualCells entry with cellNumber: 0 guarantees nothing. HiveD reads its config "
           "(hivedscheduler.yaml, or hivedscheduler.config in services-configuration.yaml) once, "
           "when it starts: a mistake stops it from starting, or silently changes what it "
           "guarantees to the virtual clusters. A warning: the file works, but not as it reads.",
       .fix = "A warning: HiveD accepts `cellNumber: 0` (its own tests use it) and guarantees "
              "nothing. Remove the entry or give the number of cells the VC needs.",
       .example = "hivedscheduler.yaml (a VC entry with cellNumber: 0, as HiveD's own tests write "
                  "it):\n  spare:\n    virtualCells:\n    - cellType: K80-POOL.K80-NODE\n      "
                  "cellNumber: 0\n\npaictl check config says:\nhivedscheduler.yaml:28:19: "
                  "warning[H026]: virtualClusters.spare.virtualCells[0].cellNumber is 0, so the VC "
                  "is guaranteed no K80-POOL.K80-NODE cells\n  hint: remove the entry, or give the "
                  "number of cells the VC needs"},
      {.code = "H027",
       .name = "mixed-level-vc",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A VC holds a large cell beside smaller ones of the same chain",
       .meaning =
           "A VC holds a large cell beside smaller ones of the same chain. HiveD places a small "
           "job of the VC in any of its cells that can hold it, the large cell included, and "
           "never moves it (its intra-VC scheduler has a TODO for this): a later job the size of "
           "the large cell then waits although the VC has that many leaf cells free in its "
           "smaller cells. In the other order both run. A warning: the file works, but the VC's "
           "guarantee can fail for jobs of that size.",
       .fix = "Give the VC cells of one level in the chain: whole nodes (round the share), or "
              "only smaller cells. `paictl plan` plans VCs so by default.",
       .example =
           "hivedscheduler.yaml (a VC holding a node cell beside a leaf cell of the same "
           "chain):\nvirtualClusters:\n  research:\n    virtualCells:\n    - cellType: "
           "K80-POOL.K80-NODE\n      cellNumber: 1\n    - cellType: K80-POOL.K80-NODE.K80\npaictl "
           "check config says:\nhivedscheduler.yaml:23:17: warning[H027]: virtual cluster "
           "\"research\" holds 1 \"K80-NODE\" beside smaller cells (1 \"K80\") in chain "
           "\"K80-POOL\": a job of 4 \"K80\" can wait although the VC has them free, when a "
           "smaller job came first and HiveD placed it in the larger cell\n  hint: give the VC "
           "cells of one level in this chain (e.g. 5 of its smallest type, or whole \"K80-NODE\" "
           "cells); paictl plan plans VCs so by default"},
      {.code = "X001",
       .name = "node-not-in-layout",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A node-level cell address is not a layout.yaml hostname",
       .meaning = "A node-level cell address is not a layout.yaml hostname. The cluster's files "
                  "are checked together: the HiveD cells must name layout.yaml's machines and fit "
                  "their SKUs, and the Azure pools must use its machine types. An error: the "
                  "installer, HiveD or OpenPAI refuses the file or does the wrong thing with it, "
                  "and paictl check config exits 1.",
       .fix = "Use the machine's `layout.yaml` hostname as the node-level `cellAddress`.",
       .example =
           "hivedscheduler.yaml (a node-level address that is no hostname):\n  - cellType: "
           "K80-POOL\n    cellChildren:\n    - cellAddress: pai-worker1\n    - cellAddress: "
           "pai-worker-2\nvirtualClusters:\n  default:\npaictl check config "
           "says:\nhivedscheduler.yaml:19:7: error[X001]: node-level cell address \"pai-worker-2\" "
           "is not a hostname in tests/data/config/cases/X001-node-not-in-layout/layout.yaml\n  "
           "hint: did you mean \"pai-worker2\"?"},
      {.code = "X002",
       .name = "leaf-count-mismatch",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "A node's leaf cells differ from its machine SKU's device count",
       .meaning = "A node's leaf cells differ from its machine SKU's device count. The cluster's "
                  "files are checked together: the HiveD cells must name layout.yaml's machines "
                  "and fit their SKUs, and the Azure pools must use its machine types. An error: "
                  "the installer, HiveD or OpenPAI refuses the file or does the wrong thing with "
                  "it, and paictl check config exits 1.",
       .fix = "Match the node's leaf cells to its SKU's `computing-device` count (or, for CPU "
              "SKUs, at most its vcores).",
       .example = "hivedscheduler.yaml (8 GPU leaves per node on 4-GPU machines):\n  "
                  "physicalCells:\n  - cellType: K80-POOL\n    cellChildren:\n    - cellAddress: "
                  "pai-worker1\n    - cellAddress: pai-worker2\nvirtualClusters:\npaictl check "
                  "config says:\nhivedscheduler.yaml:18:7: error[X002]: node \"pai-worker1\" has 8 "
                  "leaf cells, but its SKU \"k80-machine\" has 4 nvidia.com/gpu devices\n  hint: "
                  "the leaf cells of a node must match its devices one to one; fix childCellNumber "
                  "or the SKU's computing-device count"},
      {.code = "X003",
       .name = "sku-exceeds-machine",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "skuTypes cpu/memory per leaf times leaves exceeds the machine SKU",
       .meaning = "skuTypes cpu/memory per leaf times leaves exceeds the machine SKU. The "
                  "cluster's files are checked together: the HiveD cells must name layout.yaml's "
                  "machines and fit their SKUs, and the Azure pools must use its machine types. An "
                  "error: the installer, HiveD or OpenPAI refuses the file or does the wrong thing "
                  "with it, and paictl check config exits 1.",
       .fix =
           "Lower `skuTypes` cpu or memory per leaf so that a full node fits its machine SKU. The "
           "finding is reported once, at the value to edit; the machine SKU and every node it "
           "affects follow as `note:` lines (`related` in JSON, `relatedLocations` in SARIF).",
       .example =
           "hivedscheduler.yaml (skuTypes cpu per GPU too large for the machine):\n  skuTypes:\n   "
           " K80:\n      gpu: 1\n      cpu: 7\n      memory: 54Gi\n  cellTypes:\npaictl check "
           "config says:\nhivedscheduler.yaml:5:12: error[X003]: skuTypes.K80.cpu gives each node "
           "of machine SKU \"k80-machine\" 28 CPUs (7 CPUs per K80 leaf x 4), more than its 24 "
           "vcores (2 nodes)\n  hint: lower cpu per leaf to at most 6; pods asking for a whole "
           "leaf's share would never fit on the node\nlayout.yaml:6:3: note: machine SKU "
           "\"k80-machine\" has 24 vcores\nhivedscheduler.yaml:18:7: note: node \"pai-worker1\" is "
           "affected\nhivedscheduler.yaml:19:7: note: node \"pai-worker2\" is affected"},
      {.code = "X004",
       .name = "worker-not-scheduled",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "A pai-worker that no HiveD cell covers",
       .meaning = "A pai-worker that no HiveD cell covers. The cluster's files are checked "
                  "together: the HiveD cells must name layout.yaml's machines and fit their SKUs, "
                  "and the Azure pools must use its machine types. A warning: the file works, but "
                  "not as it reads.",
       .fix = "Add a node-level cell for the worker, or drop `pai-worker: \"true\"`.",
       .example = "layout.yaml (a worker no cell covers):\n    hostip: 10.0.0.3\n    machine-type: "
                  "k80-machine\n    pai-worker: \"true\"\n  - hostname: pai-worker3\n    hostip: "
                  "10.0.0.4\n    machine-type: k80-machine\npaictl check config "
                  "says:\nlayout.yaml:27:15: warning[X004]: worker \"pai-worker3\" is not in any "
                  "HiveD cell, so HiveD never schedules on it\n  hint: add a node-level cell with "
                  "cellAddress: pai-worker3 to the HiveD config"},
      {.code = "X005",
       .name = "master-in-cells",
       .severity = Severity::Warning,
       .reporter = "check config",
       .title = "The pai-master appears in the HiveD cells",
       .meaning = "The pai-master appears in the HiveD cells. The cluster's files are checked "
                  "together: the HiveD cells must name layout.yaml's machines and fit their SKUs, "
                  "and the Azure pools must use its machine types. A warning: the file works, but "
                  "not as it reads.",
       .fix = "Remove the master from the HiveD cells.",
       .example = "hivedscheduler.yaml (the master is a HiveD node):\n  - cellType: K80-POOL\n    "
                  "cellChildren:\n    - cellAddress: pai-worker1\n    - cellAddress: "
                  "pai-master\nvirtualClusters:\n  default:\npaictl check config "
                  "says:\nhivedscheduler.yaml:19:7: warning[X005]: node \"pai-master\" is the "
                  "pai-master; OpenPAI runs no jobs there\n  hint: remove it from the HiveD cells, "
                  "or make it a worker"},
      {.code = "X006",
       .name = "mixed-devices-without-hived",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "Several worker device types while the HiveD scheduler is disabled",
       .meaning = "Several worker device types while the HiveD scheduler is disabled. The "
                  "cluster's files are checked together: the HiveD cells must name layout.yaml's "
                  "machines and fit their SKUs, and the Azure pools must use its machine types. An "
                  "error: the installer, HiveD or OpenPAI refuses the file or does the wrong thing "
                  "with it, and paictl check config exits 1.",
       .fix = "Enable the HiveD scheduler, or keep one kind of worker.",
       .example = "config.yaml (two worker device types with HiveD disabled):\nuser: "
                  "openpai\npassword: secret-pw\ndocker_image_tag: v1.8.0\nenable_hived_scheduler: "
                  "false\n\npaictl check config says:\nconfig.yaml:4:1: error[X006]: "
                  "enable_hived_scheduler is false but the workers have 2 device types (cpu, "
                  "nvidia.com/gpu)\n  hint: the Kubernetes default scheduler handles only one "
                  "worker device type; enable the HiveD scheduler or use one kind of worker"},
      {.code = "X007",
       .name = "azure-pool-machine-type",
       .severity = Severity::Error,
       .reporter = "check config",
       .title = "An Azure pool's machine-type is not a machine-sku of layout.yaml",
       .meaning = "An Azure pool's machine-type is not a machine-sku of layout.yaml. The cluster's "
                  "files are checked together: the HiveD cells must name layout.yaml's machines "
                  "and fit their SKUs, and the Azure pools must use its machine types. An error: "
                  "the installer, HiveD or OpenPAI refuses the file or does the wrong thing with "
                  "it, and paictl check config exits 1.",
       .fix = "Use a machine type of `machine-sku` in layout.yaml (`paictl plan` with the profile "
              "`azure-nd96asr-v4` writes one for that size).",
       .example = "config.yaml (an Azure pool whose machine-type is not in layout.yaml):\n    - "
                  "name: gpu\n      sku: Standard_ND96asr_v4\n      count: 2\n      machine-type: "
                  "k80-machin\n\npaictl check config says:\nconfig.yaml:15:21: error[X007]: azure "
                  "pool \"gpu\" has machine-type \"k80-machin\", which is not a machine-sku of "
                  "tests/data/config/cases/X007-azure-pool-machine-type/layout.yaml\n  hint: did "
                  "you mean \"k80-machine\"?"},
  };
  return kCodes;
}

}  // namespace pai::diag::codes_detail

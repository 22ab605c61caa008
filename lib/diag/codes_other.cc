// The codes of the host list (I), the SSH config (SSH), the fact parsers (T), the
// planner (P), the cluster registry (R) and the sweep spec of `simulate sweep` (G).
#include "diag/codes_tables.h"

namespace pai::diag::codes_detail {

using diag::Severity;

const std::vector<CodeInfo>& other_codes() {
  static const std::vector<CodeInfo> kCodes = {
      {.code = "T101",
       .name = "no-topology-matrix",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "No topology matrix",
       .meaning = "The topology file (topo.txt, the output of `nvidia-smi topo -m`) is empty, or "
                  "holds no header line starting with GPU0 (often a driver error message captured "
                  "instead of the matrix).",
       .fix = "Run `nvidia-smi topo -m > topo.txt` on the host again, after the driver works "
              "(`nvidia-smi` lists the GPUs).",
       .example = "topo.txt:1:1: error[T101]: no topology matrix found: no header line starting "
                  "with GPU0"},
      {.code = "T102",
       .name = "bad-matrix-header",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "Unexpected or duplicate header entry in the topology matrix",
       .meaning =
           "The matrix header lists device labels (GPU0, NIC0, mlx5_0) followed by CPU Affinity, "
           "NUMA Affinity and GPU NUMA ID; an entry is none of these, or a label appears twice.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example =
           "topo.txt:1:7: error[T102]: unexpected header entry \"GPUx\" in the topology matrix"},
      {.code = "T103",
       .name = "row-length",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "A matrix row has fewer or more entries than the header has devices",
       .meaning = "Each row of the topology matrix holds one link per device of the header; a row "
                  "with fewer or more entries was cut or edited.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example =
           "topo.txt:3:1: error[T103]: row GPU1 has 3 entries, but the header has 4 devices"},
      {.code = "T104",
       .name = "unknown-row",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "A row for a device the header does not list, or twice",
       .meaning =
           "Every row of the topology matrix starts with one of the header's device labels, once.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "topo.txt:5:1: error[T104]: row \"GPU9\" is not a device of the header"},
      {.code = "T105",
       .name = "unknown-link",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "Unknown link type in the topology matrix",
       .meaning = "A matrix entry is none of the links nvidia-smi prints: X, NV#, PIX, PSB, PXB, "
                  "PHB, NODE, SYS, SOC. The cell hierarchy is derived from these links.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "topo.txt:2:13: error[T105]: unknown link \"FOO\" between GPU0 and GPU1"},
      {.code = "T106",
       .name = "bad-affinity",
       .severity = Severity::Warning,
       .reporter = "plan, facts",
       .title = "CPU Affinity, NUMA Affinity or GPU NUMA ID is not a list or number",
       .meaning = "The affinity columns after the devices are read to group GPUs by socket; a "
                  "value that is not a CPU list (0-23,48-71) or a number is ignored.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "topo.txt:2:40: warning[T106]: CPU Affinity \"zero\" of GPU0 is not a CPU list"},
      {.code = "T107",
       .name = "unknown-column",
       .severity = Severity::Warning,
       .reporter = "plan, facts",
       .title = "Unknown column after the devices",
       .meaning = "The topology matrix has a column after the devices that is neither CPU "
                  "Affinity, NUMA Affinity nor GPU NUMA ID; its values are ignored.",
       .fix = "Nothing to fix if the column comes from a newer nvidia-smi; otherwise capture the "
              "file again.",
       .example = "topo.txt:1:30: warning[T107]: unknown topology matrix column \"Foo\"; its "
                  "values are ignored"},
      {.code = "T108",
       .name = "bad-diagonal",
       .severity = Severity::Warning,
       .reporter = "plan, facts",
       .title = "X off the diagonal, or not X on it",
       .meaning = "A device's link to itself is X in nvidia-smi's matrix, and X appears nowhere "
                  "else; the matrix was edited or mis-captured.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "topo.txt:2:7: warning[T108]: the link of GPU0 to itself is \"NV2\", expected X"},
      {.code = "T109",
       .name = "asymmetric-matrix",
       .severity = Severity::Warning,
       .reporter = "plan, facts",
       .title = "The topology matrix is not symmetric",
       .meaning = "The link from A to B differs from the link from B to A; paictl uses the closer "
                  "of the two.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "topo.txt:3:0: warning[T109]: GPU0-GPU1 is NV2 but GPU1-GPU0 is SYS"},
      {.code = "T110",
       .name = "missing-row",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "A device of the header has no row",
       .meaning = "The matrix was cut short: a device named in the header has no row (an error for "
                  "a GPU, a warning for a NIC).",
       .fix = "Capture the whole output of `nvidia-smi topo -m`.",
       .example = "topo.txt:1:0: error[T110]: device GPU3 is in the header but has no row"},
      {.code = "T111",
       .name = "nic-legend",
       .severity = Severity::Warning,
       .reporter = "plan, facts",
       .title = "The NIC legend does not match the matrix's NIC columns",
       .meaning = "The legend under the matrix (NIC0: mlx5_0) names a device that is not a column, "
                  "or leaves a NIC column unnamed.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "topo.txt:12:3: warning[T111]: the NIC legend names \"NIC7\", which is not a "
                  "column of the matrix"},
      {.code = "T121",
       .name = "not-gpu-csv",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "The GPU list is not nvidia-smi --query-gpu CSV",
       .meaning = "gpus.csv must be the output of `nvidia-smi "
                  "--query-gpu=index,name,memory.total,pci.bus_id,uuid --format=csv`; the file is "
                  "empty or holds something else.",
       .fix = "Capture it with `nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,uuid "
              "--format=csv > gpus.csv`.",
       .example = "gpus.csv:1:1: error[T121]: this is not nvidia-smi --query-gpu CSV output: "
                  "\"NVIDIA-SMI has failed\""},
      {.code = "T122",
       .name = "no-index-column",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "The GPU list has no index column",
       .meaning = "The GPUs are matched to the topology matrix by their index; the CSV header has "
                  "no index column.",
       .fix = "Query the index first: `--query-gpu=index,name,memory.total,pci.bus_id,uuid`.",
       .example = "gpus.csv:1:1: error[T122]: the GPU list has no index column"},
      {.code = "T123",
       .name = "field-count",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "A GPU line has the wrong number of fields",
       .meaning = "A line of the GPU CSV has more or fewer fields than the header.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "gpus.csv:3:1: error[T123]: GPU line has 3 fields, expected 5"},
      {.code = "T124",
       .name = "bad-gpu-index",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "A GPU index is not a number",
       .meaning = "The index column holds 0, 1, 2, ...; a line has something else there.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "gpus.csv:2:1: error[T124]: GPU index \"a\" is not a number"},
      {.code = "T125",
       .name = "bad-gpu-memory",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "A GPU's memory.total cannot be read",
       .meaning = "memory.total is `<number> MiB`; `[N/A]` leaves the GPU's memory unknown (a "
                  "warning), anything else is an error.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "gpus.csv:2:25: warning[T125]: memory.total of GPU line is [N/A]"},
      {.code = "T126",
       .name = "bad-bus-id",
       .severity = Severity::Warning,
       .reporter = "plan, facts",
       .title = "A GPU's pci.bus_id or uuid is malformed",
       .meaning = "pci.bus_id is a PCI address such as 00000000:06:00.0 and uuid starts with GPU-; "
                  "a malformed value is ignored.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "gpus.csv:2:40: warning[T126]: pci.bus_id \"06:00\" is not a PCI address"},
      {.code = "T127",
       .name = "duplicate-gpu-index",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "A GPU index is listed twice",
       .meaning =
           "Two lines of the GPU list have the same index: the file was concatenated or edited.",
       .fix = "Capture the file again from the host (paictl facts collect, or the command named in "
              "the hint) and keep it whole; paictl reports the line and column of what it could "
              "not read.",
       .example = "gpus.csv:4:1: error[T127]: GPU index 1 is listed twice (first at line 3)"},
      {.code = "T128",
       .name = "no-gpus",
       .severity = Severity::Info,
       .reporter = "plan, facts",
       .title = "nvidia-smi found no GPU",
       .meaning = "The GPU list says that nvidia-smi found no GPU on this host; the host is "
                  "planned as a CPU host.",
       .fix = "Nothing to fix for a CPU host; on a GPU host, check the driver (`nvidia-smi`).",
       .example = "gpus.csv:1:1: info[T128]: nvidia-smi found no GPU on this host"},
      {.code = "T131",
       .name = "bad-lscpu-json",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "lscpu -J output is not valid JSON, or has no lscpu list",
       .meaning = "lscpu.txt may hold the text or the JSON (`lscpu -J`) output of lscpu; JSON that "
                  "does not parse, or lacks the lscpu list, cannot be read.",
       .fix = "Capture it again with `lscpu -J`, or use the text output of `lscpu`.",
       .example =
           "lscpu.txt:3:5: error[T131]: lscpu -J output is not valid JSON: expected ',' or '}'"},
      {.code = "T132",
       .name = "no-cpu-count",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "lscpu output has no CPU(s) line",
       .meaning = "The number of logical CPUs (CPU(s):) is what the plan's CPU per leaf cell is "
                  "derived from; the file lacks it, or is not lscpu output.",
       .fix = "Capture the full output of `lscpu`.",
       .example = "lscpu.txt:1:0: error[T132]: lscpu output has no CPU(s) line"},
      {.code = "T133",
       .name = "bad-lscpu-value",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "An lscpu value is not a number, or a line is not key: value",
       .meaning =
           "A numeric lscpu field (CPU(s), Socket(s), Core(s) per socket, ...) holds something "
           "else (an error); a line that is not `key: value` is ignored (a warning).",
       .fix = "Capture the output of `lscpu` again.",
       .example = "lscpu.txt:4:21: error[T133]: CPU(s) is \"many\", expected a number"},
      {.code = "T141",
       .name = "bad-meminfo-line",
       .severity = Severity::Warning,
       .reporter = "plan, facts",
       .title = "A /proc/meminfo line is not Key: value",
       .meaning = "A line of the meminfo file is not `Key: value`; it is ignored.",
       .fix = "Capture the file with `cat /proc/meminfo`.",
       .example =
           "meminfo:7:1: warning[T141]: line \"garbage\" is not \"Key: value\"; it is ignored"},
      {.code = "T142",
       .name = "bad-meminfo-number",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "A /proc/meminfo value is not a number of kB",
       .meaning = "A meminfo value is not `<number> kB`: ignored for other keys (a warning), an "
                  "error for MemTotal and MemAvailable.",
       .fix = "Capture the file with `cat /proc/meminfo`.",
       .example = "meminfo:1:10: error[T142]: MemTotal is not \"<number> kB\""},
      {.code = "T143",
       .name = "no-memtotal",
       .severity = Severity::Error,
       .reporter = "plan, facts",
       .title = "/proc/meminfo has no MemTotal, or it is zero",
       .meaning = "The host's memory size is MemTotal; without it the plan cannot size the SKU.",
       .fix = "Capture the file with `cat /proc/meminfo`.",
       .example = "meminfo:1:0: error[T143]: /proc/meminfo has no MemTotal line"},
      {.code = "T144",
       .name = "no-memavailable",
       .severity = Severity::Info,
       .reporter = "plan, facts",
       .title = "/proc/meminfo has no MemAvailable",
       .meaning = "Kernels older than 3.14 do not report MemAvailable; paictl estimates it as "
                  "MemFree + Buffers + Cached.",
       .fix = "Nothing to fix: an info.",
       .example = "meminfo:0:0: info[T144]: no MemAvailable (kernel older than 3.14); estimated as "
                  "MemFree + Buffers + Cached"},
      {.code = "T151",
       .name = "bad-gpu-health",
       .severity = Severity::Error,
       .reporter = "facts, check hosts, hived health",
       .title =
           "nvidia-smi -q output has a GPU line without a bus id, or a counter that is no count",
       .meaning = "The ECC and page retirement sections of nvidia-smi -q -d ECC,PAGE_RETIREMENT "
                  "hold counts or N/A; a GPU's section starts with its PCI bus id. A value that "
                  "is neither cannot be judged: that counter is left unknown, the rest is read.",
       .fix = "Capture it again with nvidia-smi -q -d ECC,PAGE_RETIREMENT (a driver that "
              "prints another layout is worth a report).",
       .example = "nvidia-smi-q.txt:5:42: error[T151]: Total of GPU 00000000:06:00.0 is \"lots\", "
                  "not a count\n  hint: nvidia-smi prints a count or N/A"},
      {.code = "P001",
       .name = "unreadable-facts",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "A facts directory or file cannot be read, or holds binary data",
       .meaning = "paictl plan reads each host's facts (topo.txt, gpus.csv, lscpu.txt, meminfo, "
                  "host.yaml, or HOST.json from paictl facts collect); one of them cannot be read, "
                  "or is not command output.",
       .fix = "Check the path and its permissions; capture the file again as text.",
       .example = "facts/node1/topo.txt: error[P001]: cannot read facts/node1/topo.txt: Permission "
                  "denied"},
      {.code = "P002",
       .name = "invalid-host-name",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "A host name is not a valid Kubernetes node name",
       .meaning =
           "The facts directory's subdirectory (or host.yaml's hostname) becomes the Kubernetes "
           "node name and the HiveD cell address, so it must be a lower-case RFC 1123 name.",
       .fix = "Name the facts directory after the host in lower case (letters, digits, '-', '.').",
       .example = "facts/Node_1: error[P002]: host name \"Node_1\" is not a valid Kubernetes node "
                  "name\n  hint: name the facts directory after the host in lower case (letters, "
                  "digits, '-', '.'), e.g. node-1"},
      {.code = "P003",
       .name = "bad-host-yaml",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "host.yaml is not valid, or has a bad hostip, rack or roles",
       .meaning = "A host's host.yaml gives its hostip, rack and roles (master, worker); it does "
                  "not parse, a value has the wrong form, or a key is unknown (a warning).",
       .fix =
           "Fix host.yaml at the reported line: `hostip: 10.0.0.2`, `rack: r1`, `roles: [worker]`.",
       .example = "facts/node1/host.yaml:3:8: error[P003]: unknown role \"wroker\""},
      {.code = "P004",
       .name = "no-host-ip",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "A host has no IP address",
       .meaning =
           "layout.yaml needs every host's hostip; neither the facts nor host.yaml give one.",
       .fix = "Add `hostip: <IPv4>` to the host's host.yaml in the facts directory.",
       .example = "facts/node1: error[P004]: host \"node1\" has no IP address\n  hint: add hostip: "
                  "<IPv4> to node1/host.yaml in the facts directory"},
      {.code = "P005",
       .name = "bad-facts-json",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "A facts JSON file is not paictl.facts/v1",
       .meaning = "A HOST.json in a facts directory is read as the output of `paictl facts "
                  "collect`; it does not parse, or is another document.",
       .fix = "Collect the facts again with `paictl facts collect`, or remove the file.",
       .example = "facts/node1.json:1:1: error[P005]: not a paictl facts file (apiVersion is not "
                  "paictl.facts/v1)"},
      {.code = "P006",
       .name = "missing-cpu-memory",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "A host has no lscpu or meminfo facts",
       .meaning = "Without lscpu and meminfo the host's CPUs and memory are unknown, and the SKU "
                  "cannot be sized.",
       .fix = "Save `lscpu > lscpu.txt` and `cat /proc/meminfo > meminfo` in the host's facts "
              "directory.",
       .example = "facts/node1: error[P006]: host \"node1\" has no lscpu facts, so its CPUs and "
                  "memory are unknown"},
      {.code = "P007",
       .name = "gpu-count-disagrees",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "The GPU list and the topology matrix disagree",
       .meaning = "gpus.csv and topo.txt list a different number of GPUs, usually because they "
                  "were captured at different times; the matrix is used for the cell hierarchy, "
                  "the list for the GPU model and memory.",
       .fix = "Capture both at the same time.",
       .example = "facts/node1: warning[P007]: the GPU list of node1 has 8 GPUs but the topology "
                  "matrix has 4"},
      {.code = "P008",
       .name = "duplicate-host",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "A host is planned twice, or two hosts share one IP",
       .meaning = "A host name may appear once across the facts directories and the profiles, and "
                  "each host needs its own IP.",
       .fix = "Remove the duplicate, or give the hosts distinct names and hostip values.",
       .example =
           "facts/node1: error[P008]: host \"node1\" is planned twice (also from facts2/node1)"},
      {.code = "P009",
       .name = "no-hosts",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "No hosts in a facts directory",
       .meaning = "A facts directory holds one subdirectory per host (topo.txt, gpus.csv, "
                  "lscpu.txt, meminfo, host.yaml) or HOST.json files from paictl facts collect; "
                  "this one holds neither.",
       .fix = "Point --facts at the right directory, or collect the facts with `paictl facts "
              "collect`.",
       .example = "facts: error[P009]: no host facts in facts"},
      {.code = "P010",
       .name = "facts-dir-twice",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "The same facts directory is given twice",
       .meaning = "A facts directory named twice on the command line is read once.",
       .fix = "Give each directory once.",
       .example = "facts: warning[P010]: facts directory facts is given twice; it is read once"},
      {.code = "P011",
       .name = "findings-capped",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "A file has more than 20 findings; the rest of its warnings are not shown",
       .meaning = "A fact file with very many findings is probably the output of another command; "
                  "paictl shows the first 20.",
       .fix = "Check that the file is the output of the right command.",
       .example =
           "facts/node1/topo.txt: warning[P011]: 35 more findings in this file are not shown"},
      {.code = "P012",
       .name = "host-override-names-no-host",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "A host.yaml overrides no host of the facts",
       .meaning = "A facts directory DIR/NAME/ holding only host.yaml overrides the host NAME "
                  "names (by its\nfacts file, its hostname or its address). A NAME that no "
                  "host goes by would otherwise\nbecome a second host without hardware.",
       .fix = "Name the directory after a host of the facts (the hint lists them).",
       .example = "facts/gpu-01/host.yaml: error[P012]: host.yaml of \"gpu-01\" overrides no "
                  "host"},
      {.code = "P101",
       .name = "no-master",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "No host is the master, or --master names no planned host",
       .meaning = "OpenPAI has exactly one master; no host.yaml has `roles: [master]`, or --master "
                  "names a host that is not planned.",
       .fix = "Give one host `roles: [master]` in its host.yaml, or pass `--master HOST`.",
       .example = "error[P101]: --master node9 is not one of the planned hosts\n  hint: did you "
                  "mean \"node1\"?"},
      {.code = "P102",
       .name = "several-masters",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "More than one master",
       .meaning = "Several host.yaml files have `roles: [master]`; OpenPAI has exactly one master.",
       .fix = "Keep `roles: [master]` in one host.yaml.",
       .example = "facts/node2: error[P102]: more than one master: node1, node2"},
      {.code = "P103",
       .name = "odd-host",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "A host differs from the others of its SKU",
       .meaning =
           "Hosts with the same GPU model are one SKU; a host that differs (GPU count, CPUs, "
           "memory, topology) is split into its own SKU or excluded, as --odd-hosts says.",
       .fix = "Check the host (a missing GPU, a different BIOS setting); choose --odd-hosts split "
              "or exclude.",
       .example = "facts/node7: warning[P103]: host \"node7\" differs from the 7 hosts of SKU dgx "
                  "(7 GPUs instead of 8); it is left out of the plan (--odd-hosts exclude)"},
      {.code = "P104",
       .name = "level-left-out",
       .severity = Severity::Info,
       .reporter = "plan",
       .title = "A topology level is left out because its groups differ in size",
       .meaning = "HiveD cell types need groups of equal size at each level; a level whose groups "
                  "differ (e.g. 3 and 5 GPUs per socket) is left out of the hierarchy.",
       .fix = "Nothing to fix: an info.",
       .example = "facts/node1: info[P104]: SKU dgx: the socket level is left out: its groups have "
                  "3 and 5 GPUs"},
      {.code = "P105",
       .name = "bad-vc-flag",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "A malformed --vc",
       .meaning = "--vc takes NAME=SHARE, where SHARE is a percentage (40%), a node count (2nodes) "
                  "or a cell count (5).",
       .fix = "Write `--vc a=40%`, `--vc b=2nodes` or `--vc c=5`.",
       .example = "error[P105]: --vc a: expected NAME=SHARE\n  hint: e.g. --vc prod=60%"},
      {.code = "P106",
       .name = "vcs-do-not-fit",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "The virtual clusters do not fit",
       .meaning =
           "The shares given with --vc ask for more nodes or cells of a SKU than the plan has.",
       .fix = "Lower the shares or node counts.",
       .example = "error[P106]: --vc a asks for 9 nodes of SKU dgx, which has 8"},
      {.code = "P107",
       .name = "capacity-to-default",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "Capacity goes to virtual cluster default",
       .meaning = "What no requested virtual cluster gets (the rounding down of percentages, what "
                  "the shares leave) goes to the VC default.",
       .fix = "Give it to a VC with another --vc, or accept the default VC.",
       .example = "warning[P107]: what no requested virtual cluster gets goes to virtual cluster "
                  "default: 2 dgx-node"},
      {.code = "P108",
       .name = "vc-gets-nothing",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "A virtual cluster gets nothing",
       .meaning = "A share rounds to no cell, so the VC is left out of the HiveD config.",
       .fix = "Raise its share.",
       .example = "warning[P108]: virtual cluster c gets no dgx-gpu of SKU dgx (1% of 8 is less "
                  "than one)"},
      {.code = "P109",
       .name = "bad-profile",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "Unknown or unreadable profile, or a bad --count or --racks",
       .meaning = "--profile names a machine profile (`paictl plan --list-profiles`); the name is "
                  "unknown, its files are incomplete, or --count/--racks is out of range.",
       .fix =
           "Pick a profile from `paictl plan --list-profiles`; --count 1..10000, --racks 0..count.",
       .example =
           "error[P109]: unknown machine profile \"dgx-a10\"\n  hint: did you mean \"dgx-a100\"?"},
      {.code = "P111",
       .name = "placeholder-master",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "The plan uses a placeholder master and addresses",
       .meaning = "A plan from profiles only has no real hosts, so it adds a placeholder master "
                  "pai-master (10.0.0.1) and placeholder addresses.",
       .fix = "Replace the placeholders in layout.yaml before installing, or plan from collected "
              "facts.",
       .example = "warning[P111]: the plan has only profile hosts, so it adds a placeholder master "
                  "\"pai-master\" (10.0.0.1, 16 CPUs, 64 GiB); profile hosts get placeholder "
                  "addresses too"},
      {.code = "P112",
       .name = "reserve-too-large",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "Not enough CPUs or memory after the reserve",
       .meaning =
           "paictl reserves CPUs and memory on every worker for the system and OpenPAI's daemons; "
           "a SKU with nothing left (an error), or little (a warning), cannot run jobs.",
       .fix = "Lower --reserve-cpu/--reserve-memory, or leave the host out.",
       .example = "facts/node1: error[P112]: SKU small has 2 CPUs and 4 GiB, nothing left after "
                  "the reserve of 2 CPUs and 8 GiB"},
      {.code = "P113",
       .name = "own-leaf-type",
       .severity = Severity::Info,
       .reporter = "plan",
       .title = "A SKU gets its own leaf cell type",
       .meaning = "The hosts of a SKU cannot give each GPU the CPUs and memory of the common leaf "
                  "type, so the SKU gets a leaf type of its own.",
       .fix = "Nothing to fix: an info.",
       .example =
           "facts/node1: info[P113]: SKU a100-small gets its own leaf cell type a100-small-gpu"},
      {.code = "P114",
       .name = "no-worker",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "No worker: the only host is the master",
       .meaning = "OpenPAI runs no jobs on the master, so a plan of one host has nothing to "
                  "schedule. Exit code 2.",
       .fix = "Add the facts of the worker hosts (paictl facts collect), or `--profile NAME "
              "--count N`.",
       .example = "facts/node1: error[P114]: no worker to plan: the only host (node1) is the "
                  "master, and OpenPAI runs no jobs there"},
      {.code = "P115",
       .name = "vc-cells-blockable",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "A virtual cluster holds a large cell beside smaller ones",
       .meaning = "With --vc-cells any a VC's share of a chain is split into the largest cells "
                  "that fit, e.g. a node and a GPU. HiveD may place a small job of the VC in the "
                  "node cell; a later job the size of the node then waits although the VC has "
                  "that many GPUs free (check config reports such VCs as H027).",
       .fix = "Plan with --vc-cells node (the default): each VC gets whole cells of one level.",
       .example = "warning[P115]: virtual cluster research holds 1 HGX-H100-NODE beside smaller "
                  "cells in chain HGX-H100-RACK (1 HGX-H100-NODE + 1 H100): a job of 8 H100 can "
                  "wait although the VC has that many free, when a smaller job arrived first and "
                  "HiveD placed it in the larger cell"},
      {.code = "P116",
       .name = "capacity-in-no-vc",
       .severity = Severity::Warning,
       .reporter = "plan",
       .title = "Capacity that whole cells of one level leave in no virtual cluster",
       .meaning = "With --vc-cells node the rest of a chain that is not a whole cell of one "
                  "level is given to no VC: only opportunistic jobs (priority -1) use it.",
       .fix = "Choose shares that are whole nodes, or --vc-cells any (which gives it to default "
              "as smaller cells, with warning P115).",
       .example = "warning[P116]: what is left after whole cells of one level is in no virtual "
                  "cluster: 3 A100 GPUs of dgx-a100"},
      {.code = "P120",
       .name = "plan-not-checkable",
       .severity = Severity::Error,
       .reporter = "plan",
       .title = "The plan cannot be written to check it",
       .meaning = "paictl checks every plan it writes with `check config`; it could not create or "
                  "write the temporary directory for that.",
       .fix = "Check TMPDIR (free space, permissions).",
       .example =
           "/tmp: error[P120]: cannot create a temporary directory to check the plan in /tmp"},
      {.code = "I001",
       .name = "bad-host-entry",
       .severity = Severity::Error,
       .reporter = "check hosts, facts collect",
       .title = "A --hosts or --hosts-file entry is not [user@]host[:port]",
       .meaning = "Each entry of --hosts or of the hosts file is one host as [user@]host[:port]; "
                  "an entry is malformed, or the hosts file cannot be read.",
       .fix = "Write one host per line as [user@]host[:port].",
       .example = "hosts.txt:3:0: error[I001]: bad host \"root@@node1\": ...\n  hint: write one "
                  "host per line as [user@]host[:port]"},
      {.code = "I002",
       .name = "no-hosts",
       .severity = Severity::Error,
       .reporter = "check hosts, facts collect",
       .title = "No hosts to check, or both cluster files and --hosts",
       .meaning = "The host list comes either from the cluster's layout.yaml or from "
                  "--hosts/--hosts-file; neither or both were given.",
       .fix =
           "Give the cluster directory, or --hosts; use --limit to check some hosts of a cluster.",
       .example =
           "error[I002]: give either cluster files (PATH) or --hosts/--hosts-file, not both"},
      {.code = "I003",
       .name = "no-layout",
       .severity = Severity::Error,
       .reporter = "check hosts",
       .title = "The cluster files have no layout.yaml, or several clusters were given",
       .meaning = "check hosts reads the host list and the SKUs from one cluster's layout.yaml.",
       .fix = "Give one cluster directory that holds layout.yaml.",
       .example = "cluster: error[I003]: no layout.yaml among the cluster files"},
      {.code = "I004",
       .name = "unknown-limit-host",
       .severity = Severity::Error,
       .reporter = "check hosts",
       .title = "--limit names a host that is not in layout.yaml",
       .meaning = "--limit takes hostnames or hostips of layout.yaml's machine-list.",
       .fix = "Use a name of layout.yaml (the hint suggests the closest one).",
       .example = "error[I004]: --limit names \"node-9\", which is neither a hostname nor a hostip "
                  "in layout.yaml\n  hint: did you mean \"node-1\"?"},
      {.code = "I005",
       .name = "host-twice",
       .severity = Severity::Warning,
       .reporter = "check hosts",
       .title = "A host is listed twice",
       .meaning = "A host appears twice in --hosts or the hosts file; it is checked once.",
       .fix = "Remove the duplicate.",
       .example = "--hosts: warning[I005]: host node1 is listed twice; checked once"},
      {.code = "SSH001",
       .name = "ssh-config-ignored",
       .severity = Severity::Warning,
       .reporter = "check hosts, install",
       .title = "An SSH config line paictl does not follow",
       .meaning = "paictl reads the SSH config (ssh_config of the cluster directory, or "
                  "~/.ssh/config) like OpenSSH for the options it uses; a line it cannot follow "
                  "(an unsupported Match, an Include not followed) is reported and skipped.",
       .fix = "Nothing to fix if the line does not concern the cluster's hosts; otherwise write "
              "the options in a plain Host block.",
       .example = "ssh_config:4:0: warning[SSH001]: Include is not followed here"},
      {.code = "SSH002",
       .name = "ssh-config-syntax",
       .severity = Severity::Error,
       .reporter = "check hosts, install",
       .title = "An SSH config line cannot be read",
       .meaning = "A line of the SSH config is malformed: a keyword without its value, a Host "
                  "without a pattern, Includes nested more than 16 levels.",
       .fix = "Fix the line as OpenSSH would require (`ssh -G HOST -F FILE` shows what OpenSSH "
              "makes of it).",
       .example = "ssh_config:7:0: error[SSH002]: 'Port' needs a value"},
      {.code = "SSH003",
       .name = "ssh-config-unreadable",
       .severity = Severity::Error,
       .reporter = "check hosts, install",
       .title = "The SSH config cannot be read",
       .meaning = "The SSH config named by the cluster directory's ssh_config or by --ssh-config "
                  "exists but cannot be read.",
       .fix = "Check the path and its permissions.",
       .example = "ssh_config: error[SSH003]: cannot read the SSH config: Permission denied"},
      {.code = "R001",
       .name = "registry-syntax",
       .severity = Severity::Error,
       .reporter = "cluster",
       .title = "The cluster registry is not valid YAML",
       .meaning = "The registry (~/.config/paictl/clusters.yaml) that `paictl cluster` keeps does "
                  "not parse; paictl never overwrites a registry it cannot read.",
       .fix = "Fix the file by hand, or move it away and register the clusters again.",
       .example = "clusters.yaml:3:5: error[R001]: YAML syntax error: ..."},
      {.code = "R002",
       .name = "registry-shape",
       .severity = Severity::Error,
       .reporter = "cluster",
       .title = "The cluster registry has a wrong shape",
       .meaning = "The registry is one mapping (apiVersion, current, clusters, preference); a "
                  "value has the wrong type, or the file holds several documents.",
       .fix = "Fix the reported value, or move the file away and register the clusters again.",
       .example = "clusters.yaml:4:3: error[R002]: clusters must be a list"},
      {.code = "R003",
       .name = "registry-mode",
       .severity = Severity::Warning,
       .reporter = "cluster",
       .title = "The cluster registry is readable by other users",
       .meaning = "The registry holds access tokens; its mode lets other users read it. The next "
                  "change paictl makes writes it with 0600.",
       .fix = "chmod 600 the file.",
       .example = "clusters.yaml: warning[R003]: the registry holds access tokens but its mode is "
                  "0644, so other users may read it\n  hint: run: chmod 600 "
                  "~/.config/paictl/clusters.yaml (paictl writes it with 0600)"},
      {.code = "G000",
       .name = "sweep-yaml",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "The sweep spec is not valid YAML",
       .meaning = "The sweep spec (`paictl simulate sweep SPEC`) does not parse, or YAML reading "
                  "warned about it.",
       .fix = "Fix the YAML at the reported position.",
       .example = "sweep.yaml:3:1: error[G000]: ..."},
      {.code = "G001",
       .name = "sweep-unknown-key",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "An unknown key in the sweep spec",
       .meaning = "A key of the sweep spec is none of the keys allowed at its place.",
       .fix = "Fix the spelling (the hint suggests the closest key).",
       .example = "sweep.yaml:2:1: error[G001]: unknown key \"trace\" in the spec\n  hint: did you "
                  "mean \"traces\"?"},
      {.code = "G002",
       .name = "sweep-wrong-type",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "A sweep spec value has the wrong type",
       .meaning = "A value of the sweep spec is not what its key takes (a non-empty string, a "
                  "mapping of options, one YAML mapping for the spec).",
       .fix = "Give the value the type the message names.",
       .example = "sweep.yaml:5:9: error[G002]: options must be a mapping of simulate options, not "
                  "a list"},
      {.code = "G003",
       .name = "sweep-missing",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "The sweep spec has no configs or no traces",
       .meaning =
           "A sweep runs every trace on every cluster config, so it needs at least one of each.",
       .fix = "Add `configs: [examples/clusters/heterogeneous]` and `traces:`.",
       .example = "sweep.yaml:1:1: error[G003]: the spec has no traces:"},
      {.code = "G004",
       .name = "sweep-duration",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "A duration of the sweep spec cannot be read",
       .meaning = "Durations are written as 0, 12h or 7d.",
       .fix = "Write a duration such as 12h or 7d.",
       .example = "sweep.yaml:6:12: error[G004]: warmup \"a day\" is not a duration"},
      {.code = "G005",
       .name = "sweep-no-such-file",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "A config or trace of the sweep spec does not exist",
       .meaning = "configs name cluster directories or HiveD configs, traces name trace files; "
                  "relative paths start at the spec's directory.",
       .fix = "Fix the path.",
       .example = "sweep.yaml:3:5: error[G005]: no such config: clusters/big"},
      {.code = "G006",
       .name = "sweep-duplicate",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "Two configs, traces, policies or load factors have one name",
       .meaning = "The sweep's results are named after its configs and traces, so each needs its "
                  "own name; a policy or load factor listed twice is a mistake.",
       .fix = "Give them names (name:), or remove the duplicate.",
       .example = "sweep.yaml:4:5: error[G006]: two configs are named \"big\""},
      {.code = "G007",
       .name = "sweep-trace-source",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "A trace has both path: and generate:, or neither",
       .meaning =
           "A trace of the sweep is either read from a file (path:) or generated (generate:).",
       .fix = "Keep one of path: and generate:.",
       .example = "sweep.yaml:7:5: error[G007]: a trace has either path: or generate:, not both"},
      {.code = "G008",
       .name = "sweep-unknown-name",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "Unknown trace format or policy",
       .meaning = "Trace formats are philly, helios, alibaba and csv; policies are those of "
                  "`paictl simulate --policy`.",
       .fix = "Use a name the hint lists.",
       .example = "bad.yaml:3:19: error[G008]: unknown policy \"qouta\""},
      {.code = "G009",
       .name = "sweep-bad-value",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "A sweep option or load factor is out of range",
       .meaning = "An option of the sweep (generate options, simulate options, load factors, "
                  "faults) has a value outside its range.",
       .fix = "Use a value in the range the message gives.",
       .example = "bad.yaml:4:8: error[G009]: a load factor must be a number above 0 (1 = the "
                  "trace as recorded)"},
      {.code = "G010",
       .name = "sweep-useless-seeds",
       .severity = Severity::Error,
       .reporter = "simulate sweep",
       .title = "Seeds that change nothing",
       .meaning = "seeds apply to traces with generate: and to random faults; a sweep with neither "
                  "would run the same simulation once per seed.",
       .fix = "Remove seeds:, or generate a trace or add options: {faults: random:...}.",
       .example = "sweep.yaml:9:1: error[G010]: seeds change nothing here: no trace is generated "
                  "and there are no random faults"},
  };
  return kCodes;
}

}  // namespace pai::diag::codes_detail

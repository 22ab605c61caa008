// The command table: every command and subcommand of paictl, once.
//
// Order is help order. A group (an entry without a build function, or one whose
// own options also run, like simulate) comes before its subcommands. The top-level
// help, `paictl help`, the man pages, shell completion and the README check
// (tests/cli/test_commands.sh) are all made from this table.

#include "app.h"

namespace paictl {

namespace {
constexpr const char* kPlanning = "Plan and check a cluster";
constexpr const char* kUsing = "Use clusters and jobs";
constexpr const char* kSimulating = "Simulate schedulers";
constexpr const char* kOther = "Other";
}  // namespace

const std::vector<Command>& command_table() {
  static const std::vector<Command> kCommands = {
      {{"plan"},
       kPlanning,
       "Plan SKUs, layout.yaml, HiveD cells and virtual clusters from hardware facts or machine "
       "profiles",
       {"paictl plan examples/facts --vc research=60% --vc prod=40% --out cluster/ --diagram "
        "cluster/plan.svg",
        "paictl plan --profile dgx-a100 --count 16 --racks 2 --vc a=50% --vc b=dgx-a100:4nodes -o "
        "yaml",
        "paictl plan --facts facts/ --odd-hosts exclude --out cluster/ --dry-run"},
       build_plan},
      {{"check"},
       kPlanning,
       "Validate cluster files, hosts and job files before they reach an installer or a scheduler",
       {"paictl check config cluster/", "paictl check hosts cluster/ --parallel 128",
        "paictl check job jobs/*.yaml"}},
      {{"check", "config"},
       nullptr,
       "Validate layout.yaml, config.yaml, services-configuration.yaml and HiveD configs: every "
       "finding in one pass, with file:line:col",
       {"paictl check config examples/clusters/quickstart",
        "paictl check config -o json cluster/layout.yaml cluster/services-configuration.yaml",
        "paictl check config --junit report.xml --sarif report.sarif --fail-on-warn cluster/"},
       build_check_config},
      {{"check", "hosts"},
       nullptr,
       "Check every host over SSH before installing: SKU hardware, Docker and NVIDIA runtime, "
       "ports, swap, leftovers, clocks",
       {"paictl check hosts examples/clusters/quickstart",
        "paictl check hosts --hosts root@10.0.0.5,10.0.0.6:2222 --host-key-policy accept-new -o "
        "json",
        "paictl check hosts cluster/ --ignore-check-errors Swap,Port-80 --junit hosts.xml "
        "--parallel 200"},
       build_check_hosts},
      {{"check", "job"},
       nullptr,
       "Validate job protocol v2 files as the OpenPAI rest-server does, plus known pitfalls",
       {"paictl check job examples/jobs/pytorch-mnist.yaml", "paictl check job -o json jobs/*.yaml",
        "paictl check job --sarif jobs.sarif --fail-on-warn jobs/*.yaml"},
       build_check_job},
      {{"facts"},
       kPlanning,
       "Collect hardware and software facts from hosts",
       {"paictl facts collect cluster/ --out facts/"}},
      {{"facts", "collect"},
       nullptr,
       "Gather hardware and software facts from hosts over SSH and save them as JSON for the "
       "planner",
       {"paictl facts collect cluster/ --out facts/ && paictl plan --facts facts/",
        "paictl facts collect --hosts 10.0.0.5,10.0.0.6 -o json > facts.json",
        "paictl facts collect cluster/ --limit gpu-worker-3 -o json"},
       build_facts_collect},
      {{"cluster"},
       kUsing,
       "Register OpenPAI clusters and see their capacity",
       {"paictl cluster add lab --uri https://pai.lab.example.com --user alice --password-stdin",
        "paictl cluster list", "paictl cluster status --all"}},
      {{"cluster", "add"},
       nullptr,
       "Register an OpenPAI cluster: probe it, sign in, store a token at mode 0600",
       {"pass show pai/lab | paictl cluster add lab --uri https://pai.lab.example.com --user alice "
        "--password-stdin",
        "paictl cluster add cloud --uri https://pai.cloud.example.com --token-file "
        "/run/secrets/pai-token",
        "paictl cluster add dev --uri https://10.0.0.5 --ca-file dev-ca.pem --user bob "
        "--password-stdin < pw.txt"},
       build_cluster_add},
      {{"cluster", "list"},
       nullptr,
       "List registered clusters: URI, user, version, auth, reachable",
       {"paictl cluster list", "paictl cluster list -o json --no-probe",
        "PAICTL_CONFIG=team-clusters.yaml paictl cluster list"},
       build_cluster_list},
      {{"cluster", "use"},
       nullptr,
       "Make a registered cluster the current one",
       {"paictl cluster use lab", "paictl cluster use cloud && paictl job list"},
       build_cluster_use},
      {{"cluster", "remove"},
       nullptr,
       "Forget a registered cluster and its stored token",
       {"paictl cluster remove old-lab", "paictl cluster remove dev -q"},
       build_cluster_remove},
      {{"cluster", "status"},
       nullptr,
       "Capacity of clusters per virtual cluster (guaranteed, used, free) and SKU types",
       {"paictl cluster status", "paictl cluster status --all",
        "paictl cluster status lab -o json"},
       build_cluster_status},
      {{"cluster", "prefer"},
       nullptr,
       "Set the preference order used by --cluster auto",
       {"paictl cluster prefer lab cloud", "paictl cluster prefer",
        "paictl cluster prefer --clear"},
       build_cluster_prefer},
      {{"job"},
       kUsing,
       "Validate, render, submit and follow OpenPAI jobs",
       {"paictl job validate job.yaml", "paictl job submit job.yaml --cluster auto --dry-run",
        "paictl job list --all-clusters"}},
      {{"job", "validate"},
       nullptr,
       "Validate job files offline: the server's schema and checks, plus pitfalls",
       {"paictl job validate examples/jobs/pytorch-mnist.yaml",
        "paictl job validate --param epochs=20 --vc research job.yaml",
        "paictl job validate --junit job-report.xml jobs/*.yaml"},
       build_job_validate},
      {{"job", "render"},
       nullptr,
       "Show each task role's commands exactly as the server renders them (offline)",
       {"paictl job render examples/jobs/pytorch-mnist.yaml",
        "paictl job render examples/jobs/pytorch-mnist.yaml --param epochs=20 --export-params",
        "paictl job render -o json --task-role worker examples/jobs/distributed-tensorflow.yaml"},
       build_job_render},
      {{"job", "submit"},
       nullptr,
       "Check a job against a cluster (or pick one with --cluster auto) and submit it",
       {"paictl job submit examples/jobs/pytorch-mnist.yaml --cluster lab",
        "paictl job submit job.yaml --cluster auto --dry-run",
        "paictl job submit job.yaml --name run-42 --param lr=0.01 --wait"},
       build_job_submit},
      {{"job", "list"},
       nullptr,
       "List jobs of one or all registered clusters",
       {"paictl job list", "paictl job list --all-clusters --state RUNNING,WAITING",
        "paictl job list --cluster lab --all-users --vc research -o json"},
       build_job_list},
      {{"job", "status"},
       nullptr,
       "Show a job: state, tasks, nodes, GPUs, retries, exit reason",
       {"paictl job status pytorch_mnist", "paictl job status bob~run-7 --cluster lab --attempts",
        "paictl job status run-42 -o yaml"},
       build_job_status},
      {{"job", "stop"},
       nullptr,
       "Stop jobs",
       {"paictl job stop pytorch_mnist", "paictl job stop alice~run-41 alice~run-42 --cluster lab",
        "paictl job stop run-43 --wait --wait-interval 2"},
       build_job_stop},
      {{"job", "logs"},
       nullptr,
       "Print a task's stdout/stderr log",
       {"paictl job logs pytorch_mnist",
        "paictl job logs tf_distributed_cifar10 --task-role worker --index 3 --stream stderr "
        "--tail",
        "paictl job logs alice~run-42 --cluster lab --urls"},
       build_job_logs},
      {{"job", "wait"},
       nullptr,
       "Wait for a job to end (exit code: 0 succeeded, 1 failed)",
       {"paictl job wait pytorch_mnist", "paictl job wait alice~run-42 --timeout 3600 && echo done",
        "paictl job wait run-42 --interval 30 -o json"},
       build_job_wait},
      {{"job", "tag"},
       nullptr,
       "Add or remove tags of a job",
       {"paictl job tag add run-42 baseline", "paictl job tag remove run-42 baseline"}},
      {{"job", "tag", "add"},
       nullptr,
       "Add tags to a job",
       {"paictl job tag add run-42 baseline best-lr"},
       build_job_tag_add},
      {{"job", "tag", "remove"},
       nullptr,
       "Remove tags from a job",
       {"paictl job tag remove alice~run-42 best-lr --cluster lab"},
       build_job_tag_remove},
      {{"simulate"},
       kSimulating,
       "Replay job traces on a cluster with HiveD and baseline schedulers",
       {"paictl simulate --config examples/clusters/heterogeneous --trace "
        "examples/traces/philly-small.json --policy hived,quota --report out/sim",
        "paictl simulate --config cluster/ --trace cluster_log.csv --trace-format helios --policy "
        "hived,quota,private -o json",
        "paictl simulate generate --jobs 100000 --seed 7 --cluster-out philly/ --out "
        "philly/trace.json"},
       build_simulate},
      {{"simulate", "run"},
       nullptr,
       "Replay a job trace with HiveD and baseline policies and compare them (the same as "
       "'paictl simulate')",
       {"paictl simulate run --config examples/clusters/heterogeneous --trace "
        "examples/traces/philly-small.json --policy hived,quota,private"},
       build_simulate_run},
      {{"simulate", "generate"},
       nullptr,
       "Make seeded Philly-like traces and Philly-shaped clusters",
       {"paictl simulate generate --jobs 100000 --seed 7 --cluster-out philly/ --out "
        "philly/trace.json",
        "paictl simulate generate --config examples/clusters/heterogeneous --jobs 2000 --out "
        "trace.json",
        "paictl simulate generate --jobs 5000 --opportunistic 0.2 --format csv --out trace.csv"},
       build_simulate_generate},
      {{"help"},
       kOther,
       "Show the help of paictl or of a command",
       {"paictl help", "paictl help check config", "paictl help job submit"},
       build_help},
      {{"version"},
       kOther,
       "Show paictl's version, commit, build type and library versions",
       {"paictl version", "paictl version -o json"},
       build_version},
      {{"__commands"},
       nullptr,
       "List every command path, one a line",
       {},
       build_internal_commands,
       true},
  };
  return kCommands;
}

std::string command_line(const std::vector<std::string>& path) {
  std::string s = "paictl";
  for (const auto& p : path) s += " " + p;
  return s;
}

}  // namespace paictl

// Job files and clusters:
//   - validating 1,000 job files (budget: 1 s), and one file's parse, check and render;
//   - `paictl cluster status --all` over 10 clusters against
//     `paictl cluster status` of the slowest one alone (budget: 1.5x), with the
//     REST test servers answering after 25, 50, ..., 250 ms.
//   cmake -DPAI_BUILD_BENCHMARKS=ON ... && ./tests/bench/bench_job
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "../integration/rest/test_server.h"
#include "job/job_file.h"
#include "job/render.h"
#include "job/validate.h"

extern char** environ;

namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// 1,000 files: the examples, renamed and with their numbers changed.
struct JobFiles {
  std::string dir = pai::testing::make_temp_dir("bench-jobs");
  std::vector<std::string> paths;
  JobFiles() {
    std::vector<std::string> bases;
    for (const char* n : {"pytorch-mnist", "distributed-tensorflow", "private-registry"})
      bases.push_back(slurp(std::string(PAI_SOURCE_DIR) + "/examples/jobs/" + n + ".yaml"));
    for (int i = 0; i < 1000; ++i) {
      std::string text = bases[i % bases.size()];
      size_t name = text.find("\nname: ");
      text.insert(name + 7, "v" + std::to_string(i) + "_");
      std::string p = dir + "/job-" + std::to_string(i) + ".yaml";
      std::ofstream(p) << text;
      paths.push_back(p);
    }
  }
  ~JobFiles() { pai::testing::remove_tree(dir); }
};

JobFiles& job_files() {
  static JobFiles f;
  return f;
}

void BM_ValidateThousandFiles(benchmark::State& state) {
  const auto& paths = job_files().paths;  // written before the timing
  for (auto _ : state) {
    pai::job::CheckOutcome out = pai::job::check_files(paths);
    if (out.diagnostics.has_errors()) state.SkipWithError("the generated files should be valid");
    benchmark::DoNotOptimize(out.files.size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(paths.size()));
}
BENCHMARK(BM_ValidateThousandFiles)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ParseValidateOneFile(benchmark::State& state) {
  std::string text = slurp(std::string(PAI_SOURCE_DIR) + "/examples/jobs/pytorch-mnist.yaml");
  for (auto _ : state) {
    pai::job::JobFile f = pai::job::JobFile::parse(text, "job.yaml");
    pai::diag::List out;
    pai::job::validate(f, out);
    benchmark::DoNotOptimize(out.size());
  }
}
BENCHMARK(BM_ParseValidateOneFile)->Unit(benchmark::kMicrosecond);

void BM_RenderOneFile(benchmark::State& state) {
  pai::job::JobFile f = pai::job::JobFile::parse(
      slurp(std::string(PAI_SOURCE_DIR) + "/examples/jobs/pytorch-mnist.yaml"), "job.yaml");
  pai::job::Overrides o;
  o.export_params = true;
  for (auto _ : state) {
    pai::job::RenderResult r = pai::job::render(f, o);
    benchmark::DoNotOptimize(r.task_roles.size());
  }
}
BENCHMARK(BM_RenderOneFile)->Unit(benchmark::kMicrosecond);

// --- cluster status over 10 clusters ------------------------------------------------

struct Clusters {
  std::vector<std::unique_ptr<pai::testing::RestServer>> servers;
  std::string config = pai::testing::make_temp_dir("bench-registry");
  std::string paictl;
  Clusters() {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    std::string dir = exe;
    dir = dir.substr(0, dir.rfind('/'));  // tests/bench
    paictl = dir + "/../../paictl";
    nlohmann::json lab = nlohmann::json::parse(
        slurp(std::string(PAI_SOURCE_DIR) + "/tests/integration/rest/scenarios/lab.json"));
    std::string token = lab["users"]["alice"]["tokens"][0];
    std::string reg = "clusters:\n";
    for (int i = 1; i <= 10; ++i) {
      servers.push_back(std::make_unique<pai::testing::RestServer>(
          "lab", std::vector<std::string>{"--latency-ms", std::to_string(25 * i)}));
      reg += "- name: c" + std::to_string(i) + "\n  uri: " + servers.back()->uri() +
             "\n  restServer: " + servers.back()->rest() + "\n  user: alice\n  token: " + token +
             "\n";
    }
    std::string d = config + "/paictl";
    mkdir(d.c_str(), 0700);
    std::ofstream(d + "/clusters.yaml") << reg;
    chmod((d + "/clusters.yaml").c_str(), 0600);
  }
  ~Clusters() { pai::testing::remove_tree(config); }
  int run(const std::vector<std::string>& args) {
    std::vector<std::string> env = {"XDG_CONFIG_HOME=" + config, "HOME=" + config,
                                    "PATH=/usr/bin:/bin"};
    std::vector<char*> envp, argv;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> a = {paictl, "-q", "cluster", "status"};
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("-o");
    a.push_back("json");
    for (auto& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) return -1;
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

Clusters& clusters() {
  static Clusters c;
  return c;
}

void BM_ClusterStatusSlowestAlone(benchmark::State& state) {
  clusters();  // start the servers outside the timing
  for (auto _ : state)
    if (clusters().run({"c10"}) != 0) state.SkipWithError("paictl cluster status failed");
}
BENCHMARK(BM_ClusterStatusSlowestAlone)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(10);

void BM_ClusterStatusAllTen(benchmark::State& state) {
  clusters();
  for (auto _ : state)
    if (clusters().run({"--all"}) != 0) state.SkipWithError("paictl cluster status --all failed");
}
BENCHMARK(BM_ClusterStatusAllTen)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(10);

}  // namespace

BENCHMARK_MAIN();

// paictl certs check|renew as use cases on the scripted transport: the
// certificates read in one session per host, the renewal's steps in order
// (kubeadm certs renew all, the restart, the fetch of admin.conf at 0600, the
// verification), a killed run resumed without renewing twice, a failed
// restart that stops the run and is resumed, a dry run that changes nothing.
#include "deploy/certs_renew.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>

#include "deploy/certs_json.h"
#include "deploy/journal.h"
#include "test_files.h"
#include "usecase_fixture.h"

namespace pai::deploy {
namespace {

using namespace usecase_test;

std::string renew_data(const std::string& name) {
  return test::slurp(std::string(PAI_TEST_DATA) + "/certs/" + name);
}

// The master's listing with `apiserver` as its apiserver certificate, and the
// kubelet's on a worker.
std::string renew_master_listing(const std::string& apiserver) {
  std::string conf = renew_data("admin.conf");
  size_t at = conf.find("    client-certificate-data:");
  return "@@paictl-cert file /etc/kubernetes/pki/ca.crt\n" + renew_data("ca.crt") +
         "@@paictl-cert file /etc/kubernetes/pki/apiserver.crt\n" + renew_data(apiserver) +
         "@@paictl-cert kubeconfig /etc/kubernetes/admin.conf\nusers:\n- name: kubernetes-admin\n" +
         conf.substr(at, conf.find('\n', at) - at + 1) + "@@paictl-cert end\n";
}

std::string renew_worker_listing() {
  return "@@paictl-cert file /var/lib/kubelet/pki/kubelet-client-current.pem\n" +
         renew_data("admin-client.crt") + "@@paictl-cert end\n";
}

// A master whose apiserver certificate has 20 days left until kubeadm renews it.
struct RenewHosts {
  testing::ScriptedTransport ssh;
  std::atomic<int> renewed{0};
  explicit RenewHosts(bool restart_fails = false) {
    ssh.on("kubelet-client-current.pem", {.out = renew_worker_listing()});
    ssh.on("/etc/kubernetes/pki", [this](const testing::ScriptedCall&) {
      return testing::ScriptedAnswer{
          .out = renew_master_listing(renewed > 0 ? "apiserver.crt" : "apiserver-20d.crt")};
    });
    ssh.on("kubeadm certs renew all", [this](const testing::ScriptedCall&) {
      ++renewed;
      return testing::ScriptedAnswer{.out =
                                         "certificate for serving the Kubernetes API renewed\n"
                                         "Done renewing certificates.\n"};
    });
    if (restart_fails)
      ssh.on("manifests.paictl-restart",
             {.err = "the API server does not answer 300 s after its manifest came back\n",
              .exit_status = 1});
    else
      ssh.on("manifests.paictl-restart",
             {.out = "the control plane stopped within 1 s and answered again within 2 s\n"});
    ssh.on("cat /etc/kubernetes/admin.conf", {.out = renew_data("admin.conf")});
  }
};

CertsRenewDeps renew_deps(const TempCluster& c, testing::ScriptedTransport& ssh, int64_t now) {
  CertsRenewDeps d;
  d.load_hosts = loader_of(c.dir());
  d.transport = [&ssh](const remote::Secret&) -> std::unique_ptr<remote::Transport> {
    return std::make_unique<SharedTransport>(ssh);
  };
  d.wall_clock = [now] { return now; };
  return d;
}

int64_t renew_now() {
  auto c = check::parse_certificate_pem(renew_data("apiserver-20d.crt"), 0);
  return c.ok() ? c->not_before + 60 : 0;
}

CertsRenewRequest renew_request(const TempCluster& c) {
  CertsRenewRequest r;
  r.cluster_dir = c.dir();
  r.yes = true;
  return r;
}

TEST(CertsCheckUseCase, ReadsEveryHostOnceAndJudges) {
  TempCluster c;
  RenewHosts h;
  h.ssh.unreachable("pai-worker2");
  auto got = check_certs(renew_request(c), renew_deps(c, h.ssh, renew_now()));
  ASSERT_TRUE(got.ok()) << got.error().error.message;
  EXPECT_EQ(h.ssh.calls_to("pai-master").size(), 1u);
  EXPECT_EQ(h.ssh.calls_to("pai-worker1").size(), 1u);
  ASSERT_EQ(got->report.certs.size(), 4u);
  std::vector<std::string> codes;
  for (const auto& d : got->findings.items()) codes.push_back(d.code + " " + d.file);
  std::vector<std::string> want = {"K101 pai-master:/etc/kubernetes/pki/apiserver.crt",
                                   "K103 pai-worker2"};
  EXPECT_EQ(codes, want);
}

TEST(CertsRenewUseCase, RenewsRestartsFetchesAndVerifies) {
  TempCluster c;
  RenewHosts h;
  auto plan = plan_certs_renew(renew_request(c), renew_deps(c, h.ssh, renew_now()));
  ASSERT_TRUE(plan.ok()) << plan.error().error.message;
  ASSERT_EQ(plan->steps.size(), 3u);
  EXPECT_EQ(plan->steps[0].kind, CertsRenewStep::Kind::Renew);
  EXPECT_EQ(plan->steps[1].kind, CertsRenewStep::Kind::Restart);
  EXPECT_EQ(plan->steps[2].kind, CertsRenewStep::Kind::Fetch);
  EXPECT_EQ(plan->steps[0].host, "pai-master");
  EXPECT_TRUE(plan->resumed.empty());
  ASSERT_EQ(plan->findings.size(), 1u);
  EXPECT_EQ(plan->findings.items()[0].code, "K101");
  EXPECT_FALSE(h.ssh.ran("kubeadm certs renew"));  // the plan changes nothing

  std::vector<CertsRenewEvent::Kind> events;
  CertsRenewCallbacks cb;
  cb.on_event = [&](const CertsRenewEvent& e) { events.push_back(e.kind); };
  auto out = apply_certs_renew(*plan, cb);
  ASSERT_EQ(out.end, CertsRenewOutcome::End::Renewed)
      << (out.error ? out.error->error.message : "");
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(h.renewed.load(), 1);
  EXPECT_TRUE(out.findings_after.empty());
  // In order on the master: renew, restart, fetch, then the read again.
  std::vector<std::string> order;
  for (const auto& call : h.ssh.calls_to("pai-master")) {
    if (call.script.find("kubeadm certs renew all") != std::string::npos) order.push_back("renew");
    if (call.script.find("manifests.paictl-restart") != std::string::npos)
      order.push_back("restart");
    if (call.script.find("cat /etc/kubernetes/admin.conf") != std::string::npos)
      order.push_back("fetch");
    if (call.script.find("@@paictl-cert end") != std::string::npos) order.push_back("read");
  }
  std::vector<std::string> want = {"read", "renew", "restart", "fetch", "read"};
  EXPECT_EQ(order, want);
  // admin.conf (it holds a key): in .paictl at 0600, never in an event.
  struct stat st;
  ASSERT_EQ(::stat(c.path(".paictl/admin.conf").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(c.read(".paictl/admin.conf"), renew_data("admin.conf"));
  EXPECT_FALSE(out.admin_conf_expires.empty());
  EXPECT_EQ(certs_renew_json(*plan, &out).dump().find("client-key-data"), std::string::npos);
  EXPECT_EQ(events.back(), CertsRenewEvent::Kind::Verifying);
  // The journal: each step started and ended, and the run done.
  auto records = read_journal(plan->journal);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 7u);
  EXPECT_EQ((*records)[6]["event"], "done");
  // The next run is a new one: it renews again.
  auto again = plan_certs_renew(renew_request(c), renew_deps(c, h.ssh, renew_now()));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->resumed.empty());
  EXPECT_FALSE(again->steps[0].skip);
}

TEST(CertsRenewUseCase, AFailedRestartStopsAndTheNextRunResumesWithoutRenewingTwice) {
  TempCluster c;
  {
    RenewHosts h(true);
    auto plan = plan_certs_renew(renew_request(c), renew_deps(c, h.ssh, renew_now()));
    ASSERT_TRUE(plan.ok());
    auto out = apply_certs_renew(*plan, {});
    ASSERT_EQ(out.end, CertsRenewOutcome::End::Failed);
    ASSERT_TRUE(out.failed_step);
    EXPECT_EQ(out.failed_step->kind, CertsRenewStep::Kind::Restart);
    EXPECT_NE(out.error->error.message.find("does not answer 300 s"), std::string::npos)
        << out.error->error.message;
    EXPECT_EQ(h.renewed.load(), 1);
    EXPECT_FALSE(h.ssh.ran("cat /etc/kubernetes/admin.conf"));
  }
  RenewHosts h;
  h.renewed = 1;  // the hosts keep what the first run renewed
  auto plan = plan_certs_renew(renew_request(c), renew_deps(c, h.ssh, renew_now()));
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->resumed.empty());
  EXPECT_TRUE(plan->steps[0].skip);
  EXPECT_FALSE(plan->steps[1].skip);
  auto out = apply_certs_renew(*plan, {});
  ASSERT_EQ(out.end, CertsRenewOutcome::End::Renewed);
  EXPECT_TRUE(out.verified);
  EXPECT_FALSE(h.ssh.ran("kubeadm certs renew"));
  EXPECT_TRUE(h.ssh.ran("manifests.paictl-restart"));
}

TEST(CertsRenewUseCase, AKilledRestartIsFinishedFirst) {
  TempCluster c;
  // What a run killed during its restart left in the journal.
  {
    Journal j;
    ASSERT_TRUE(j.open(c.path(".paictl/certs.journal")).ok());
    for (auto [event, step, result] :
         {std::tuple{"start", "renew", ""}, std::tuple{"end", "renew", "ok"},
          std::tuple{"start", "restart", ""}}) {
      nlohmann::json r = {{"operation", "certs-renew"},
                          {"run", "run-1"},
                          {"event", event},
                          {"step", step},
                          {"host", "pai-master"}};
      if (*result) r["result"] = result;
      ASSERT_TRUE(j.append(r).ok());
    }
  }
  RenewHosts h;
  auto plan = plan_certs_renew(renew_request(c), renew_deps(c, h.ssh, renew_now()));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->resumed, "run-1");
  EXPECT_EQ(plan->run_id, "run-1");
  EXPECT_TRUE(plan->steps[0].skip);
  EXPECT_NE(plan->steps[1].note.find("put back first"), std::string::npos);
}

TEST(CertsRenewUseCase, DryRunChangesNothing) {
  TempCluster c;
  RenewHosts h;
  CertsRenewRequest r = renew_request(c);
  r.dry_run = true;
  auto plan = plan_certs_renew(r, renew_deps(c, h.ssh, renew_now()));
  ASSERT_TRUE(plan.ok());
  auto out = apply_certs_renew(*plan, {});
  EXPECT_EQ(out.end, CertsRenewOutcome::End::DryRun);
  EXPECT_FALSE(h.ssh.ran("kubeadm"));
  EXPECT_FALSE(h.ssh.ran("manifests.paictl-restart"));
  EXPECT_FALSE(::access(c.path(".paictl/certs.journal").c_str(), F_OK) == 0);
}

TEST(CertsRenewUseCase, NotConfirmedChangesNothing) {
  TempCluster c;
  RenewHosts h;
  CertsRenewRequest r = renew_request(c);
  r.yes = false;
  auto plan = plan_certs_renew(r, renew_deps(c, h.ssh, renew_now()));
  ASSERT_TRUE(plan.ok());
  CertsRenewCallbacks cb;
  cb.confirm = [](const CertsRenewPlan&) { return Answer::NoTerminal; };
  EXPECT_EQ(apply_certs_renew(*plan, cb).end, CertsRenewOutcome::End::NoTerminal);
  EXPECT_EQ(apply_certs_renew(*plan, {}).end, CertsRenewOutcome::End::Declined);
  EXPECT_FALSE(h.ssh.ran("kubeadm"));
}

TEST(CertsRenewUseCase, TheRestartPutsTheManifestsBackAndWaitsBothWays) {
  CertsRenewPlan p;
  p.request.wait_s = 30;
  std::string s = p.restart_script();
  EXPECT_NE(s.find("mv \"$f\" \"$OFF\"/"), std::string::npos);
  EXPECT_NE(s.find("while up; do"), std::string::npos);
  EXPECT_NE(s.find("until up; do"), std::string::npos);
  EXPECT_NE(s.find("-ge 60 ]"), std::string::npos);  // 30 s of half-second polls
  // A stuck API server: the manifests go back before it gives up.
  size_t give_up = s.find("still answers 30 s");
  ASSERT_NE(give_up, std::string::npos);
  EXPECT_NE(s.rfind("mv \"$OFF\"/*.yaml \"$M\"/", give_up), std::string::npos);
}

}  // namespace
}  // namespace pai::deploy

#pragma once
// paictl certs renew as a use case (usecase.h; docs/certs.md): on each master,
// one at a time, `kubeadm certs renew all` (the leaves and the kubeconfigs'
// client certificates, one year; not the CAs, not the kubelets'), then the
// control plane's static pods restarted so they serve the new certificates
// (the manifests moved out of /etc/kubernetes/manifests, the API server gone,
// the manifests back, the API server answering again), then the new admin.conf
// fetched into CLUSTER_DIR/.paictl/admin.conf (0600), then every certificate
// read again. Each step is journaled in CLUSTER_DIR/.paictl/certs.journal: a
// run killed after its renew resumes at the restart (kubeadm certs renew is
// not run twice for one run); one killed while the manifests were out puts
// them back first.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/certs.h"
#include "deploy/host_plan.h"
#include "deploy/prepare.h"
#include "deploy/usecase.h"
#include "util/clock.h"

namespace pai::deploy {

struct CertsRenewRequest {
  std::string cluster_dir;
  bool dry_run = false;
  bool yes = false;
  int wait_s = 300;               // each wait for the API server (gone, back)
  int64_t warn_within_days = 30;  // what the verification calls expiring
  size_t parallel = 16;           // hosts read at once
};

struct CertsRenewDeps {
  HostsLoader load_hosts;
  TransportFactory transport;  // null: SSH
  // Seconds since 1970 (days left are counted from it). Null: the system clock.
  std::function<int64_t()> wall_clock;
};

// One step of the renewal on one master.
struct CertsRenewStep {
  enum class Kind { Renew, Restart, Fetch } kind = Kind::Renew;
  std::string host;
  // A step an interrupted earlier run already completed (`resumed` then says
  // which run), skipped; or, for Restart, one it left unfinished (finished now).
  bool skip = false;
  std::string note;
  std::string describe() const;  // one line, e.g. "kubeadm certs renew all on tb-master"
};
// "renew", "restart", "fetch": the journal's and the -o json documents' name.
const char* to_string(CertsRenewStep::Kind k);

struct CertsRenewPlan {
  CertsRenewRequest request;
  CertsRenewDeps deps;
  std::shared_ptr<const PreparedCluster> cluster;
  std::vector<std::string> masters;
  check::CertsReport before;          // the certificates now
  diag::List findings;                // check::certs_findings(before)
  std::vector<CertsRenewStep> steps;  // in order
  std::string run_id;                 // the journal's run (a resumed run keeps its id)
  std::string resumed;                // the interrupted run this one finishes, or ""
  std::string admin_conf;             // CLUSTER_DIR/.paictl/admin.conf
  std::string journal;                // CLUSTER_DIR/.paictl/certs.journal
  std::shared_ptr<remote::Transport> transport;

  // What each step runs on its master.
  static std::string renew_script();
  std::string restart_script() const;
};

// Reads every host's certificates and the journal; changes nothing. Refuses a
// cluster without a master, and masters that cannot be read (the problems).
UseCaseResult<CertsRenewPlan> plan_certs_renew(const CertsRenewRequest& request,
                                               const CertsRenewDeps& deps);

// paictl certs check: every host's certificates and their findings; hosts that
// could not be read are findings too (K103). Changes nothing.
struct CertsCheck {
  std::shared_ptr<const PreparedCluster> cluster;
  check::CertsReport report;
  diag::List findings;
};
UseCaseResult<CertsCheck> check_certs(const CertsRenewRequest& request, const CertsRenewDeps& deps);

// What a renewal reports while it runs.
struct CertsRenewEvent {
  enum class Kind { StepStarted, StepDone, StepSkipped, Verifying } kind = Kind::StepStarted;
  const CertsRenewStep* step = nullptr;
  double seconds = 0;  // StepDone
  std::string output;  // StepDone: the step's own last line (kubeadm's, the wait's)
};

struct CertsRenewCallbacks {
  std::function<void(const CertsRenewEvent&)> on_event;  // may be null
  // Asked unless the request says yes; null: No.
  std::function<Answer(const CertsRenewPlan&)> confirm;
  void emit(const CertsRenewEvent& e) const {
    if (on_event) on_event(e);
  }
};

struct CertsRenewOutcome {
  enum class End {
    DryRun,      // nothing ran
    Declined,    // not confirmed
    NoTerminal,  // no confirmation could be asked
    Failed,      // a step failed (`error`, `failed_step`)
    Renewed,     // every step ran; see `verified`
  } end = End::Declined;
  std::optional<UseCaseError> error;
  std::optional<CertsRenewStep> failed_step;
  std::vector<CertsRenewStep> done;  // the steps that ran to their end
  // After the steps: the certificates read again and their findings.
  std::optional<check::CertsReport> after;
  diag::List findings_after;
  // Nothing that `kubeadm certs renew` renews expires within the window any
  // more, and the fetched admin.conf's client certificate is the new one.
  bool verified = false;
  std::string admin_conf_expires;  // the fetched admin.conf's not-after (RFC 3339)
};
CertsRenewOutcome apply_certs_renew(CertsRenewPlan& plan, const CertsRenewCallbacks& callbacks);

// Whether `c` is renewed by `kubeadm certs renew all`: a leaf of a master's PKI
// or a kubeconfig's client certificate but kubelet.conf's.
bool renewed_by_kubeadm(const check::CertInfo& c);

}  // namespace pai::deploy

// The `join` phase: every worker joined to the control plane with kubeadm join,
// the workers that join at once sharing one short-lived bootstrap token.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <list>
#include <mutex>
#include <set>

#include <unistd.h>

#include "deploy/engine.h"
#include "deploy/phases/common.h"
#include "deploy/phases/phases.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy::phases {

namespace {

using util::shell_quote;

class JoinPhase : public KeyValuePhase {
 public:
  // Another worker's join changes neither this worker's Node nor its tokens;
  // its own verification reads the master after its join (master_read).
  explicit JoinPhase(const InstallSettings& s)
      : KeyValuePhase("join", {.hosts = PhaseTraits::Hosts::AllButMaster,
                               .barrier = true,
                               .apply_changes_others_reads = false}),
        s_(s) {}

  static constexpr const char* kScript =
      "[ -f /etc/kubernetes/kubelet.conf ] && echo kubelet_conf=1\n"
      "[ -f /etc/kubernetes/pki/ca.crt ] && echo ca=1\n"
      "[ -f /var/lib/kubelet/config.yaml ] && echo kubelet_config=1\n";
  std::string what() const override { return "the kubelet"; }
  std::string observation(const HostRun&) const override {
    return std::string(kScript) + kKubeadmPresent + "true\n";
  }
  void more_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    if (HostRun* master = h.run().master()) {
      out.push_back({master, cluster_objects_script()});
      out.push_back({master, kTokenList});
    }
  }
  util::Result<void> needs_from(HostRun& h, std::map<std::string, std::string>& kv,
                                std::vector<std::string>& needs) override {
    HostRun* master = h.run().master();
    bool registered = false;
    if (master) {
      auto r = master_read(h, *master, cluster_objects_script());
      if (r->ok()) registered = node_listed(r, h.spec().name);
    }
    // Tokens a run that was killed could not delete (they would live out their
    // TTL): only their ids are read. A join wave's (its description names the
    // run, not a host) are the first worker's to delete; "paictl join of HOST"
    // is a token of one host's join.
    std::vector<std::string> leftover;
    if (master) {
      auto r = master_read(h, *master, kTokenList);
      const std::string mark = "paictl join of " + h.spec().name;
      const bool first = first_worker(h);
      if (r->ok())
        for (auto line : util::split(r->out, '\n')) {
          if (line.rfind("token=", 0) != 0) continue;
          std::string id(line.substr(6, line.find(' ') - 6));
          size_t at = line.find(mark);
          size_t after = at + mark.size();
          if (at != std::string_view::npos && (after >= line.size() || line[after] == ' ')) {
            leftover.push_back(id);
            continue;
          }
          size_t w = line.find(kWaveMark);
          if (!first || w == std::string_view::npos) continue;
          std::string_view run = line.substr(w + std::strlen(kWaveMark));
          run = run.substr(0, run.find(' '));
          if (run != run_mark_) leftover.push_back(id);
        }
    }
    {
      std::lock_guard lock(mu_);
      leftover_[h.spec().name] = leftover;
      // The verification's reads are used once.
      verifying_.erase(h.spec().name);
      after_join_.erase(h.spec().name);
    }
    if (!leftover.empty())
      needs.push_back("delete " + std::to_string(leftover.size()) +
                      " join token(s) an interrupted run left");
    bool conf = kv.count("kubelet_conf") > 0;
    if (conf && registered) return {};
    // Only a join renders a configuration for this kubeadm's version.
    h.facts()["kubeadm_version"] = kubeadm_version(h, kv, s_);
    if (conf)
      needs.push_back("reset a join the cluster does not know (kubeadm reset -f)");
    else if (kv.count("ca") || kv.count("kubelet_config"))
      needs.push_back("clean up an interrupted kubeadm join (kubeadm reset -f)");
    needs.push_back(
        "kubeadm join " + (master ? endpoint_of(s_, master->spec()) : std::string("the master")) +
        " (a token valid " + std::to_string(s_.join_token_ttl_s / 60) + " min, sent on stdin)");
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>& needs) override {
    util::Result<void> s = join(h, needs);
    // What the verification reads of the master next must postdate this apply.
    std::lock_guard lock(mu_);
    verifying_.insert(h.spec().name);
    return s;
  }

 private:
  // The description of a join wave's token: kWaveMark, then this phase's run.
  static constexpr const char* kWaveMark = "paictl join wave of run ";

  // Whether h is the first worker this run joins (layout order): it deletes the
  // join waves' tokens a killed run left, so that one host, not every worker,
  // has that need.
  static bool first_worker(HostRun& h) {
    for (auto* other : h.run().hosts)
      if (!other->spec().master && other->spec().selected) return other == &h;
    return false;
  }

  // The workers that join at the same time share one bootstrap token, minted
  // by the first of them and deleted on the master by the last one to finish,
  // which also reads there, in the same session, what every worker's
  // verification needs (the nodes, the tokens): one `kubeadm token create`
  // and one session with one kubectl run on the master per wave instead of per
  // worker. The token reaches each worker only on its kubeadm's stdin; its TTL
  // is minutes, and a worker that comes when it is half gone starts a wave of
  // its own.
  struct Wave {
    int joining = 0;       // workers of this wave whose join has not finished
    bool minting = true;   // the first worker is minting the token
    bool closing = false;  // its last worker is deleting the token: no one may join it
    bool done = false;     // the token is deleted; `reads` hold what was read after
    util::Result<void> minted;
    JoinCommand jc;
    std::string id;   // the token's id (not secret)
    double born = 0;  // on the run's clock, s
    std::map<std::string, std::shared_ptr<const remote::ExecResult>> reads;  // as Lists
  };

  util::Result<void> join(HostRun& h, const std::vector<std::string>& needs) {
    HostRun* master = h.run().master();
    if (!master) return util::Error{"no master in layout.yaml to join", ""};
    std::vector<std::string> leftover;
    {
      std::lock_guard lock(mu_);
      leftover = leftover_[h.spec().name];
    }
    for (const auto& id : leftover)
      master->sh("kubeadm token delete " + shell_quote(id) + " >/dev/null 2>&1 || true");
    bool join = false;
    for (const auto& n : needs) join |= n.rfind("kubeadm join", 0) == 0;
    if (!join) return {};
    for (const auto& n : needs)
      if (n.find("kubeadm reset") != std::string::npos)
        if (util::Result<void> s =
                run_step(h, "kubeadm reset -f", holding_kubeadm_lock("kubeadm reset -f"));
            !s.ok())
          return s;
    Wave& w = enter_wave(h, *master);
    util::Result<void> s = w.minted;
    if (s.ok()) {
      auto config = render_kubeadm_join(s_, h.spec(),
                                        h.facts().value("kubeadm_version", "v" + s_.kube_version),
                                        w.jc.endpoint, w.jc.token, w.jc.ca_hash);
      // The join configuration holds the token: it goes on stdin, never to a
      // file or argv. Nothing changes here after the join.
      if (!config) {
        s = config.error();
      } else {
        s = run_last_step(h, "kubeadm join",
                          holding_kubeadm_lock("kubeadm join --config /dev/stdin"), *config,
                          900000);
        std::fill(config->begin(), config->end(), '\0');
      }
    }
    leave_wave(h, *master, w, s.ok());
    return s;
  }

  // Joins the current wave, or starts one (minting its token) when there is
  // none a worker may still join.
  Wave& enter_wave(HostRun& h, HostRun& master) {
    std::unique_lock lock(mu_);
    const double now = h.run().clock.now();
    const double half_ttl = std::max(1, s_.join_token_ttl_s / 2);
    Wave* w = waves_.empty() ? nullptr : &waves_.back();
    if (w && !w->closing && !w->done &&
        (w->minting || (w->minted.ok() && now - w->born < half_ttl))) {
      ++w->joining;
      cv_.wait(lock, [&] { return !w->minting; });
      return *w;
    }
    waves_.emplace_back();
    w = &waves_.back();
    w->joining = 1;
    w->born = now;
    lock.unlock();
    auto r = master.sh("kubeadm token create --ttl " + std::to_string(s_.join_token_ttl_s) +
                           "s --description " + shell_quote(kWaveMark + run_mark_) +
                           " --print-join-command",
                       {}, 120000, true);
    util::Result<void> minted;
    JoinCommand jc;
    if (!r.ok() || r.exit_status != 0) {
      minted = command_failure("minting a join token", r);
    } else {
      // What it printed even when incomplete: a token there is deleted with the wave.
      jc = parse_join_command(r.out);
      if (!jc.complete()) minted = util::Error{"kubeadm token create printed no join command", ""};
    }
    std::fill(r.out.begin(), r.out.end(), '\0');
    if (minted.ok()) h.run().masker->add(jc.token);
    lock.lock();
    w->minted = minted;
    w->jc = std::move(jc);
    w->id = w->jc.token.substr(0, w->jc.token.find('.'));
    w->minting = false;
    cv_.notify_all();
    return *w;
  }

  // The last worker of a wave to finish deletes its token and reads, in the
  // same session, the master's state after every join of the wave; the others
  // wait for that read, which their verifications use.
  void leave_wave(HostRun& h, HostRun& master, Wave& w, bool joined) {
    std::unique_lock lock(mu_);
    if (--w.joining == 0) {
      w.closing = true;
      lock.unlock();
      std::map<std::string, std::shared_ptr<const remote::ExecResult>> got;
      if (!w.id.empty()) {
        const std::string marker = "@@paictl-join-" + std::to_string(::getpid()) + "-" + w.id;
        const std::vector<std::string> reads = {cluster_objects_script(), kTokenList};
        auto r =
            master.sh("kubeadm token delete " + shell_quote(w.id) + " >/dev/null 2>&1 || true\n" +
                      combined_observation_script(reads, marker));
        std::vector<remote::ExecResult> parts;
        if (r.ok() && r.exit_status == 0 &&
            split_combined_output(r.out, marker, reads.size(), parts))
          for (size_t k = 0; k < reads.size(); ++k)
            got[reads[k]] = master.finish_shared(
                reads[k], std::make_shared<const remote::ExecResult>(std::move(parts[k])));
      }
      lock.lock();
      w.reads = std::move(got);
      w.done = true;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return w.done; });
    }
    if (joined) after_join_[h.spec().name] = w.reads;
  }

  // Whether `list` (the cluster objects' read, as a List) has this Node. Every
  // worker reads the same list (the read ahead, a wave's read after its joins):
  // it is parsed once, not once a worker (a 1,000-node list is 2.7 MB).
  bool node_listed(const std::shared_ptr<const remote::ExecResult>& list, const std::string& node) {
    std::lock_guard lock(parsed_mu_);
    if (list != parsed_from_ && (!parsed_from_ || list->out != parsed_from_->out)) {
      parsed_from_ = list;
      parsed_nodes_.clear();
      auto nodes = objects_of_kind(util::parse_json_or_discarded(list->out), "Node");
      for (const auto& n : nodes["items"])
        if (n.contains("metadata") && n["metadata"].is_object())
          parsed_nodes_.insert(n["metadata"].value("name", ""));
    }
    return parsed_nodes_.count(node) > 0;
  }

  // The master's reads for this worker's needs: during its verification what
  // the session that deleted its wave's token read after the joins, else a
  // read made now; before its apply, the read ahead. Shared, not copied.
  std::shared_ptr<const remote::ExecResult> master_read(HostRun& h, HostRun& master,
                                                        const std::string& script) {
    bool fresh;
    {
      std::lock_guard lock(mu_);
      fresh = verifying_.count(h.spec().name) > 0;
      if (fresh) {
        auto& got = after_join_[h.spec().name];
        auto it = got.find(script);
        if (it != got.end()) {
          auto r = std::move(it->second);
          got.erase(it);
          return r;
        }
      }
    }
    if (!fresh) return master.observe_shared(script);
    return master.finish_shared(script,
                                std::make_shared<const remote::ExecResult>(master.sh(script)));
  }

  const InstallSettings& s_;
  // This run's join waves, told apart from a killed run's on the master.
  const std::string run_mark_ =
      std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  std::mutex mu_;
  std::condition_variable cv_;
  std::list<Wave> waves_;                                     // stable addresses
  std::map<std::string, std::vector<std::string>> leftover_;  // host -> token ids
  std::set<std::string> verifying_;  // hosts whose join applied: their next master reads are fresh
  std::map<std::string, std::map<std::string, std::shared_ptr<const remote::ExecResult>>>
      after_join_;
  std::mutex parsed_mu_;
  std::shared_ptr<const remote::ExecResult> parsed_from_;  // the list node_listed parsed last
  std::set<std::string> parsed_nodes_;                     // and its Nodes
};

}  // namespace

std::unique_ptr<Phase> make_join_phase(const InstallSettings& s) {
  return std::make_unique<JoinPhase>(s);
}

}  // namespace pai::deploy::phases

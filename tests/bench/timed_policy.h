#pragma once
// A Policy that forwards to another and records how long each schedule() took,
// in microseconds of the clock it is given (wall or thread CPU time).

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/policy.h"

namespace pai::bench {

class TimedPolicy final : public scheduler::Policy {
 public:
  using Clock = double (*)();  // microseconds
  TimedPolicy(std::unique_ptr<scheduler::Policy> inner, std::vector<double>* samples, Clock clock)
      : inner_(std::move(inner)), samples_(samples), clock_(clock) {}
  std::string_view name() const override { return inner_->name(); }
  const scheduler::ClusterShape& cluster() const override { return inner_->cluster(); }
  scheduler::ScheduleResult schedule(const scheduler::GroupRequest& r, bool preempt) override {
    const double t0 = clock_();
    auto res = inner_->schedule(r, preempt);
    samples_->push_back(clock_() - t0);
    return res;
  }
  scheduler::ScheduleResult schedule_pod(std::string_view g, int32_t n) override {
    return inner_->schedule_pod(g, n);
  }
  bool release(std::string_view g) override { return inner_->release(g); }
  void set_node_health(int32_t n, bool h) override { inner_->set_node_health(n, h); }
  uint64_t release_epoch() const override { return inner_->release_epoch(); }
  scheduler::UsageSummary usage() const override { return inner_->usage(); }
  bool has_group(std::string_view g) const override { return inner_->has_group(g); }
  std::string check_invariants() const override { return inner_->check_invariants(); }

 private:
  std::unique_ptr<scheduler::Policy> inner_;
  std::vector<double>* samples_;
  Clock clock_;
};

}  // namespace pai::bench

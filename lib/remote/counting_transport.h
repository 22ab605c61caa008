#pragma once
// What a run costs the hosts, counted where paictl talks to them: a Transport
// that passes every command to another and counts, per host, the SSH sessions
// it opened, the commands it started and the bytes it sent (the commands and
// their stdin). `install -o json` reports the most on any host as `stats`.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "remote/transport.h"

namespace pai::remote {

struct HostCost {
  uint64_t sessions = 0;
  uint64_t commands = 0;
  uint64_t bytes_sent = 0;
};

struct TransportCost {
  size_t hosts = 0;  // hosts that were sent a command
  HostCost most;     // each figure's largest value on any host (not one host's)
  HostCost total;
};

class CountingTransport : public Transport {
 public:
  explicit CountingTransport(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}

  ExecResult exec(const Target& target, const ExecRequest& request) override;
  std::unique_ptr<Connection> connect(const Target& target) override;
  size_t fds_per_exec(const Target& target) const override { return inner_->fds_per_exec(target); }

  // Counts the command `request` sent to `host` and what `result` says it opened.
  void count(const std::string& host, const ExecRequest& request, const ExecResult& result);
  TransportCost cost() const;
  HostCost cost_of(const std::string& host) const;

 private:
  std::unique_ptr<Transport> inner_;
  mutable std::mutex mu_;
  std::map<std::string, HostCost> hosts_;
};

// The name a host is counted under: the name the user knows it by, else its address.
std::string cost_key(const Target& target);

// This process's own CPU time so far (user + system, every thread), in seconds.
double process_cpu_seconds();

}  // namespace pai::remote

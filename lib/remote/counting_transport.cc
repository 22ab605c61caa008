#include "remote/counting_transport.h"

#include <sys/resource.h>

#include <algorithm>

namespace pai::remote {

namespace {

class CountingConnection : public Connection {
 public:
  CountingConnection(CountingTransport& counter, std::string host,
                     std::unique_ptr<Connection> inner)
      : counter_(counter), host_(std::move(host)), inner_(std::move(inner)) {}
  ExecResult exec(const ExecRequest& request) override {
    ExecResult r = inner_->exec(request);
    counter_.count(host_, request, r);
    return r;
  }

 private:
  CountingTransport& counter_;
  std::string host_;
  std::unique_ptr<Connection> inner_;
};

}  // namespace

std::string cost_key(const Target& target) {
  return target.endpoint.name.empty() ? target.endpoint.address : target.endpoint.name;
}

ExecResult CountingTransport::exec(const Target& target, const ExecRequest& request) {
  ExecResult r = inner_->exec(target, request);
  count(cost_key(target), request, r);
  return r;
}

std::unique_ptr<Connection> CountingTransport::connect(const Target& target) {
  return std::make_unique<CountingConnection>(*this, cost_key(target), inner_->connect(target));
}

void CountingTransport::count(const std::string& host, const ExecRequest& request,
                              const ExecResult& result) {
  std::lock_guard lock(mu_);
  HostCost& c = hosts_[host];
  c.sessions += static_cast<uint64_t>(std::max(result.logins, 0));
  ++c.commands;
  c.bytes_sent += request.command.size() + request.input.size();
}

TransportCost CountingTransport::cost() const {
  std::lock_guard lock(mu_);
  TransportCost t;
  t.hosts = hosts_.size();
  for (const auto& [host, c] : hosts_) {
    t.most.sessions = std::max(t.most.sessions, c.sessions);
    t.most.commands = std::max(t.most.commands, c.commands);
    t.most.bytes_sent = std::max(t.most.bytes_sent, c.bytes_sent);
    t.total.sessions += c.sessions;
    t.total.commands += c.commands;
    t.total.bytes_sent += c.bytes_sent;
  }
  return t;
}

HostCost CountingTransport::cost_of(const std::string& host) const {
  std::lock_guard lock(mu_);
  auto it = hosts_.find(host);
  return it == hosts_.end() ? HostCost{} : it->second;
}

double process_cpu_seconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

}  // namespace pai::remote

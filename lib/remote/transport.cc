#include "remote/transport.h"

namespace pai::remote {

namespace {
class PerExecConnection : public Connection {
 public:
  PerExecConnection(Transport& transport, Target target)
      : transport_(transport), target_(std::move(target)) {}
  ExecResult exec(const ExecRequest& request) override { return transport_.exec(target_, request); }

 private:
  Transport& transport_;
  Target target_;
};
}  // namespace

std::unique_ptr<Connection> Transport::connect(const Target& target) {
  return std::make_unique<PerExecConnection>(*this, target);
}

}  // namespace pai::remote

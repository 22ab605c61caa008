#include "deploy/usecase.h"

#include <utility>

#include "http/client.h"

namespace pai::deploy {

UseCaseError input_error(std::string message, std::string hint) {
  return UseCaseError{util::Error{std::move(message), std::move(hint), util::Error::Kind::Input}};
}

UseCaseError remote_error(std::string message, std::string hint) {
  return UseCaseError{util::Error{std::move(message), std::move(hint), util::Error::Kind::Remote}};
}

UseCaseError other_error(std::string message, std::string hint) {
  return UseCaseError{util::Error{std::move(message), std::move(hint), util::Error::Kind::Other}};
}

UseCaseError remote_failure(const std::string& what, const util::Error& e) {
  return remote_error(what + ": " + e.message, e.hint);
}

std::shared_ptr<http::Client> hived_http_client(http::Client* injected, const Callbacks* cb,
                                                int attempts) {
  if (injected) return std::shared_ptr<http::Client>(injected, [](http::Client*) {});
  http::Options o;
  o.timeout_s = 30;
  o.connect_timeout_s = 10;
  if (attempts > 0) o.retry.max_attempts = attempts;
  if (cb)
    o.log = [cb](const std::string& line) {
      UseCaseEvent e;
      e.kind = UseCaseEvent::Kind::HivedLog;
      e.message = line;
      cb->emit(e);
    };
  return std::make_shared<http::CurlClient>(o);
}

}  // namespace pai::deploy

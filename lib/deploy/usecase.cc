#include "deploy/usecase.h"

#include <utility>

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

}  // namespace pai::deploy

#pragma once
// Signing in to Azure Resource Manager without the Azure SDK or CLI.
//
// Three ways, picked in this order (make_token_source):
//   1. a client secret: from the file config.yaml's azure.client-secret-file
//      names, else from AZURE_CLIENT_SECRET; never from an argument;
//   2. a federated token (workload identity): AZURE_FEDERATED_TOKEN_FILE, read
//      again for every token because the platform rotates it;
//   3. a managed identity: IDENTITY_ENDPOINT with IDENTITY_HEADER.
// 1 and 2 are the OAuth2 client-credentials grant,
//   POST {authority}/{tenant}/oauth2/v2.0/token
//   grant_type=client_credentials&client_id=…&scope=https://management.azure.com/.default
//   &client_secret=… | &client_assertion_type=…jwt-bearer&client_assertion=…
// which issues no refresh token: a new token is requested before the cached
// one expires. Tokens live in memory only and never reach a log or an error.
// A sign-in is tried 3 times at most, within `deadline_s`; once it has failed,
// the token source answers with that failure at once (a command reads several
// resources: one failed sign-in must not be waited for once per resource). An
// answer's lifetime (expires_in, expires_on) is kept between 1 s and a day; one
// that is not a positive number is refused.

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "azure/clock.h"
#include "http/client.h"
#include "remote/secret.h"
#include "util/result.h"

namespace pai::azure {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // A bearer token valid for at least a few more minutes; `refresh` asks for a
  // new one (the server refused the cached one). Safe from several threads.
  virtual util::Result<std::string> token(bool refresh = false) = 0;
  // How it signs in, for messages: "client secret (client-secret-file ...)".
  virtual std::string describe() const = 0;
};

struct Identity {
  std::string tenant;
  std::string client_id;
  std::string client_secret_file;  // from config.yaml; relative to nothing (the caller resolves it)
};

enum class Method { ClientSecret, FederatedToken, ManagedIdentity };

struct TokenOptions {
  Endpoints endpoints;
  Clock clock;
  // A token is renewed when less than this is left of it (or a tenth of its
  // lifetime, when that is shorter).
  double renew_before_s = 300;
  std::function<void(const std::string&)> log;
  double attempt_timeout_s = 120;  // one HTTP attempt's limit (the http::Client's timeout)
  double deadline_s = 480;         // one sign-in with its retries
  // True once the user asked to stop: no further attempt is made. May be null.
  std::function<bool()> cancelled;
};

// Chooses the sign-in (see the top of this file), reads the secret. The
// environment is read through `getenv` (tests pass their own).
util::Result<std::unique_ptr<TokenSource>> make_token_source(
    const Identity& id, http::Client& http, TokenOptions o,
    std::function<const char*(const char*)> getenv = nullptr);

// The error of a token endpoint answer as one line: "AADSTS7000215: Invalid
// client secret provided (invalid_client)". Never contains the request.
std::string format_token_error(long status, const std::string& body);

}  // namespace pai::azure

#pragma once
// Finding a cluster's REST API and signing in, as `paictl cluster add` does:
// the probe of the address the user gave, the sign-in method it offers, the
// password exchange for a token, and reading the user out of a token.

#include <optional>
#include <string>
#include <vector>

#include "api/client.h"

namespace pai::api {

struct Probe {
  std::string rest_base;  // where /api/v2 answered, e.g. https://host/rest-server
  ClusterInfo info;
  std::vector<std::string> tried;  // the info URLs asked, in order
};

// The REST API is under /rest-server behind OpenPAI's pylon; a bare
// rest-server (port 9186) serves it at the root. Tries `uri`/rest-server, then
// `uri` (just `uri` when it already ends in /rest-server), and stops at the
// first transport failure (the host itself does not answer). On failure the
// error is the first one met.
Result<Probe> probe(http::Client& http, const std::string& uri);

enum class SignIn { Basic, Oidc };
// OpenPAI answers "basic" or "OIDC" in /api/v2/info's authnMethod; empty is basic.
SignIn sign_in_method(const ClusterInfo& info);

// The user name inside an OpenPAI JWT (its payload's "username"), or "" when
// the token is not a JWT or names no user. The signature is not checked: the
// server checks the token; this only saves the user from typing --user.
std::string user_from_token(const std::string& token);

// base64url (and base64) without padding checks; stops at the first other character.
std::string base64url_decode(std::string_view in);

}  // namespace pai::api

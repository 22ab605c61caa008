#pragma once
// Registering a cluster (`paictl cluster add`), for any program linking libpai:
// check and normalise the request, probe the server, sign in (or take a
// token), check the token against the user, and write the registry under its
// lock. Nothing here prints or reads a terminal: secrets come in the request,
// and what the user should hear comes back as warnings and errors.
//
//   cluster::AddRequest req{...};
//   auto prepared = cluster::prepare_add(req);          // no network
//   http::CurlClient http(options_with(prepared->request.ca_file, ...));
//   auto done = cluster::add_cluster(prepared->request, http, registry, diags);

#include <optional>
#include <string>
#include <vector>

#include "api/client.h"
#include "cluster/registry.h"
#include "util/result.h"

namespace pai::cluster {

enum class Credential { Password, Token, TokenFile };

struct AddRequest {
  std::string name;
  std::string uri;
  std::string user;  // required with Password; else read from the token when empty
  Credential credential = Credential::Token;
  std::string secret;      // the password or the token (never stored for Password)
  std::string token_file;  // absolute; read now and at every use
  std::string ca_file;     // made absolute by prepare_add
  bool insecure = false;
  std::string hived;   // HiveD's web server when not behind the pylon
  bool force = false;  // replace a cluster of the same name
  bool use = false;    // make it current (the first cluster always becomes current)
  int token_days = 7;  // validity of the token a password sign-in asks for
};

struct AddError {
  enum class Stage {
    Request,     // bad usage: the request itself (exit 2)
    Probe,       // the address does not answer like OpenPAI (exit 3)
    SignIn,      // the login was refused or failed
    TokenCheck,  // GET /users/<user> with the token failed
    Registry,    // the registry could not be read or written (exit 2)
  } stage = Stage::Request;
  std::string message;  // one line
  std::string hint;     // may be empty
  // With Probe, SignIn and TokenCheck: the server's answer, and what paictl was doing.
  std::optional<api::Error> api;
  std::string doing;
};

struct PreparedAdd {
  AddRequest request;                 // normalised: URI without user info, absolute CA file
  std::vector<std::string> warnings;  // for the user, before anything is sent
};

// Checks the request without the network and before any secret is needed: the
// name (and, given the registry, that it is free unless `force`), the URI's
// scheme, the CA and token files. Strips user info from the URI (warning about
// it), makes the CA file absolute, and warns about a password sign-in over plain
// http and about --insecure on https.
util::Result<PreparedAdd, AddError> prepare_add(AddRequest req, const Registry* registry = nullptr);

struct AddOutcome {
  Cluster cluster;  // as stored (its token included unless a token file)
  api::UserInfo user;
  bool made_current = false;
  std::string file;  // the registry file written
};

using AddResult = util::Result<AddOutcome, AddError>;

// Probes, signs in, checks the token and writes the registry (a prepared
// request). `registry` is the registry as loaded; it is re-read under the lock
// before the change, so concurrent writers never lose each other's changes.
// `diags` gets the problems of registry files read meanwhile.
AddResult add_cluster(const AddRequest& prepared, http::Client& http, const Registry& registry,
                      diag::List& diags);

}  // namespace pai::cluster

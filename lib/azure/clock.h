#pragma once
// The Azure provider's clock (util::Clock: tests run a long-running operation's
// Retry-After waits without sleeping) and where it talks to.

#include <string>

#include "util/clock.h"

namespace pai::azure {

using Clock = util::Clock;

// Where the provider talks to. Defaults are Azure's public cloud; the
// environment (PAICTL_ARM_ENDPOINT, PAICTL_AUTHORITY_HOST, PAICTL_CA_FILE)
// overrides them, and the command-line flags override the environment.
struct Endpoints {
  std::string arm = "https://management.azure.com";
  std::string authority = "https://login.microsoftonline.com";
  std::string ca_file;  // PEM bundle to verify both with; "" = the system store
  // The audience of ARM tokens. Stays Azure's even when `arm` points elsewhere
  // (a test server), as the SDKs do when given a scope explicitly.
  std::string scope = "https://management.azure.com/.default";
};
Endpoints endpoints_from_env();

// A random RFC 4122 version 4 UUID ("9f1c…-4…"), for x-ms-client-request-id.
std::string new_uuid();

}  // namespace pai::azure

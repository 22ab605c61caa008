#pragma once
// Time and waiting for the Azure provider, behind two functions so that tests
// run a long-running operation's Retry-After waits without sleeping.

#include <functional>
#include <string>

namespace pai::azure {

struct Clock {
  std::function<double()> now;        // seconds, monotonic
  std::function<void(double)> sleep;  // seconds
  // steady_clock and std::this_thread::sleep_for.
  static Clock real();
};

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

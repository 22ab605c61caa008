// paictl's ARM client (lib/azure) against the Azure Resource Manager scenarios of
// Microsoft's spec mock server (npm @azure-tools/azure-http-specs served by
// @typespec/spector), the ones its engine covers: PUT and DELETE as long-running
// operations, a synchronous PUT, GET and DELETE, and an error body.
//
//   azure_spector_lro BASE_URL      e.g. http://localhost:3917
//
// Prints one "ok:" or "FAIL:" line per check; exits 1 if any failed. The mock
// server validates every request it gets and answers 400 when one is not what the
// scenario expects, and its coverage file tells which scenarios passed
// (test_spector_lro.sh checks that too).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "azure/arm.h"
#include "azure/auth.h"
#include "azure/clock.h"
#include "http/client.h"

namespace {

using nlohmann::json;

int failures = 0;

void check(bool ok, const std::string& what, const std::string& detail = {}) {
  std::printf("%s: %s%s%s\n", ok ? "ok" : "FAIL", what.c_str(), detail.empty() ? "" : ": ",
              detail.c_str());
  if (!ok) ++failures;
}

// The mock server does not check the token; ARM needs one, so the client sends one.
struct FixedToken : pai::azure::TokenSource {
  pai::util::Result<std::string> token(bool) override { return std::string("spector-token"); }
  std::string describe() const override { return "a fixed test token"; }
};

const std::string kSub = "/subscriptions/00000000-0000-0000-0000-000000000000";
const std::string kApi = "2023-12-01-preview";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: azure_spector_lro BASE_URL\n");
    return 2;
  }
  pai::http::Options ho;
  ho.retry.max_attempts = 1;  // the ARM client retries, never lib/http
  ho.timeout_s = 20;
  pai::http::CurlClient http(ho);
  FixedToken tokens;
  pai::azure::ArmOptions o;
  o.endpoints.arm = argv[1];
  o.clock = pai::azure::Clock::real();
  // The scenarios send no Retry-After; the engine's default wait, shortened.
  o.default_wait_s = 0.05;
  o.max_transient_retries = 0;  // a 400/500 from the mock is a mismatch: see it, do not retry
  std::vector<std::string> log;
  o.log = [&log](const std::string& l) { log.push_back(l); };
  pai::azure::ArmClient arm(http, tokens, o);

  // Azure_ResourceManager_OperationTemplates_Lro_createOrReplace: 201 with
  // Azure-AsyncOperation, InProgress then Succeeded, then the resource once more.
  {
    const std::string order =
        kSub +
        "/resourceGroups/test-rg/providers/Azure.ResourceManager.OperationTemplates/orders/order1";
    auto before = arm.stats();
    auto r = arm.put(
        order, kApi,
        json{{"location", "eastus"}, {"properties", {{"productId", "product1"}, {"amount", 1}}}});
    check(r.ok(), "Lro_createOrReplace: PUT, then poll Azure-AsyncOperation until Succeeded",
          r.ok() ? "" : r.error().message);
    if (r.ok()) {
      std::string state = r.value().value("/properties/provisioningState"_json_pointer, "");
      check(state == "Succeeded", "Lro_createOrReplace: the resource at the end is Succeeded",
            state);
      check(r.value().value("/properties/productId"_json_pointer, "") == "product1",
            "Lro_createOrReplace: the resource at the end is the final GET's");
    }
    auto after = arm.stats();
    check(after.polls - before.polls == 2, "Lro_createOrReplace: two status reads",
          std::to_string(after.polls - before.polls));
    check(after.by_method["PUT"] - before.by_method["PUT"] == 1, "Lro_createOrReplace: one PUT");
  }

  // Azure_ResourceManager_OperationTemplates_Lro_delete: 202 with Location, 202, then 204.
  {
    const std::string order =
        kSub +
        "/resourceGroups/test-rg/providers/Azure.ResourceManager.OperationTemplates/orders/order1";
    auto before = arm.stats();
    auto r = arm.remove(order, kApi);
    check(r.ok(), "Lro_delete: DELETE, then poll Location while it answers 202",
          r.ok() ? "" : r.error().message);
    if (r.ok()) check(r.value(), "Lro_delete: the resource existed");
    auto after = arm.stats();
    check(after.polls - before.polls == 2, "Lro_delete: two Location reads (202, then 204)",
          std::to_string(after.polls - before.polls));
  }

  // Azure_ResourceManager_Resources_TopLevel_createOrReplace / _get / _delete:
  // the same engine when ARM answers at once.
  const std::string top = kSub +
                          "/resourceGroups/test-rg/providers/Azure.ResourceManager.Resources/"
                          "topLevelTrackedResources/top";
  {
    auto before = arm.stats();
    auto r = arm.put(top, kApi,
                     json{{"location", "eastus"}, {"properties", {{"description", "valid"}}}});
    check(r.ok(), "TopLevel_createOrReplace: a PUT that is Succeeded at once",
          r.ok() ? "" : r.error().message);
    if (r.ok())
      check(r.value().value("/properties/description"_json_pointer, "") == "valid",
            "TopLevel_createOrReplace: the resource comes back");
    check(arm.stats().polls == before.polls, "TopLevel_createOrReplace: no status read");
  }
  {
    auto r = arm.get(top, kApi);
    check(r.ok() && r.value().status == 200, "TopLevel_get",
          r.ok() ? std::to_string(r.value().status) : r.error().message);
    if (r.ok())
      check(r.value().body.value("name", "") == "top", "TopLevel_get: the resource's name");
  }
  {
    auto r = arm.remove(top, kApi);
    check(r.ok(), "TopLevel_delete", r.ok() ? "" : r.error().message);
  }

  // Azure_ResourceManager_CommonProperties_Error_createForUserDefinedError: an
  // ARM error body becomes one line with its code.
  {
    const std::string bad =
        kSub +
        "/resourceGroups/test-rg/providers/Azure.ResourceManager.CommonProperties/"
        "confidentialResources/confidential";
    const json body{{"location", "eastus"}, {"properties", {{"username", "00"}}}};
    auto r = arm.request("PUT", bad, kApi, &body);
    check(r.ok() && r.value().status == 400, "Error_createForUserDefinedError: 400",
          r.ok() ? std::to_string(r.value().status) : r.error().message);
    if (r.ok()) {
      std::string line = pai::azure::format_arm_error(r.value().status, r.value().body);
      check(line.find("BadRequest") != std::string::npos && line.find('\n') == std::string::npos,
            "Error_createForUserDefinedError: one line with the error code", line);
    }
  }

  // Azure_ResourceManager_CommonProperties_Error_getForPredefinedError: a 404 with
  // an error body is an answer (the resource is not there), not a failure.
  {
    const std::string gone =
        kSub +
        "/resourceGroups/test-rg/providers/Azure.ResourceManager.CommonProperties/"
        "confidentialResources/confidential";
    auto r = arm.get(gone, kApi);
    check(r.ok() && r.value().status == 404, "Error_getForPredefinedError: 404 is an answer",
          r.ok() ? std::to_string(r.value().status) : r.error().message);
    if (r.ok())
      check(pai::azure::arm_error_code(r.value().body) == "ResourceNotFound",
            "Error_getForPredefinedError: its code", pai::azure::arm_error_code(r.value().body));
  }

  for (const auto& l : log)
    if (l.find("spector-token") != std::string::npos) check(false, "the token is in the log", l);
  return failures ? 1 : 0;
}

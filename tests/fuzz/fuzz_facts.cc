// Fuzz the fact-script output parser: whatever a host prints (a hostile or broken
// host, a cut-off stream) must give facts or notes, never a crash, a hang or an
// exception; the facts must serialise to JSON and read back unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "check/report.h"
#include "check/runner.h"
#include "facts/fact_script.h"
#include "facts/host_facts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string out(reinterpret_cast<const char*>(data), size);
  pai::facts::HostFacts f;
  pai::facts::parse_fact_output(out, 1.7e9, f);
  if (f.complete && !f.stuck_in.empty()) std::abort();
  nlohmann::json j = pai::facts::to_json(f);
  std::string text = pai::check::dump(j);
  nlohmann::json again = nlohmann::json::parse(text, nullptr, false);
  if (again.is_discarded()) std::abort();
  if (!f.hostname.empty() || !f.name.empty())
    if (!pai::facts::from_json(again)) std::abort();
  // The checks run on whatever was parsed.
  pai::check::HostOutcome h;
  h.plan.name = "fuzz";
  h.plan.hostip = "10.0.0.1";
  h.reached = true;
  h.facts = f;
  (void)pai::check::evaluate({h}, {});
  return 0;
}

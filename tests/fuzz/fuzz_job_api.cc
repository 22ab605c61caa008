// Fuzz the reading of REST answers: error bodies (JSON, AJV lists, HTML, text)
// from a cluster or a proxy must become one-line messages, never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  pai::http::Response r;
  r.status = 400 + data[0] % 200;
  if (data[1] & 1) r.headers.push_back({"content-type", "text/html"});
  if (data[1] & 2) r.headers.push_back({"retry-after", "5"});
  r.body.assign(reinterpret_cast<const char*>(data + 2), size - 2);
  pai::api::Error e = pai::api::error_from_response(r);
  if (e.message.find('\n') != std::string::npos) std::abort();
  for (const auto& line : e.details)
    if (line.find('\n') != std::string::npos) std::abort();
  (void)e.summary();
  (void)pai::http::redact_url(r.body);
  (void)pai::http::parse_retry_after(r.body, 0);
  return 0;
}

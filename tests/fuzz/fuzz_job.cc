// Fuzz the job file pipeline: read, validate, render, re-emit. Whatever a job
// file holds must give findings with catalogued codes, never a crash, a hang or
// an exception; a job without errors must re-emit as YAML that reads back with
// the same values.
//   ./fuzz_job tests/data/jobs/valid tests/data/jobs/invalid examples/jobs
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "job/emit.h"
#include "job/js_value.h"
#include "job/render.h"
#include "job/rules.h"
#include "job/validate.h"

namespace {

void same(const pai::yaml::Node* a, const pai::yaml::Node* b, int depth) {
  if (depth > 64) return;
  if (pai::job::js_type(a) != pai::job::js_type(b)) std::abort();
  if (a->is_mapping()) {
    if (a->pairs().size() != b->pairs().size()) std::abort();
    for (size_t i = 0; i < a->pairs().size(); ++i)
      same(a->pairs()[i].value, b->pairs()[i].value, depth + 1);
  } else if (a->is_sequence()) {
    if (a->items().size() != b->items().size()) std::abort();
    for (size_t i = 0; i < a->items().size(); ++i) same(a->items()[i], b->items()[i], depth + 1);
  } else if (pai::job::js_to_string(a) != pai::job::js_to_string(b)) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 200000) return 0;
  pai::job::JobFile f =
      pai::job::JobFile::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  pai::diag::List out;
  pai::job::validate(f, out);
  for (const auto& d : out.items())
    if (d.message.empty() || !pai::job::find_rule(d.code)) std::abort();
  pai::job::Overrides o;
  o.export_params = true;
  o.params = {{"epochs", "3"}, {"note", "'a b'"}};
  (void)pai::job::render(f);
  (void)pai::job::render(f, o);
  (void)pai::job::request_of(f, o);
  (void)pai::job::secret_lines(f);
  if (f.root && !out.has_errors() && f.stream.documents.size() == 1) {
    pai::job::JobFile g = pai::job::JobFile::parse(pai::job::emit_job(f, {}), "emitted.yaml");
    if (g.stream.error || !g.root) std::abort();
    same(f.root, g.root, 0);
    pai::job::JobFile h = pai::job::JobFile::parse(pai::job::emit_job(f, o, true), "masked.yaml");
    if (h.stream.error || !h.root) std::abort();
  }
  return 0;
}

#pragma once
// Writes a job back as YAML: with the user's overrides applied (--name, --vc,
// --param, --export-params) for submission, and with secret values masked for
// anything a user sees (--dry-run). The server loads the result with js-yaml,
// so every scalar keeps the type it had in the file: plain scalars stay plain,
// strings that could read as numbers or dates are quoted.

#include <string>

#include "job/job_file.h"

namespace pai::job {

// The body to POST: the file as it is when there is nothing to change,
// otherwise the re-written document.
std::string submission_body(const JobFile& f, const Overrides& o);

// The document with overrides applied. With `mask_secrets`, the `secrets:`
// block becomes "******" (as the server stores it) and registry passwords too.
std::string emit_job(const JobFile& f, const Overrides& o, bool mask_secrets = false);

// A string as a YAML scalar that js-yaml reads back as the same string.
std::string js_yaml_string(std::string_view s);

}  // namespace pai::job

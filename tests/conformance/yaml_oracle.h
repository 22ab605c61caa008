#pragma once
// Differential testing of lib/yaml against libfyaml (test-only dependency).
//
// Both readers are reduced to one canonical text of the stream's content: one
// line per node, aliases expanded, anchors dropped, tags resolved, scalars with
// their style and escaped text, an empty node as an empty plain scalar. Mapping
// keys that repeat a previous scalar key replace its value in place, as lib/yaml
// does (it reports them as duplicate-key warnings). Merge keys are not expanded.

#include <optional>
#include <string>
#include <string_view>

#include "yaml/yaml.h"

namespace pai::yaml::oracle {

struct Reading {
  bool ok = false;
  std::string canonical;   // when ok
  std::string error;       // when !ok: "line:col: message"
  bool too_large = false;  // aliases expand beyond the comparison budget
};

// libfyaml's reading of `text`.
Reading read_fyaml(std::string_view text);
// lib/yaml's reading of `text` (merge keys off, as in libfyaml).
Reading read_pai(std::string_view text);

// libfyaml 0.7.12 rejects an empty entry of a block sequence that is not indented
// under its key ("a:\n-\n- b"), which YAML allows (PyYAML and libyaml read it as
// null). This spells such entries "- ~" (nullopt when there are none); compare()
// then requires both readers to agree on that text instead.
std::optional<std::string> spell_out_empty_entries(std::string_view text);

// Compares both readings; nullopt when they agree (both errors, or the same content).
std::optional<std::string> compare(std::string_view text);

}  // namespace pai::yaml::oracle

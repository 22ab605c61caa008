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

// Two readings where lib/yaml follows YAML 1.2 and both references (libfyaml
// 0.7.12 and PyYAML 6) refuse the input. compare() accepts lib/yaml's reading
// when it equals libfyaml's reading of the text rewritten as below.
//
// A line of only tabs is an empty line (s-separate-in-line allows tabs; 6.5
// l-empty); both references stop at the tab ("found character '\t' that cannot
// start any token"). This empties such lines (nullopt when there are none).
std::optional<std::string> empty_tab_lines(std::string_view text);
// A block scalar that is a document's root node may start its content in
// column 1: its parent's indentation is -1 (8.1.1.1, yaml-test-suite M9B4,
// 4QFQ...); both references refuse "--- |\nfoo\n". This indents the content of
// each root block scalar without an indentation indicator by one space
// (nullopt when there is none).
std::optional<std::string> indent_root_block_scalars(std::string_view text);

// Whether `text` is UTF-8 of YAML's printable characters, with LF or CR LF line
// breaks. libfyaml 0.7.12 checks this only in some places (it reads NUL bytes and
// stray UTF-8 continuation bytes), so compare() requires lib/yaml to refuse other
// input and does not ask libfyaml. lib/yaml refuses a lone CR (old Mac line
// breaks, which YAML allows) with a message saying to convert them.
bool printable_utf8(std::string_view text);

// libfyaml also reads past a malformed directive; compare() accepts lib/yaml's
// refusal of one.

// libfyaml also reads one byte past an empty block scalar at the very end of the
// input; compare() ignores a libfyaml reading that holds a NUL.
//
// Compares both readings; nullopt when they agree (both errors, or the same content).
// `refusals`: whether lib/yaml refusing what libfyaml reads is a difference too.
// Beyond the test suite libfyaml accepts much that YAML forbids (a tab as
// indentation, `!a[0` as a tag, a value on the next line not indented under its
// key, `a:: :`), so the fuzzer reports those only when asked.
std::optional<std::string> compare(std::string_view text, bool refusals = true);

}  // namespace pai::yaml::oracle

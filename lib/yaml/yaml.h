#pragma once
// A YAML 1.2 reader that keeps the source position of every node.
//
// paictl needs positions on every key and value (diagnostics are file:line:col),
// duplicate-key detection, line-exact positions inside block scalars (the HiveD
// config is a YAML document embedded in a `|` scalar), bounded nesting and alias
// expansion, and speed on 10,000-machine configs. See docs/architecture.md for why
// this is not yaml-cpp's loader.
//
// It reads YAML 1.2 as the official YAML test suite defines it (checked against
// libfyaml by tests/conformance): block and flow collections, all scalar styles,
// comments, anchors and aliases, tags with %TAG directives, several documents,
// complex keys (`? key`, flow collections as keys: Pair::key is then a
// collection, which get() and find() do not match), and YAML 1.1 merge keys (<<).
// Input that is not UTF-8 text, and old Mac line breaks (a lone CR), are refused.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pai::yaml {

// 1-based line and column (column counts bytes). line == 0 means "unknown".
struct Mark {
  uint32_t line = 0;
  uint32_t column = 0;
  friend bool operator==(const Mark&, const Mark&) = default;
};

enum class NodeKind : uint8_t { Null, Scalar, Sequence, Mapping };
enum class ScalarStyle : uint8_t { Plain, SingleQuoted, DoubleQuoted, Literal, Folded };

class Node;
struct Pair {
  Node* key;
  Node* value;
};

class Node {
 public:
  NodeKind kind() const { return kind_; }
  Mark mark() const { return mark_; }
  bool is_scalar() const { return kind_ == NodeKind::Scalar; }
  bool is_sequence() const { return kind_ == NodeKind::Sequence; }
  bool is_mapping() const { return kind_ == NodeKind::Mapping; }
  // An empty node, or a plain scalar spelled null / Null / NULL / ~.
  bool is_null() const;

  // Scalar text after unescaping and folding ("" for Null nodes).
  const std::string& scalar() const { return text_; }
  ScalarStyle style() const { return style_; }
  bool is_quoted() const {
    return style_ == ScalarStyle::SingleQuoted || style_ == ScalarStyle::DoubleQuoted;
  }
  // The node's tag in a form that needs no %TAG directive: "!!str", "!local",
  // "!<tag:example.com,2000:x>", "!" (non-specific); "" when untagged.
  const std::string& tag() const { return tag_; }
  // The tag as a full URI ("tag:yaml.org,2002:str"), or "!local" / "!"; "" when untagged.
  std::string resolved_tag() const;

  const std::vector<Node*>& items() const { return items_; }
  const std::vector<Pair>& pairs() const { return pairs_; }
  size_t size() const { return kind_ == NodeKind::Mapping ? pairs_.size() : items_.size(); }
  // First value whose key is a scalar equal to `key`; nullptr if none or not a mapping.
  const Node* get(std::string_view key) const;
  const Pair* find(std::string_view key) const;

  // Typed views of plain scalars (YAML 1.2 core schema). Quoted scalars and
  // scalars tagged !!str are strings and give nullopt here.
  std::optional<int64_t> as_int() const;
  std::optional<double> as_float() const;
  std::optional<bool> as_bool() const;
  // A human name of what this node is, for messages: "a mapping", "a list", "the string \"x\"".
  std::string describe() const;

  // Maps a 1-based (line, column) inside scalar() back to the source. Exact for
  // literal block scalars and single-line scalars; other multi-line scalars map
  // to the line where the scalar starts.
  Mark inner_mark(uint32_t line, uint32_t column) const;

 private:
  friend class Parser;
  friend class Document;
  NodeKind kind_ = NodeKind::Null;
  ScalarStyle style_ = ScalarStyle::Plain;
  Mark mark_;
  uint32_t content_line_ = 0;    // first source line of the scalar's content
  uint32_t content_column_ = 0;  // 1-based source column where content lines start
  uint64_t weight_ = 1;          // nodes in this subtree, aliases expanded (bomb guard)
  std::string text_;
  std::string tag_;
  std::vector<Node*> items_;
  std::vector<Pair> pairs_;
};

// A non-fatal finding of the reader, e.g. a duplicate key.
struct Warning {
  Mark mark;
  std::string code;  // "duplicate-key"
  std::string message;
  std::string hint;
  Mark other;  // e.g. where the key was first defined
};

// Syntax: the input is not YAML. Limit: it is, but exceeds LoadOptions.
enum class ErrorKind : uint8_t { Syntax, Limit };

struct SyntaxError {
  Mark mark;
  std::string message;
  std::string hint;
  ErrorKind kind = ErrorKind::Syntax;
};

struct LoadOptions {
  uint32_t max_depth = 200;
  uint64_t max_nodes = 20'000'000;  // after alias expansion
  // Expand YAML 1.1 merge keys (`<<: *base`), as PyYAML, Go's yaml and js-yaml do.
  bool merge_keys = true;
};

// The result of reading one file or string: its documents, then the first
// syntax error if there was one (the documents before it are kept).
class Stream {
 public:
  std::vector<const Node*> documents;
  std::vector<Warning> warnings;
  std::optional<SyntaxError> error;

  Stream() = default;
  Stream(Stream&&) = default;
  Stream& operator=(Stream&&) = default;

 private:
  friend class Parser;
  std::deque<Node> arena_;
};

Stream load(std::string_view text, const LoadOptions& options = {});

// Quotes `s` for YAML output when a plain scalar would change its meaning.
std::string quote_if_needed(std::string_view s);

}  // namespace pai::yaml

#pragma once
// The OpenPAI rest-server's command templates: mustache syntax with `<%` `%>`
// delimiters, of which the server keeps only text and variable tags.
//
// The tokenizer follows mustache.js 2.3 (the version the server uses):
// `<% name %>` is a variable; `<%# %>`, `<%^ %>`, `<%/ %>`, `<%! %>`, `<%> %>`,
// `<%& %>` and `<%{ }%>` are parsed (sections nest, `<%= =%>` changes the
// delimiters) but the server's render loop drops them and everything inside
// sections, and a line that holds only such tags loses its whitespace and
// newline. An unclosed tag or section makes the server fail the submission.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pai::job {

struct TemplateTag {
  char type = 0;     // 0 for a variable; '#', '^', '/', '!', '>', '&', '=' otherwise
  std::string name;  // the tag's content without delimiters and surrounding spaces
  size_t begin = 0;  // byte offsets of the whole tag in the template
  size_t end = 0;
  bool dropped =
      false;  // the server's renderer ignores it (every non-variable tag, and tags inside sections)
};

struct TemplateError {
  std::string message;  // "unclosed tag", "unclosed section \"x\"", ...
  size_t offset = 0;
};

// A piece of the output: literal text, or a variable to look up.
struct TemplatePiece {
  bool is_variable = false;
  std::string text;  // literal text, or the variable's name as written
  size_t begin = 0;  // offset of the piece in the template
};

struct ParsedTemplate {
  std::vector<TemplatePiece> pieces;  // what the server's render loop sees, in order
  std::vector<TemplateTag> tags;      // every tag, for diagnostics
  std::optional<TemplateError> error;
};

ParsedTemplate parse_template(std::string_view text);

// The server's variable lookup name: "[N]" becomes ".N".
std::string lookup_name(std::string_view name);

// Renders like the server: each variable is looked up (after the [N] rewrite);
// a value is appended, a miss leaves "<% name %>" with the rewritten name.
// The result is trimmed. On a template error the text is returned unchanged.
using Lookup = std::function<std::optional<std::string>(const std::string& name)>;
std::string render_template(const ParsedTemplate& t, const Lookup& lookup);

// JavaScript's String.prototype.trim() whitespace (ASCII subset plus NBSP and BOM in UTF-8).
std::string js_trim(std::string_view s);

}  // namespace pai::job

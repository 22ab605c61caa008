// paictl explain [CODE] [-o json|yaml]: the code catalogue (lib/diag/codes.h), one
// code in full or every code in a table.

#include "cmd_explain.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "diag/codes.h"
#include "exit_codes.h"
#include "flags.h"
#include "output/printer.h"
#include "util/strings.h"

namespace paictl {

namespace {

// What a code means as explain prints it: the catalogue's text (libpai names no flag),
// and for a warning of check config the flag that makes it fail a run.
std::string explain_meaning(const pai::diag::CodeInfo& c) {
  std::string m(c.meaning);
  if (c.severity == pai::diag::Severity::Warning && c.reporter == "check config")
    m += " --fail-on-warn makes it an exit 1.";
  return m;
}

Json explain_json(const pai::diag::CodeInfo& c) {
  return Json{{"code", c.code},
              {"name", c.name},
              {"severity", pai::diag::to_string(c.severity)},
              {"reportedBy", c.reporter},
              {"title", c.title},
              {"meaning", explain_meaning(c)},
              {"fix", c.fix},
              {"example", c.example}};
}

// `text` wrapped at 78 columns, each line indented by two spaces.
std::string explain_wrap(std::string_view text) {
  std::string out;
  for (std::string_view para : pai::util::split(text, '\n')) {
    std::string line = "  ";
    for (std::string_view word : pai::util::split(para, ' ')) {
      if (word.empty()) continue;
      if (line.size() > 2 && line.size() + 1 + word.size() > 78) {
        out += line + "\n";
        line = "  ";
      }
      if (line.size() > 2) line += ' ';
      line += word;
    }
    out += line + "\n";
  }
  return out;
}

std::string explain_indent(std::string_view text) {
  std::string out;
  for (std::string_view l : pai::util::split(text, '\n'))
    out += (l.empty() ? std::string() : "  " + std::string(l)) + "\n";
  return out;
}

void explain_print(const pai::diag::CodeInfo& c) {
  std::string s = std::string(c.code) + " " + std::string(c.name) + " (" +
                  std::string(pai::diag::to_string(c.severity)) + ")\n" + std::string(c.title) +
                  "\n\nReported by: paictl " + std::string(c.reporter) + "\n\nWhat it means:\n" +
                  explain_wrap(explain_meaning(c)) + "\nHow to fix it:\n" + explain_wrap(c.fix);
  if (!c.example.empty()) s += "\nExample:\n" + explain_indent(c.example);
  std::fwrite(s.data(), 1, s.size(), stdout);
}

int run_explain(const ExplainOptions& o, Globals&) {
  const auto& all = pai::diag::codes();
  if (o.code.empty()) {
    if (is_structured(o.output)) {
      Json items = Json::array();
      for (const auto& c : all) items.push_back(explain_json(c));
      print_document(list_document("codeList", items), o.output);
      return kExitOk;
    }
    Table t({{"CODE"}, {"SEVERITY"}, {"NAME"}, {"TITLE"}});
    for (const auto& c : all)
      t.add({std::string(c.code), std::string(pai::diag::to_string(c.severity)),
             std::string(c.name), std::string(c.title)});
    print_table(t);
    return kExitOk;
  }
  const pai::diag::CodeInfo* c = pai::diag::find_code(o.code);
  if (!c) return kExitUsage;  // validate_explain reported it
  if (is_structured(o.output))
    print_document(document("code", explain_json(*c)), o.output);
  else
    explain_print(*c);
  return kExitOk;
}

}  // namespace

void validate_explain(const ExplainOptions& o, Usage& u) {
  if (o.code.empty() || pai::diag::find_code(o.code)) return;
  std::vector<std::string> near;
  for (auto c : pai::diag::similar_codes(o.code)) near.emplace_back(c);
  u.error("unknown code \"" + o.code + "\"",
          near.empty() ? "'paictl explain' lists every code"
                       : "did you mean " + pai::util::join(near, ", ") + "?");
}

void build_explain(Flags& cmd, Globals& g) {
  auto o = std::make_shared<ExplainOptions>();
  cmd.add_option("CODE", o->code, "A diagnostic code, e.g. L001 (default: list every code)");
  add_output_option(cmd, o->output, g);
  cmd.footer(
      "Every code that check config, check hosts, job validate, plan, facts collect, cluster and "
      "simulate sweep report. Exit 2 for an unknown code (with the closest codes).");
  define_command(cmd, g, o, {.validate = validate_explain, .run = run_explain});
}

}  // namespace paictl

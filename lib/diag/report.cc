#include "diag/report.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "util/printable.h"

namespace pai::diag {

Summary summarize(const std::vector<Diagnostic>& diags, size_t files) {
  Summary s;
  s.files = files;
  for (const auto& d : diags) {
    if (d.severity == Severity::Error)
      ++s.errors;
    else if (d.severity == Severity::Warning)
      ++s.warnings;
    else
      ++s.infos;
  }
  return s;
}

namespace {
const char* kReset = "\x1b[0m";
const char* kBold = "\x1b[1m";
const char* kRed = "\x1b[1;31m";
const char* kYellow = "\x1b[1;33m";
const char* kCyan = "\x1b[1;36m";
const char* kBlue = "\x1b[1;34m";

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}
}  // namespace

std::string write_text(const std::vector<Diagnostic>& diags, size_t files,
                       const TextOptions& opts) {
  std::string out;
  auto paint = [&](const char* color, std::string_view text) {
    if (!opts.color) return std::string(text);
    return std::string(color) + std::string(text) + kReset;
  };
  auto place = [](const std::string& file, uint32_t line, uint32_t column) {
    std::string where = file.empty() ? std::string("paictl") : util::printable(file);
    if (line) {
      where += ":" + std::to_string(line);
      if (column) where += ":" + std::to_string(column);
    }
    return where;
  };
  for (const auto& d : diags) {
    std::string where = place(d.file, d.line, d.column);
    const char* color = d.severity == Severity::Error     ? kRed
                        : d.severity == Severity::Warning ? kYellow
                                                          : kCyan;
    out += paint(kBold, where + ":") + " ";
    out += paint(color, std::string(to_string(d.severity)) + "[" + util::printable(d.code) + "]") +
           ": ";
    // Everything below may come from the input files: control characters are
    // escaped so that a file cannot drive the terminal.
    if (!d.location.empty()) out += "[" + util::printable(d.location) + "] ";
    out += util::printable(d.message) + "\n";
    if (d.line && opts.source_line) {
      std::string raw = opts.source_line(d.file, d.line);
      if (!raw.empty()) {
        for (char& ch : raw)
          if (ch == '\t') ch = ' ';
        std::string src = util::printable(raw);
        std::string num = std::to_string(d.line);
        std::string pad(num.size(), ' ');
        out += " " + paint(kBlue, num + " |") + " " + src + "\n";
        if (d.column && d.column <= raw.size() + 1) {
          // The caret sits under the same character after escaping.
          size_t col = util::printable(std::string_view(raw).substr(0, d.column - 1)).size();
          out += " " + paint(kBlue, pad + " |") + " " + std::string(col, ' ') + paint(color, "^") +
                 "\n";
        }
      }
    }
    if (!d.hint.empty()) out += "  " + paint(kCyan, "hint:") + " " + util::printable(d.hint) + "\n";
    for (const auto& r : d.related) {
      out += paint(kBold, place(r.file.empty() ? d.file : r.file, r.line, r.column) + ":") + " " +
             paint(kCyan, "note:") + " " + util::printable(r.message) + "\n";
    }
  }
  if (opts.show_summary) {
    Summary s = summarize(diags, files);
    std::string line = plural(s.errors, "error") + ", " + plural(s.warnings, "warning") + " in " +
                       plural(s.files, "file");
    if (!diags.empty()) out += "\n";
    out += (s.errors ? paint(kRed, line) : s.warnings ? paint(kYellow, line) : line) + "\n";
  }
  return out;
}

nlohmann::json write_json(const std::vector<Diagnostic>& diags, size_t files) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& d : diags) {
    nlohmann::json j = {{"file", d.file},     {"line", d.line},
                        {"column", d.column}, {"severity", to_string(d.severity)},
                        {"code", d.code},     {"message", d.message},
                        {"hint", d.hint}};
    if (!d.location.empty()) j["location"] = d.location;
    if (!d.related.empty()) {
      nlohmann::json rel = nlohmann::json::array();
      for (const auto& r : d.related)
        rel.push_back({{"file", r.file.empty() ? d.file : r.file},
                       {"line", r.line},
                       {"column", r.column},
                       {"message", r.message}});
      j["related"] = std::move(rel);
    }
    arr.push_back(std::move(j));
  }
  Summary s = summarize(diags, files);
  return {
      {"diagnostics", std::move(arr)},
      {"summary",
       {{"errors", s.errors}, {"warnings", s.warnings}, {"infos", s.infos}, {"files", s.files}}}};
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters even as references.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
          out += '?';
        else
          out += c;
    }
  }
  return out;
}

std::string write_junit(const std::vector<Diagnostic>& diags, const std::vector<std::string>& files,
                        std::string_view suite_name, bool fail_on_warn) {
  std::vector<std::string> order = files;
  for (const auto& d : diags)
    if (std::find(order.begin(), order.end(), d.file) == order.end()) order.push_back(d.file);
  std::unordered_map<std::string, std::vector<const Diagnostic*>> by_file;
  for (const auto& d : diags) by_file[d.file].push_back(&d);

  size_t total_tests = 0, total_failures = 0;
  std::string body;
  for (const auto& f : order) {
    const auto& list = by_file[f];
    size_t failures = 0;
    std::string cases;
    for (const Diagnostic* d : list) {
      std::string name =
          d->code + " " + (d->file.empty() ? std::string() : d->file) +
          (d->line ? ":" + std::to_string(d->line) + ":" + std::to_string(d->column) : "");
      if (!d->location.empty()) name += " [" + d->location + "]";
      std::string text = d->message + (d->hint.empty() ? "" : "\nhint: " + d->hint);
      for (const auto& r : d->related) {
        const std::string& rf = r.file.empty() ? d->file : r.file;
        text += "\nnote: " + rf + (r.line ? ":" + std::to_string(r.line) : "") +
                (r.line && r.column ? ":" + std::to_string(r.column) : "") + ": " + r.message;
      }
      cases += "    <testcase classname=\"" + xml_escape(f.empty() ? std::string(suite_name) : f) +
               "\" name=\"" + xml_escape(name) + "\">\n";
      bool is_failure =
          d->severity == Severity::Error || (fail_on_warn && d->severity == Severity::Warning);
      if (is_failure) {
        ++failures;
        cases += "      <failure type=\"" + xml_escape(d->code) + "\" message=\"" +
                 xml_escape(d->message) + "\">" + xml_escape(text) + "</failure>\n";
      } else {
        cases += "      <system-out>" +
                 xml_escape(std::string(to_string(d->severity)) + ": " + text) + "</system-out>\n";
      }
      cases += "    </testcase>\n";
    }
    size_t tests = list.size();
    if (list.empty()) {
      tests = 1;
      cases += "    <testcase classname=\"" + xml_escape(f) + "\" name=\"valid\"/>\n";
    }
    total_tests += tests;
    total_failures += failures;
    body += "  <testsuite name=\"" + xml_escape(f.empty() ? std::string(suite_name) : f) +
            "\" tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
            "\" errors=\"0\">\n" + cases + "  </testsuite>\n";
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" +
         xml_escape(suite_name) + "\" tests=\"" + std::to_string(total_tests) + "\" failures=\"" +
         std::to_string(total_failures) + "\" errors=\"0\">\n" + body + "</testsuites>\n";
}

nlohmann::json write_sarif(const std::vector<Diagnostic>& diags, const std::vector<Rule>& rules,
                           std::string_view tool_version, std::string_view help_base_uri) {
  std::set<std::string> used;
  for (const auto& d : diags) used.insert(d.code);
  nlohmann::json jrules = nlohmann::json::array();
  std::unordered_map<std::string, size_t> rule_index;
  auto level = [](Severity s) {
    return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "note";
  };
  for (const auto& r : rules) {
    if (!used.count(std::string(r.code)) || rule_index.count(std::string(r.code))) continue;
    rule_index[std::string(r.code)] = jrules.size();
    std::string anchor(r.code);
    for (auto& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    nlohmann::json jr = {{"id", r.code},
                         {"name", r.name},
                         {"shortDescription", {{"text", r.summary}}},
                         {"defaultConfiguration", {{"level", level(r.severity)}}}};
    if (!help_base_uri.empty()) jr["helpUri"] = std::string(help_base_uri) + "#" + anchor;
    jrules.push_back(std::move(jr));
  }
  // Codes without catalogue metadata still get a rule entry so ruleIndex is valid.
  for (const auto& code : used) {
    if (rule_index.count(code)) continue;
    rule_index[code] = jrules.size();
    jrules.push_back({{"id", code}, {"shortDescription", {{"text", code}}}});
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& d : diags) {
    nlohmann::json res = {
        {"ruleId", d.code},
        {"ruleIndex", rule_index[d.code]},
        {"level", level(d.severity)},
        {"message", {{"text", d.hint.empty() ? d.message : d.message + ". Hint: " + d.hint}}}};
    nlohmann::json loc = nlohmann::json::object();
    if (!d.file.empty()) {
      nlohmann::json phys = {{"artifactLocation", {{"uri", d.file}}}};
      if (d.line) {
        nlohmann::json region = {{"startLine", d.line}};
        if (d.column) region["startColumn"] = d.column;
        phys["region"] = region;
      }
      loc["physicalLocation"] = phys;
    }
    if (!d.location.empty()) loc["logicalLocations"] = {{{"name", d.location}}};
    if (!loc.empty()) res["locations"] = nlohmann::json::array({loc});
    if (!d.related.empty()) {
      nlohmann::json rel = nlohmann::json::array();
      int id = 0;
      for (const auto& r : d.related) {
        const std::string& rf = r.file.empty() ? d.file : r.file;
        nlohmann::json rl = {{"id", id++}, {"message", {{"text", r.message}}}};
        if (!rf.empty()) {
          nlohmann::json phys = {{"artifactLocation", {{"uri", rf}}}};
          if (r.line) {
            nlohmann::json region = {{"startLine", r.line}};
            if (r.column) region["startColumn"] = r.column;
            phys["region"] = region;
          }
          rl["physicalLocation"] = phys;
        }
        rel.push_back(std::move(rl));
      }
      res["relatedLocations"] = std::move(rel);
    }
    results.push_back(std::move(res));
  }
  return {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"version", "2.1.0"},
      {"runs",
       {{{"tool", {{"driver", {{"name", "paictl"}, {"version", tool_version}, {"rules", jrules}}}}},
         {"results", results}}}}};
}

}  // namespace pai::diag

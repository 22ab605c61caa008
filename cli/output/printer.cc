#include "output/printer.h"
#include "flags.h"

#include "command.h"

#include <cmath>
#include <cstdio>

#include "util/printable.h"
#include "util/strings.h"
#include "util/yaml_emit.h"

namespace paictl {

const std::vector<std::string>& output_formats() {
  static const std::vector<std::string> k = {"table", "wide", "json", "yaml", "text", "name"};
  return k;
}

namespace {

Check output_validator() {
  Check c;
  c.custom = [](std::string& v) -> std::string {
    for (const auto& f : output_formats())
      if (v == f) return {};
    std::string guess = pai::util::did_you_mean(v, output_formats());
    return "\"" + v + "\" is not an output format" +
           (guess.empty() ? "" : "; did you mean \"" + guess + "\"?") +
           " (formats: table, wide, json, yaml, name; text is the same as table)";
  };
  c.name = "output format";
  return c;
}

}  // namespace

namespace {
// The command (its path) that was given -o name without listing names.
std::vector<std::string>& printer_refused_name() {
  static std::vector<std::string> path;
  return path;
}
}  // namespace

std::string output_help(const std::string& human, bool wide, NameOutput names) {
  std::string text = "Output format: " + human + " (default), ";
  if (wide) text += "wide, ";
  text +=
      names.each ? "json, yaml or name (" + std::string(names.each) + " a line)" : "json or yaml";
  return text;
}

void add_output_option(Flags& cmd, std::string& out, Globals& g, bool wide, NameOutput names) {
  const std::string human = out;
  CLI::App* app = &cmd.app();
  const bool lists_names = names.each != nullptr;
  auto set = [&out, human, wide, lists_names, app](const std::string& v) {
    if (v == "name" && !lists_names) {
      printer_refused_name() = command_path(*app);
      out = human;
    } else if (v == "table" || v == "text" || (v == "wide" && !wide)) {
      out = human;
    } else {
      out = v;
    }
  };
  cmd.add_option_function("-o,--output", set, output_help(human, wide, names))
      ->check(output_validator())
      ->type_name("FORMAT");
  // `paictl -o json COMMAND`: the global -o, parsed before the command starts.
  cmd.preparse_callback([set, &g]() {
    if (!g.output.empty()) set(g.output);
  });
}

std::string output_usage_error(const std::vector<std::string>& path) {
  if (printer_refused_name().empty() || printer_refused_name() != path) return {};
  std::string cmd = "paictl";
  for (const auto& p : path) cmd += " " + p;
  return "-o name: " + cmd + " lists no names";
}

void add_global_output_option(Flags& root, Globals& g) {
  root.add_option("-o,--output", g.output,
                  "Output format of every command: table (default), wide, json, yaml or name "
                  "(one name a line, where a command lists named things)")
      ->check(output_validator())
      ->type_name("FORMAT")
      ->trigger_on_parse();  // set before the command's own options are parsed
}

// --- tables ------------------------------------------------------------------

namespace {
size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}
}  // namespace

std::string render_table(const Table& t, bool wide) {
  std::vector<size_t> shown;
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (wide || !t.columns[i].wide_only) shown.push_back(i);
  bool header = false;
  for (size_t i : shown) header |= !t.columns[i].header.empty();
  std::vector<size_t> width(t.columns.size(), 0);
  // Cells hold text from servers and files: escape what a terminal would interpret.
  auto cell = [](const std::vector<std::string>& row, size_t i) {
    return i < row.size() ? pai::util::printable(row[i]) : std::string();
  };
  for (size_t i : shown) {
    if (header) width[i] = display_width(t.columns[i].header);
    for (const auto& r : t.rows) width[i] = std::max(width[i], display_width(cell(r, i)));
  }
  std::string out;
  auto line = [&](auto get) {
    std::string l;
    for (size_t k = 0; k < shown.size(); ++k) {
      size_t i = shown[k];
      std::string c = get(i);
      std::string pad(width[i] - display_width(c), ' ');
      if (k) l += "  ";
      l += t.columns[i].align_right ? pad + c : c + pad;
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  if (header) line([&](size_t i) { return t.columns[i].header; });
  for (const auto& r : t.rows) line([&](size_t i) { return cell(r, i); });
  return out;
}

void print_table(const Table& t, bool wide) {
  std::string s = render_table(t, wide);
  std::fwrite(s.data(), 1, s.size(), stdout);
}

// --- documents -----------------------------------------------------------------

std::string api_version(const std::string& kind) {
  // Documents whose shape changed: hivedWhy/v2 (reason codes, docs/hived.md).
  return "paictl." + kind + (kind == "hivedWhy" ? "/v2" : "/v1");
}

Json integral_numbers(Json j) {
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)
      return Json(static_cast<int64_t>(d));
    return j;
  }
  if (j.is_object() || j.is_array())
    for (auto& v : j) v = integral_numbers(std::move(v));
  return j;
}

Json document(const std::string& kind, Json body) {
  Json doc = Json::object();
  doc["apiVersion"] = api_version(kind);
  if (body.is_object())
    for (auto it = body.begin(); it != body.end(); ++it)
      if (it.key() != "apiVersion") doc[it.key()] = integral_numbers(std::move(it.value()));
  return doc;
}

Json list_document(const std::string& kind, Json items) {
  return document(kind, Json{{"items", std::move(items)}});
}

void print_document(const Json& doc, const std::string& format) {
  std::string text = format == "yaml"
                         ? pai::util::to_yaml(doc)
                         : doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
}

}  // namespace paictl

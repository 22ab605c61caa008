#pragma once
// The output layer: one -o/--output with the same meaning in every command,
// one text-table printer, and the JSON/YAML documents every command prints
// ({"apiVersion": "paictl.<kind>/v1", ...}, integers as integers).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app.h"
#include "flags.h"

namespace paictl {

using Json = nlohmann::ordered_json;

// Every -o value: table (the default; "text" is the same), wide (tables with
// more columns), json and yaml.
const std::vector<std::string>& output_formats();

// What -o name prints for a command that lists named things: one name a line,
// in the words of its help ("USER~NAME", "cluster name", "group name").
struct NameOutput {
  const char* each = nullptr;  // nullptr: the command lists no names; -o name is refused
};

// The help text of every -o: "Output format: table (default), wide, json, yaml
// or name (USER~NAME a line)". One wording for every command.
std::string output_help(const std::string& human, bool wide, NameOutput names = {});

// Adds -o/--output to `cmd`, writing into `out`. `out` holds the command's human
// format name ("table" or "text") before parsing; -o table and -o text both set
// that name, -o wide sets "wide" when the command has wide tables (`wide`) and the
// human name otherwise. -o name sets "name" when the command lists named things
// (`names.each`); elsewhere it is a usage error (exit 2, with a hint), which the
// dispatcher reports with the command's own (output_usage_error). An -o given
// before the command (`paictl -o json ...`) is the default.
void add_output_option(Flags& cmd, std::string& out, Globals& g, bool wide = false,
                       NameOutput names = {});
// The usage error of an -o name given to the command at `path`, which lists no
// names ("" when there is none).
std::string output_usage_error(const std::vector<std::string>& path);
inline constexpr const char* kOutputNameHint =
    "-o name prints one name a line for commands that list named things (cluster list, job "
    "list, job tag list, hived groups); here use -o table, json or yaml";
// The global -o on the root app (into g.output).
void add_global_output_option(Flags& root, Globals& g);

// True for json and yaml.
inline bool is_structured(const std::string& format) {
  return format == "json" || format == "yaml";
}

// --- tables ------------------------------------------------------------------

struct Column {
  std::string header;
  bool wide_only = false;    // shown only with -o wide
  bool align_right = false;  // numbers
};

// A text table: columns padded to their widest cell (UTF-8 aware), two spaces
// apart, no trailing blanks. An empty header row is left out.
struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;

  Table() = default;
  explicit Table(std::vector<Column> c) : columns(std::move(c)) {}
  Table& add(std::vector<std::string> row) {
    rows.push_back(std::move(row));
    return *this;
  }
};
std::string render_table(const Table& t, bool wide = false);
void print_table(const Table& t, bool wide = false);  // on stdout

// --- documents -----------------------------------------------------------------

// "paictl.<kind>/v1"
std::string api_version(const std::string& kind);

// {"apiVersion": "paictl.<kind>/v1", ...body}. Whole numbers stored as floating
// point (GPU counts, CPUs) become integers.
Json document(const std::string& kind, Json body);
// {"apiVersion": ..., "items": [...]}
Json list_document(const std::string& kind, Json items);

// Prints `doc` as JSON (2-space indent) or YAML on stdout.
void print_document(const Json& doc, const std::string& format);

// Whole numbers that are doubles become integers, recursively.
Json integral_numbers(Json j);

}  // namespace paictl

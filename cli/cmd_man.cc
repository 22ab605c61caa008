// paictl __man DIR: writes paictl.1 and paictl-<command>.1 for every command of
// the table, from the same CLI11 tree that --help prints. The build runs it
// (CMakeLists.txt) and `cmake --install` installs the pages.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app.h"
#include "command.h"
#include "command_tree.h"
#include "exit_codes.h"
#include "output/output.h"
#include "util/fs.h"
#include "util/version.h"

namespace paictl {

namespace {

// Text for roff: backslashes escaped, no line starting with a control character.
std::string roff(const std::string& s) {
  std::string out;
  bool bol = true;
  for (char c : s) {
    if (bol && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    bol = c == '\n';
  }
  return out;
}

std::string page_name(const std::vector<std::string>& path) {
  std::string n = "paictl";
  for (const auto& p : path) n += "-" + p;
  return n;
}

std::string option_line(const CLI::Option* o) {
  std::string names;
  for (const auto& n : option_names(o)) names += (names.empty() ? "" : ", ") + n;
  if (o->get_positional()) return o->get_name();
  std::string type = o->get_type_name();
  if (o->get_type_size() != 0 && !type.empty()) names += " " + type;
  return names;
}

std::string man_page(const std::vector<std::string>& path, const CLI::App* app) {
  const std::string name = page_name(path);
  const std::string cmd = command_line(path);
  std::string upper;
  for (char c : name) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  std::string m = ".TH " + upper + " 1 \"\" \"paictl " + pai::kVersion + "\" \"paictl manual\"\n";
  m += ".SH NAME\n" + roff(name) + " \\- " + roff(app->get_description()) + "\n";
  m += ".SH SYNOPSIS\n.B " + roff(cmd) + "\n";
  std::string usage;
  if (!app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }).empty())
    usage += " COMMAND";
  usage += " [OPTIONS]";
  for (const CLI::Option* o : app->get_options())
    if (o->get_positional())
      usage += " " + o->get_name() + (o->get_items_expected_max() > 1 ? "..." : "");
  m += roff(usage.substr(1)) + "\n";
  m += ".SH DESCRIPTION\n" + roff(app->get_description()) + ".\n";
  auto subs = app->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
  if (!subs.empty()) {
    m += ".SH COMMANDS\n";
    for (const CLI::App* s : subs) {
      std::vector<std::string> sp = path;
      sp.push_back(s->get_name());
      m += ".TP\n.B " + roff(command_line(sp)) + "\n" + roff(s->get_description()) + " (see\n.BR " +
           roff(page_name(sp)) + " (1)).\n";
    }
  }
  m += ".SH OPTIONS\n";
  std::vector<const CLI::Option*> opts;
  for (const CLI::App* a = app; a; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      if (a != app && (o->get_positional() || o->get_name() == "--help")) continue;
      opts.push_back(o);
    }
  }
  for (const CLI::Option* o : opts) {
    m += ".TP\n.B " + roff(option_line(o)) + "\n" + roff(o->get_description()) + "\n";
  }
  std::string footer = app->get_footer();
  if (!footer.empty()) {
    // The footer's "EXIT STATUS:" and "EXAMPLES:" become sections; the rest are notes.
    std::string section = "NOTES";
    std::string body;
    auto flush = [&]() {
      while (!body.empty() && body.back() == '\n') body.pop_back();
      if (!body.empty()) m += ".SH " + section + "\n.nf\n" + roff(body) + "\n.fi\n";
      body.clear();
    };
    size_t p = 0;
    while (p < footer.size()) {
      size_t e = footer.find('\n', p);
      if (e == std::string::npos) e = footer.size();
      std::string line = footer.substr(p, e - p);
      p = e + 1;
      if (line == "EXIT STATUS:" || line == "EXAMPLES:") {
        flush();
        section = line.substr(0, line.size() - 1);
        continue;
      }
      body += line + "\n";
    }
    flush();
  }
  m += ".SH SEE ALSO\n";
  std::vector<std::string> parent(path.begin(), path.end() - (path.empty() ? 0 : 1));
  m += path.empty() ? ".BR paictl\\-help (1)\n" : ".BR " + roff(page_name(parent)) + " (1)\n";
  return m;
}

}  // namespace

int run_man(const std::string& dir, Globals&);

void build_internal_man(Flags& cmd, Globals& g) {
  auto dir = std::make_shared<std::string>();
  cmd.add_option("DIR", *dir, "Where to write the pages")->required();
  define_command(cmd, g, dir, {.run = [](const auto& o, Globals& g) { return run_man(o, g); }});
}

int run_man(const std::string& dir_name, Globals&) {
  const std::string* dir = &dir_name;
  {
    if (auto err = pai::util::make_directories(*dir); !err.ok()) {
      print_error("cannot create " + *dir + ": " + err.error().message);
      return kExitUsage;
    }
    const CommandTree& t = command_tree();
    std::vector<std::vector<std::string>> paths = {{}};
    for (const auto& c : command_table())
      if (!c.hidden) paths.push_back(c.path);
    for (const auto& p : paths) {
      std::string file = *dir + "/" + page_name(p) + ".1";
      if (auto err = pai::util::write_file_atomic(file, man_page(p, t.apps.at(p)), 0644);
          !err.ok()) {
        print_error("cannot write " + file + ": " + err.error().message);
        return kExitUsage;
      }
    }
    return kExitOk;
  }
}

}  // namespace paictl

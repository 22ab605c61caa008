#pragma once
// The command-line flags of one command, without CLI11's headers.
//
// CLI11 is header-only: every file that includes <CLI/CLI.hpp> and adds an
// option compiles its parser, formatter and config reader again (about 6 s of
// CPU a file at -O2 -g, most of a command file's build). The commands declare
// their flags through this small interface instead; flags.cc is the one file
// of the commands that compiles CLI11's option code, and the framework files
// (main.cc, command.cc, commands.cc, help, completion, man pages) that walk the
// command tree use CLI11 directly.
//
// The names and the chaining follow CLI11's (`cmd.add_option(...)->type_name("N")
// ->check(Range(1, 10))`), and every check is CLI11's own validator, so the
// help text and the messages of a bad value are CLI11's.
//
// Flag objects live as long as the process (as CLI11's options do): a Flag*
// may be kept in a command's callback to ask whether the flag was given.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace paictl {

// A check of an option's value, made into CLI11's validator by the flag.
struct Check {
  enum class Kind { RangeInt, RangeDouble, Member, Positive, NonNegative, Custom };
  Kind kind = Kind::Custom;
  double lo = 0, hi = 0;
  std::vector<std::string> members;
  // Custom: returns "" when `value` is good, else the message; may rewrite it.
  std::function<std::string(std::string& value)> custom;
  std::string description;  // Custom: the text help shows beside the type
  std::string name;         // Custom: the validator's name
};
// CLI::Range: an int range and a double range print their bounds differently
// ("1 to 10" and "0.100000 to 3600.000000"), as CLI11 does.
Check Range(int lo, int hi);
Check Range(double lo, double hi);
Check IsMember(std::vector<std::string> members);
extern const Check PositiveNumber;
extern const Check NonNegativeNumber;

class Flag {
 public:
  explicit Flag(CLI::Option* option) : option_(option) {}
  Flag* type_name(const std::string& name);
  Flag* check(const Check& c);
  Flag* required(bool value = true);
  Flag* capture_default_str();
  Flag* expected(int count);
  Flag* expected(int min, int max);
  Flag* delimiter(char c);
  Flag* group(const std::string& name);
  Flag* description(const std::string& text);
  // Calls `fn` with each value as it is parsed.
  Flag* each(std::function<void(const std::string&)> fn);
  // Sets the value while the command line is parsed, not after.
  Flag* trigger_on_parse(bool value = true);
  Flag* allow_extra_args(bool value = true);
  // How many times the flag was given.
  size_t count() const;
  CLI::Option* option() const { return option_; }

 private:
  CLI::Option* option_;
};

// The flags of one command (a CLI::App), for its build function.
class Flags {
 public:
  explicit Flags(CLI::App& app) : app_(&app) {}
  // The Flags of `app`, made once and kept for the life of the process, so that a
  // command's callbacks may keep a pointer to it.
  static Flags& of(CLI::App& app);

  Flag* add_option(const std::string& names, std::string& into, const std::string& text = {});
  Flag* add_option(const std::string& names, int& into, const std::string& text = {});
  Flag* add_option(const std::string& names, int64_t& into, const std::string& text = {});
  Flag* add_option(const std::string& names, uint64_t& into, const std::string& text = {});
  Flag* add_option(const std::string& names, double& into, const std::string& text = {});
  Flag* add_option(const std::string& names, std::vector<std::string>& into,
                   const std::string& text = {});
  Flag* add_option(const std::string& names, std::vector<int>& into, const std::string& text = {});
  Flag* add_option(const std::string& names, std::optional<std::string>& into,
                   const std::string& text = {});
  // An option whose value goes to `fn` instead of a variable.
  Flag* add_option_function(const std::string& names, std::function<void(const std::string&)> fn,
                            const std::string& text = {});
  Flag* add_flag(const std::string& names, bool& into, const std::string& text = {});
  Flag* add_flag(const std::string& names, int& count, const std::string& text = {});
  // The flag named `name` added earlier (by a shared helper); it must exist.
  Flag* get_option(const std::string& name);
  // How many times the flag named `name` was given.
  size_t count(const std::string& name) const;
  // Text after the options in --help.
  Flags& footer(const std::string& text);
  // Calls `fn` before the command's own options are parsed.
  Flags& preparse_callback(std::function<void()> fn);
  Flags& allow_extras(bool value = true);
  // Between `min` and `max` subcommands must be given (CLI11's require_subcommand).
  Flags& require_subcommand(int min, int max);
  // Whether a subcommand of this command was given.
  bool subcommand_given() const;
  // The flags given on the command line, in the order they came (a flag given
  // twice comes twice); flags added without this interface are left out.
  std::vector<const Flag*> parse_order() const;
  // The arguments CLI11 could not match (with allow_extras).
  std::vector<std::string> remaining() const;

  CLI::App& app() const { return *app_; }

 private:
  CLI::App* app_;
};

}  // namespace paictl

#include "flags.h"

#include <deque>
#include <map>
#include <mutex>
#include <utility>

#include <CLI/CLI.hpp>

namespace paictl {

namespace {

std::mutex& arena_mutex() {
  static std::mutex mu;
  return mu;
}

// Every Flag made, one per option, for the life of the process (as CLI11 keeps
// its options).
std::map<const CLI::Option*, Flag*>& flag_of() {
  static std::map<const CLI::Option*, Flag*> m;
  return m;
}

Flag* keep(CLI::Option* option) {
  static std::deque<Flag> flags;
  std::lock_guard lock(arena_mutex());
  auto [it, added] = flag_of().emplace(option, nullptr);
  if (added) {
    flags.emplace_back(option);
    it->second = &flags.back();
  }
  return it->second;
}

CLI::Validator validator_of(const Check& c) {
  switch (c.kind) {
    case Check::Kind::RangeInt:
      return CLI::Range(static_cast<int>(c.lo), static_cast<int>(c.hi));
    case Check::Kind::RangeDouble:
      return CLI::Range(c.lo, c.hi);
    case Check::Kind::Member:
      return CLI::IsMember(c.members);
    case Check::Kind::Positive:
      return CLI::PositiveNumber;
    case Check::Kind::NonNegative:
      return CLI::NonNegativeNumber;
    case Check::Kind::Custom:
      break;
  }
  auto fn = c.custom;
  return CLI::Validator([fn](std::string& v) { return fn ? fn(v) : std::string(); }, c.description,
                        c.name);
}

}  // namespace

Check Range(int lo, int hi) {
  Check c;
  c.kind = Check::Kind::RangeInt;
  c.lo = lo;
  c.hi = hi;
  return c;
}

Check Range(double lo, double hi) {
  Check c;
  c.kind = Check::Kind::RangeDouble;
  c.lo = lo;
  c.hi = hi;
  return c;
}

Check IsMember(std::vector<std::string> members) {
  Check c;
  c.kind = Check::Kind::Member;
  c.members = std::move(members);
  return c;
}

const Check PositiveNumber = [] {
  Check c;
  c.kind = Check::Kind::Positive;
  return c;
}();

const Check NonNegativeNumber = [] {
  Check c;
  c.kind = Check::Kind::NonNegative;
  return c;
}();

// --- Flag ------------------------------------------------------------------------

Flag* Flag::type_name(const std::string& name) {
  option_->type_name(name);
  return this;
}

Flag* Flag::check(const Check& c) {
  option_->check(validator_of(c));
  return this;
}

Flag* Flag::required(bool value) {
  option_->required(value);
  return this;
}

Flag* Flag::capture_default_str() {
  option_->capture_default_str();
  return this;
}

Flag* Flag::expected(int count) {
  option_->expected(count);
  return this;
}

Flag* Flag::expected(int min, int max) {
  option_->expected(min, max);
  return this;
}

Flag* Flag::delimiter(char c) {
  option_->delimiter(c);
  return this;
}

Flag* Flag::group(const std::string& name) {
  option_->group(name);
  return this;
}

Flag* Flag::description(const std::string& text) {
  option_->description(text);
  return this;
}

Flag* Flag::each(std::function<void(const std::string&)> fn) {
  option_->each(std::move(fn));
  return this;
}

Flag* Flag::trigger_on_parse(bool value) {
  option_->trigger_on_parse(value);
  return this;
}

Flag* Flag::allow_extra_args(bool value) {
  option_->allow_extra_args(value);
  return this;
}

size_t Flag::count() const {
  return option_->count();
}

// --- Flags -----------------------------------------------------------------------

Flags& Flags::of(CLI::App& app) {
  static std::deque<Flags> all;
  static std::map<const CLI::App*, Flags*> index;
  std::lock_guard lock(arena_mutex());
  auto [it, added] = index.emplace(&app, nullptr);
  if (added) {
    all.emplace_back(app);
    it->second = &all.back();
  }
  return *it->second;
}

Flag* Flags::add_option(const std::string& names, std::string& into, const std::string& text) {
  return keep(app_->add_option(names, into, text));
}

Flag* Flags::add_option(const std::string& names, int& into, const std::string& text) {
  return keep(app_->add_option(names, into, text));
}

Flag* Flags::add_option(const std::string& names, int64_t& into, const std::string& text) {
  return keep(app_->add_option(names, into, text));
}

Flag* Flags::add_option(const std::string& names, uint64_t& into, const std::string& text) {
  return keep(app_->add_option(names, into, text));
}

Flag* Flags::add_option(const std::string& names, double& into, const std::string& text) {
  return keep(app_->add_option(names, into, text));
}

Flag* Flags::add_option(const std::string& names, std::vector<std::string>& into,
                        const std::string& text) {
  return keep(app_->add_option(names, into, text));
}

Flag* Flags::add_option(const std::string& names, std::vector<int>& into, const std::string& text) {
  return keep(app_->add_option(names, into, text));
}

Flag* Flags::add_option(const std::string& names, std::optional<std::string>& into,
                        const std::string& text) {
  return keep(app_->add_option(names, into, text));
}

Flag* Flags::add_option_function(const std::string& names,
                                 std::function<void(const std::string&)> fn,
                                 const std::string& text) {
  return keep(app_->add_option_function<std::string>(names, std::move(fn), text));
}

Flag* Flags::add_flag(const std::string& names, bool& into, const std::string& text) {
  return keep(app_->add_flag(names, into, text));
}

Flag* Flags::add_flag(const std::string& names, int& count, const std::string& text) {
  return keep(app_->add_flag(names, count, text));
}

Flag* Flags::get_option(const std::string& name) {
  return keep(app_->get_option(name));
}

size_t Flags::count(const std::string& name) const {
  return app_->count(name);
}

Flags& Flags::footer(const std::string& text) {
  app_->footer(text);
  return *this;
}

Flags& Flags::preparse_callback(std::function<void()> fn) {
  app_->preparse_callback([fn = std::move(fn)](size_t) { fn(); });
  return *this;
}

Flags& Flags::allow_extras(bool value) {
  app_->allow_extras(value);
  return *this;
}

Flags& Flags::require_subcommand(int min, int max) {
  app_->require_subcommand(min, max);
  return *this;
}

bool Flags::subcommand_given() const {
  return !app_->get_subcommands().empty();
}

std::vector<const Flag*> Flags::parse_order() const {
  std::vector<const Flag*> out;
  std::lock_guard lock(arena_mutex());
  for (const CLI::Option* o : app_->parse_order()) {
    auto it = flag_of().find(o);
    if (it != flag_of().end()) out.push_back(it->second);
  }
  return out;
}

std::vector<std::string> Flags::remaining() const {
  return app_->remaining();
}

}  // namespace paictl

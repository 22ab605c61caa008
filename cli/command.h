#pragma once
// The shape of every paictl command (kubectl's options + complete/validate/run).
//
// A command is its Options struct, filled by CLI11 from the command line, and
// three steps that the one dispatcher (dispatch_command, command.cc) runs in order:
//
//   complete(Options&, const Globals&)  fills what can be derived: the registry's
//                                       current cluster, the files of a cluster
//                                       directory, environment variables
//                                       (PAICTL_ARM_ENDPOINT...), expanded paths
//   validate(const Options&, Usage&)    checks every flag, value and combination
//                                       without touching the network or a host,
//                                       and reports ALL usage errors at once
//   run(const Options&, Globals&)       does the work; returns the exit code
//
// When validate reported anything, the dispatcher prints every error (and its
// hint) through the output layer, then "Run 'paictl CMD --help' for usage.",
// and exits 2 without running the command: so a bad flag combination never
// meets an unreachable cluster, a slow SSH host or a half-written file, and
// --dry-run runs exactly the checks the real run does.
//
// Commands declare themselves with define_command() in their build function:
//
//   auto o = std::make_shared<StopOptions>();
//   ... cmd.add_option(..., o->field) ...
//   define_command(cmd, g, o, {.validate = validate_stop, .run = run_stop});

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app.h"
#include "flags.h"

namespace CLI {
class App;
}

namespace paictl {

// The usage errors validate found, in the order it found them.
class Usage {
 public:
  struct Error {
    std::string message;
    std::string hint;  // "" for none
  };
  void error(std::string message, std::string hint = "");
  // error() when `condition` holds; returns `condition`.
  bool error_if(bool condition, std::string message, std::string hint = "");
  bool ok() const { return errors_.empty(); }
  const std::vector<Error>& errors() const { return errors_; }
  // The messages only (for tests): "a; b; c".
  std::string summary() const;

 private:
  std::vector<Error> errors_;
};

template <class Options>
struct CommandSteps {
  std::function<void(Options&, const Globals&)> complete = nullptr;  // may be empty
  std::function<void(const Options&, Usage&)> validate = nullptr;    // may be empty
  std::function<int(const Options&, Globals&)> run = nullptr;
};

// Prints every usage error ("paictl: error: ...", "  hint: ..."), then how to get
// the help of the command at `path`. Returns kExitUsage.
int report_usage(const Usage& u, const std::vector<std::string>& path);

// The dispatcher: complete, then validate (usage errors: report_usage, exit 2),
// then run. Every command goes through here.
int dispatch_command(const std::vector<std::string>& path, const std::function<void()>& complete,
                     const std::function<void(Usage&)>& validate, const std::function<int()>& run);

// The path of `cmd` below the root ({"job", "stop"}).
std::vector<std::string> command_path(const CLI::App& cmd);

// Makes `cmd` run `steps` over `*o` (the options CLI11 fills) through dispatch_command.
void set_command_callback(CLI::App& cmd, std::function<void()> callback);

template <class Options>
void define_command(Flags& cmd, Globals& g, std::shared_ptr<Options> o,
                    CommandSteps<Options> steps) {
  CLI::App* app = &cmd.app();
  set_command_callback(*app, [app, &g, o, steps]() {
    g.exit_code = dispatch_command(
        command_path(*app),
        [&]() {
          if (steps.complete) steps.complete(*o, g);
        },
        [&](Usage& u) {
          if (steps.validate) steps.validate(*o, u);
        },
        [&]() { return steps.run(*o, g); });
  });
}

}  // namespace paictl

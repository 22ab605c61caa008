// paictl completion bash|zsh|fish, and the hidden paictl __complete WORD... that
// the scripts call. The scripts are thin: every answer comes from the command
// table and the CLI11 tree built from it, so they never go stale.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app.h"
#include "cluster/registry.h"
#include "command.h"
#include "command_tree.h"
#include "exit_codes.h"
#include "output/output.h"
#include "output/printer.h"
#include "scheduler/policy.h"

namespace paictl {

namespace {

bool starts_with(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

// The option of `app` (or of the apps it falls through to) spelt `name`.
const CLI::Option* find_option(const CLI::App* app, const std::string& name) {
  for (const CLI::App* a = app; a; a = a->get_parent())
    for (const CLI::Option* o : a->get_options())
      for (const auto& n : option_names(o))
        if (n == name) return o;
  return nullptr;
}

bool takes_value(const CLI::Option* o) {
  return o && o->get_type_size() != 0;
}

std::vector<std::string> cluster_names() {
  pai::diag::List ignore;
  auto reg = pai::cluster::Registry::load(pai::cluster::Registry::default_paths(), ignore);
  std::vector<std::string> out;
  for (const auto& c : reg.clusters()) out.push_back(c.name);
  return out;
}

// The choices CLI11 shows for an IsMember check: "TEXT:{split,exclude}".
std::vector<std::string> member_choices(const CLI::Option* o) {
  std::string t = o->get_type_name();
  size_t a = t.find('{'), b = t.find('}', a == std::string::npos ? 0 : a);
  std::vector<std::string> out;
  if (a == std::string::npos || b == std::string::npos) return out;
  std::string inner = t.substr(a + 1, b - a - 1);
  for (size_t p = 0; p <= inner.size();) {
    size_t c = inner.find(',', p);
    if (c == std::string::npos) c = inner.size();
    std::string v = inner.substr(p, c - p);
    while (!v.empty() && v.front() == ' ') v.erase(v.begin());
    if (!v.empty()) out.push_back(v);
    p = c + 1;
  }
  return out;
}

struct Answer {
  std::vector<std::string> words;
  bool files = false;
};

Answer option_values(const CLI::Option* o, const std::string& cur) {
  Answer a;
  const std::string name = o->get_lnames().empty() ? "" : o->get_lnames()[0];
  if (name == "output") {
    a.words = output_formats();
  } else if (name == "cluster") {
    a.words = cluster_names();
    a.words.push_back("auto");
  } else if (name == "profile") {
    a.words = profile_names();
  } else if (name == "policy") {
    // A comma list: complete the part after the last comma.
    std::string head = cur.substr(0, cur.rfind(',') == std::string::npos ? 0 : cur.rfind(',') + 1);
    for (const auto& p : pai::scheduler::policy_names()) a.words.push_back(head + p);
  } else if (std::vector<std::string> m = member_choices(o); !m.empty()) {
    a.words = m;
  } else {
    const std::string t = o->get_type_name();
    a.files = t.find("FILE") != std::string::npos || t.find("DIR") != std::string::npos ||
              t.find("PATH") != std::string::npos || t == "TEXT" || t.empty();
  }
  return a;
}

Answer positional_values(const std::vector<std::string>& path,
                         const std::vector<std::string>& args) {
  Answer a;
  const std::string cmd = command_line(path).substr(std::min<size_t>(7, command_line(path).size()));
  if (cmd == "cluster use" || cmd == "cluster remove" || cmd == "cluster status" ||
      cmd == "cluster prefer") {
    a.words = cluster_names();
  } else if (cmd == "completion") {
    if (args.empty()) a.words = {"bash", "zsh", "fish"};
  } else if (cmd == "help") {
    std::vector<std::string> p;
    for (const auto& w : args) {
      auto names = subcommand_names(p);
      if (std::find(names.begin(), names.end(), w) == names.end()) return a;
      p.push_back(w);
    }
    a.words = subcommand_names(p);
  } else if (cmd == "version") {
  } else if (starts_with(cmd, "job ") && cmd != "job validate" && cmd != "job render" &&
             cmd != "job submit") {
    // Job names live on the cluster: not cheap, so nothing.
  } else {
    a.files = true;
  }
  return a;
}

}  // namespace

int complete_words(const std::vector<std::string>& all) {
  const CommandTree& t = command_tree();
  const std::string cur = all.empty() ? "" : all.back();
  std::vector<std::string> words(all.begin(), all.end() - (all.empty() ? 0 : 1));
  std::vector<std::string> path, args;
  const CLI::Option* pending = nullptr;  // an option whose value is `cur`
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const CLI::App* app = t.apps.at(path);
    if (w.size() > 1 && w[0] == '-') {
      if (w == "--") break;
      const CLI::Option* o = find_option(app, w.substr(0, w.find('=')));
      if (takes_value(o) && w.find('=') == std::string::npos) {
        if (i + 1 == words.size())
          pending = o;
        else
          ++i;
      }
      continue;
    }
    if (is_group(path)) {
      auto names = subcommand_names(path);
      if (std::find(names.begin(), names.end(), w) != names.end()) {
        path.push_back(w);
        continue;
      }
    }
    args.push_back(w);
  }
  Answer a;
  if (pending) {
    a = option_values(pending, cur);
  } else if (starts_with(cur, "-")) {
    for (const CLI::App* app = t.apps.at(path); app; app = app->get_parent())
      for (const CLI::Option* o : app->get_options())
        for (const auto& n : option_names(o))
          if (std::find(a.words.begin(), a.words.end(), n) == a.words.end()) a.words.push_back(n);
  } else if (is_group(path) && args.empty()) {
    a.words = subcommand_names(path);
  } else {
    a = positional_values(path, args);
  }
  for (const auto& w : a.words)
    if (starts_with(w, cur)) std::printf("%s\n", w.c_str());
  if (a.files) std::printf(":files\n");
  return kExitOk;
}

namespace {

const char* kBash = R"(# bash completion for paictl; load it with: source <(paictl completion bash)
_paictl() {
  local cur=${COMP_WORDS[COMP_CWORD]} line files=0
  local IFS=$'\n'
  COMPREPLY=()
  for line in $("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null); do
    if [ "$line" = ":files" ]; then files=1; else COMPREPLY+=("$line"); fi
  done
  if [ "$files" = 1 ]; then
    compopt -o filenames 2>/dev/null
    COMPREPLY+=($(compgen -f -- "$cur"))
  fi
}
complete -F _paictl paictl
)";

const char* kZsh = R"(#compdef paictl
# zsh completion for paictl: paictl completion zsh > "${fpath[1]}/_paictl"
_paictl() {
  local -a found
  local line files=0
  for line in "${(@f)$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}"; do
    if [[ $line == :files ]]; then files=1; elif [[ -n $line ]]; then found+=("$line"); fi
  done
  (( ${#found} )) && compadd -Q -- "${found[@]}"
  (( files )) && _files
  return 0
}
compdef _paictl paictl
)";

const char* kFish =
    R"(# fish completion for paictl: paictl completion fish > ~/.config/fish/completions/paictl.fish
function __paictl_complete
    set -l words (commandline -opc) (commandline -ct)
    for line in ($words[1] __complete $words[2..-1] 2>/dev/null)
        if test "$line" = ":files"
            __fish_complete_path (commandline -ct)
        else
            echo $line
        end
    end
end
complete -c paictl -f -a '(__paictl_complete)'
)";

}  // namespace

void build_completion(Flags& cmd, Globals& g) {
  auto shell = std::make_shared<std::string>();
  cmd.add_option("SHELL", *shell, "bash, zsh or fish")
      ->required()
      ->check(IsMember({"bash", "zsh", "fish"}));
  cmd.footer(
      "The script asks paictl itself for every completion: commands, subcommands, flags, -o "
      "values,\n"
      "registered cluster names (--cluster, cluster use/remove/status), machine profiles "
      "(--profile)\n"
      "and scheduler policies (--policy).");
  define_command(cmd, g, shell, {.run = [](const std::string& shell, Globals&) {
                   const char* s = shell == "bash" ? kBash : shell == "zsh" ? kZsh : kFish;
                   std::fputs(s, stdout);
                   return int(kExitOk);
                 }});
}

void build_internal_complete(Flags& cmd, Globals& g) {
  // Reached only through paictl_main, which hands the raw words to complete_words()
  // before CLI11 could take them for options.
  cmd.allow_extras();
  // Nothing to run here: the words never reach CLI11.
  define_command(cmd, g, std::make_shared<int>(0),
                 {.run = [](const int&, Globals&) { return int(kExitOk); }});
}

}  // namespace paictl

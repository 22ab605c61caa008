#include "remote/ssh_config.h"

#include <glob.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <unordered_map>

#include "util/fs.h"
#include "util/strings.h"

namespace pai::remote {

namespace {

constexpr int kMaxIncludeDepth = 16;

void warn(SshConfig& c, const std::string& file, uint32_t line, std::string msg,
          std::string hint = {}) {
  c.diagnostics.add("SSH001", diag::Severity::Warning, file, line, 0, std::move(msg),
                    std::move(hint));
}
void error(SshConfig& c, const std::string& file, uint32_t line, std::string msg,
           std::string hint = {}) {
  c.diagnostics.add("SSH002", diag::Severity::Error, file, line, 0, std::move(msg),
                    std::move(hint));
}

// Every keyword of ssh_config(5) (OpenSSH 9.x, lower case): OpenSSH refuses a
// file with any other ("Bad configuration option"), unless IgnoreUnknown names it.
const std::vector<std::string>& ssh_config_keywords() {
  static const std::vector<std::string> k = {
      "addkeystoagent", "addressfamily", "batchmode", "bindaddress", "bindinterface",
      "canonicaldomains", "canonicalizefallbacklocal", "canonicalizehostname",
      "canonicalizemaxdots", "canonicalizepermittedcnames", "casignaturealgorithms",
      "certificatefile", "channeltimeout", "checkhostip", "ciphers", "clearallforwardings",
      "compression", "connectionattempts", "connecttimeout", "controlmaster", "controlpath",
      "controlpersist", "dynamicforward", "enableescapecommandline", "enablesshkeysign",
      "escapechar", "exitonforwardfailure", "fingerprinthash", "forkafterauthentication",
      "forwardagent", "forwardx11", "forwardx11timeout", "forwardx11trusted", "gatewayports",
      "globalknownhostsfile", "gssapiauthentication", "gssapidelegatecredentials", "hashknownhosts",
      "host", "hostbasedacceptedalgorithms", "hostbasedauthentication", "hostbasedkeytypes",
      "hostkeyalgorithms", "hostkeyalias", "hostname", "identitiesonly", "identityagent",
      "identityfile", "ignoreunknown", "include", "ipqos", "kbdinteractiveauthentication",
      "kbdinteractivedevices", "kexalgorithms", "knownhostscommand", "localcommand", "localforward",
      "loglevel", "logverbose", "macs", "match", "nohostauthenticationforlocalhost",
      "numberofpasswordprompts", "obscurekeystroketiming", "passwordauthentication",
      "permitlocalcommand", "permitremoteopen", "pkcs11provider", "port",
      "preferredauthentications", "proxycommand", "proxyjump", "proxyusefdpass",
      "pubkeyacceptedalgorithms", "pubkeyacceptedkeytypes", "pubkeyauthentication", "rekeylimit",
      "remotecommand", "remoteforward", "requesttty", "requiredrsasize", "revokedhostkeys",
      "securitykeyprovider", "sendenv", "serveralivecountmax", "serveraliveinterval", "sessiontype",
      "setenv", "stdinnull", "streamlocalbindmask", "streamlocalbindunlink",
      "stricthostkeychecking", "syslogfacility", "tag", "tcpkeepalive", "tunnel", "tunneldevice",
      "updatehostkeys", "user", "userknownhostsfile", "verifyhostkeydns", "visualhostkey",
      "xauthlocation",
      // Deprecated or removed, still accepted (with a notice) by OpenSSH.
      "challengeresponseauthentication", "dsaauthentication", "gssapikeyexchange",
      "gssapiclientidentity", "gssapiserveridentity", "gssapirenewalforceskeyx",
      "gssapirenewalforcesrekey", "gssapitrustdns", "gssapikexalgorithms", "useprivilegedport",
      "useroaming", "usekeychain", "protocol", "cipher", "rhostsrsaauthentication",
      "rsaauthentication", "compressionlevel", "pubkeyacceptedkeytypes", "fallbacktorsh", "usersh",
      "identityfile2", "globalknownhostsfile2", "userknownhostsfile2", "smartcarddevice"};
  return k;
}

// Whether `kw` (lower case) is matched by one of IgnoreUnknown's patterns.
bool ssh_config_ignored(const std::vector<std::string>& ignore, const std::string& kw) {
  for (const auto& pattern : ignore)
    for (auto p : util::split(pattern, ','))
      if (ssh_pattern_match(util::to_lower(std::string(util::trim(p))), kw)) return true;
  return false;
}

// Splits a config line into words: whitespace separated, "double quotes" group,
// the keyword may be followed by '=' (with or without spaces).
bool split_line(std::string_view s, std::vector<std::string>& out, std::string& err) {
  size_t i = 0;
  bool first = true;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) break;
    if (!first && out.size() == 1 && s[i] == '=') {
      ++i;
      continue;
    }
    std::string word;
    if (s[i] == '"') {
      ++i;
      size_t end = s.find('"', i);
      if (end == std::string_view::npos) {
        err = "unterminated quote";
        return false;
      }
      word = std::string(s.substr(i, end - i));
      i = end + 1;
    } else {
      while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '"') {
        if (first && s[i] == '=') break;
        word += s[i++];
      }
      if (first && i < s.size() && s[i] == '=') ++i;
    }
    out.push_back(std::move(word));
    first = false;
  }
  return true;
}

void parse_into(SshConfig& c, const std::string& text, const std::string& file,
                const std::string& include_base, const SshConfigEnv& env, int depth,
                bool follow_includes) {
  uint32_t lineno = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view raw(text.data() + pos, end - pos);
    pos = end + 1;
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::string_view line = util::trim(raw);
    if (line.empty() || line[0] == '#') {
      if (end == text.size()) break;
      continue;
    }
    std::vector<std::string> words;
    std::string err;
    if (!split_line(line, words, err) || words.empty() || words[0].empty()) {
      error(c, file, lineno, err.empty() ? "cannot read this line" : err,
            "see ssh_config(5) for the syntax");
      if (end == text.size()) break;
      continue;
    }
    std::string kw = util::to_lower(words[0]);
    std::vector<std::string> args(words.begin() + 1, words.end());
    if (kw == "host") {
      SshConfigBlock b;
      b.kind = SshConfigBlock::Kind::Host;
      b.patterns = args;
      if (args.empty()) error(c, file, lineno, "Host needs at least one pattern");
      c.blocks.push_back(std::move(b));
    } else if (kw == "match") {
      SshConfigBlock b;
      if (args.size() == 1 && util::to_lower(args[0]) == "all") {
        b.kind = SshConfigBlock::Kind::MatchAll;
      } else if (args.size() == 2 &&
                 (util::to_lower(args[0]) == "host" || util::to_lower(args[0]) == "originalhost")) {
        b.kind = SshConfigBlock::Kind::MatchHost;
        for (auto p : util::split(args[1], ',')) b.patterns.emplace_back(util::trim(p));
      } else {
        b.kind = SshConfigBlock::Kind::MatchUnsupported;
        warn(c, file, lineno,
             "this Match block is ignored: paictl understands only 'Match all' and 'Match host "
             "PATTERNS'",
             "use Host blocks for the settings paictl needs");
      }
      c.blocks.push_back(std::move(b));
    } else if (kw == "include") {
      if (!follow_includes) {
        warn(c, file, lineno, "Include is not followed here");
      } else if (depth >= kMaxIncludeDepth) {
        error(c, file, lineno, "Include nested too deeply (more than 16 levels)");
      } else {
        for (const auto& a : args) {
          std::string pattern = ssh_expand(a, env);
          if (pattern.empty() || pattern[0] != '/') pattern = include_base + "/" + pattern;
          glob_t g{};
          if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; ++i) {
              std::string path = g.gl_pathv[i];
              auto r = util::read_file(path, 1u << 20);
              if (!r.ok()) {
                warn(c, file, lineno,
                     "cannot read included file " + path + ": " + r.error().message);
                continue;
              }
              // The included lines belong to the current block.
              SshConfig sub;
              sub.ignore_unknown = c.ignore_unknown;
              parse_into(sub, *r, path, include_base, env, depth + 1, true);
              c.diagnostics.append(sub.diagnostics);
              if (c.ignore_unknown.empty()) c.ignore_unknown = sub.ignore_unknown;
              bool first = true;
              for (auto& b : sub.blocks) {
                if (first && b.kind == SshConfigBlock::Kind::Global) {
                  if (c.blocks.empty()) c.blocks.emplace_back();
                  for (auto& l : b.lines) c.blocks.back().lines.push_back(std::move(l));
                } else {
                  c.blocks.push_back(std::move(b));
                }
                first = false;
              }
            }
          }
          ::globfree(&g);
        }
      }
    } else {
      if (c.blocks.empty()) c.blocks.emplace_back();
      const auto& known = ssh_config_keywords();
      bool is_known = std::find(known.begin(), known.end(), kw) != known.end();
      if (kw == "ignoreunknown" && c.ignore_unknown.empty())
        c.ignore_unknown = args;  // the first value wins, and applies to the lines after it
      if (!is_known) {
        if (!ssh_config_ignored(c.ignore_unknown, kw)) {
          std::string guess = util::did_you_mean(kw, known);
          error(c, file, lineno, "unknown keyword '" + words[0] + "': OpenSSH refuses this file",
                guess.empty() ? std::string("see ssh_config(5), or list it in IgnoreUnknown")
                              : "did you mean '" + guess + "'? (see ssh_config(5))");
        }
      } else if (args.empty()) {
        error(c, file, lineno, "'" + words[0] + "' needs a value");
      } else {
        c.blocks.back().lines.push_back({kw, std::move(args), file, lineno});
      }
    }
    if (end == text.size()) break;
  }
}

bool parse_yes_no(const std::string& v, bool& out) {
  std::string l = util::to_lower(v);
  if (l == "yes" || l == "true") {
    out = true;
    return true;
  }
  if (l == "no" || l == "false") {
    out = false;
    return true;
  }
  return false;
}

// A Host (or Match host) block's patterns when every one is a plain name: no
// wildcard, no negation. Such a block applies exactly when one of a host's
// names equals one of them, case aside.
bool literal_block(const SshConfigBlock& b) {
  if (b.kind != SshConfigBlock::Kind::Host && b.kind != SshConfigBlock::Kind::MatchHost)
    return false;
  if (b.patterns.empty()) return false;
  for (const auto& p : b.patterns)
    if (p.empty() || p[0] == '!' || p.find_first_of("*?") != std::string::npos) return false;
  return true;
}

bool block_applies(const SshConfigBlock& b, const std::vector<std::string>& names) {
  switch (b.kind) {
    case SshConfigBlock::Kind::Global:
    case SshConfigBlock::Kind::MatchAll:
      return true;
    case SshConfigBlock::Kind::MatchUnsupported:
      return false;
    case SshConfigBlock::Kind::Host:
    case SshConfigBlock::Kind::MatchHost:
      break;
  }
  bool positive = false;
  for (const auto& p : b.patterns) {
    bool negated = !p.empty() && p[0] == '!';
    std::string_view pat = negated ? std::string_view(p).substr(1) : std::string_view(p);
    for (const auto& n : names) {
      if (n.empty() || !ssh_pattern_match(pat, n)) continue;
      if (negated) return false;
      positive = true;
    }
  }
  return positive;
}

}  // namespace

SshConfigEnv default_ssh_config_env() {
  SshConfigEnv env;
  const char* home = std::getenv("HOME");
  struct passwd pw {};
  struct passwd* res = nullptr;
  char buf[4096];
  bool have_pw = ::getpwuid_r(::getuid(), &pw, buf, sizeof buf, &res) == 0 && res != nullptr;
  if (home && *home)
    env.home = home;
  else if (have_pw)
    env.home = pw.pw_dir;
  if (have_pw)
    env.local_user = pw.pw_name;
  else if (const char* u = std::getenv("USER"))
    env.local_user = u;
  return env;
}

bool ssh_pattern_match(std::string_view pattern, std::string_view text) {
  // Iterative glob with backtracking on the last '*'.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  auto eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  while (t < text.size()) {
    if (p < pattern.size() &&
        (pattern[p] == '?' || (pattern[p] != '*' && eq(pattern[p], text[t])))) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string ssh_expand(std::string_view value, const SshConfigEnv& env, std::string_view host,
                       int port, std::string_view remote_user) {
  std::string out;
  size_t i = 0;
  if (!value.empty() && value[0] == '~' && (value.size() == 1 || value[1] == '/')) {
    out = env.home;
    i = 1;
  }
  for (; i < value.size(); ++i) {
    char c = value[i];
    if (c != '%' || i + 1 >= value.size()) {
      out += c;
      continue;
    }
    char t = value[++i];
    switch (t) {
      case '%':
        out += '%';
        break;
      case 'd':
        out += env.home;
        break;
      case 'u':
        out += env.local_user;
        break;
      case 'h':
        out += host;
        break;
      case 'p':
        out += std::to_string(port);
        break;
      case 'r':
        out += remote_user;
        break;
      default:
        out += '%';
        out += t;
        break;
    }
  }
  return out;
}

SshConfig parse_ssh_config(const std::string& text, const std::string& file,
                           const std::string& include_base, const SshConfigEnv& env,
                           bool follow_includes) {
  SshConfig c;
  parse_into(c, text, file, include_base, env, 0, follow_includes);
  index_ssh_config(c);
  return c;
}

SshConfig load_ssh_config(const std::string& path, const SshConfigEnv& env, bool must_exist) {
  auto r = util::read_file(path, 4u << 20);
  if (!r.ok()) {
    SshConfig c;
    if (must_exist || util::path_entry_exists(path))
      c.diagnostics.add("SSH003", diag::Severity::Error, path, 0, 0,
                        "cannot read the SSH config: " + r.error().message);
    return c;
  }
  std::string base = path.rfind('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
  // OpenSSH resolves relative Include paths against ~/.ssh for user files and
  // /etc/ssh for the system file.
  if (path.rfind("/etc/ssh/", 0) == 0)
    base = "/etc/ssh";
  else if (path == env.home + "/.ssh/config")
    base = env.home + "/.ssh";
  return parse_ssh_config(*r, path, base, env);
}

void append_ssh_config(SshConfig& base, SshConfig more) {
  for (auto& b : more.blocks) {
    // A leading block without Host in the second file only applies to it as a whole,
    // which for first-value-wins is the same as appending it.
    base.blocks.push_back(std::move(b));
  }
  base.diagnostics.append(more.diagnostics);
  index_ssh_config(base);
}

struct SshHostIndex {
  size_t blocks = 0;                                           // how many it was made for
  std::unordered_map<std::string, std::vector<size_t>> named;  // lower-cased name -> blocks
  std::vector<size_t> others;                                  // every other block
};

void index_ssh_config(SshConfig& config) {
  auto index = std::make_shared<SshHostIndex>();
  index->blocks = config.blocks.size();
  for (size_t i = 0; i < config.blocks.size(); ++i) {
    const SshConfigBlock& b = config.blocks[i];
    if (!literal_block(b)) {
      index->others.push_back(i);
      continue;
    }
    for (const auto& p : b.patterns) {
      auto& at = index->named[util::to_lower(p)];
      if (at.empty() || at.back() != i) at.push_back(i);
    }
  }
  config.index = std::move(index);
}

SshHostConfig resolve_ssh_config(const SshConfig& config, const std::vector<std::string>& names,
                                 const SshConfigEnv& env) {
  SshHostConfig h;
  auto set_int = [](std::optional<int>& dst, const std::string& v, int lo, int hi) {
    if (dst) return;
    if (auto n = util::parse_int(v); n && *n >= lo && *n <= hi) dst = static_cast<int>(*n);
  };
  auto set_bool = [](std::optional<bool>& dst, const std::string& v) {
    bool b;
    if (!dst && parse_yes_no(v, b)) dst = b;
  };
  // The blocks that can apply, in file order: all of them, or with the index
  // those of the host's names and those that are not plain names.
  std::vector<size_t> candidates;
  const SshHostIndex* index = config.index.get();
  if (index && index->blocks == config.blocks.size()) {
    candidates = index->others;
    for (const auto& n : names) {
      if (n.empty()) continue;
      auto it = index->named.find(util::to_lower(n));
      if (it != index->named.end())
        candidates.insert(candidates.end(), it->second.begin(), it->second.end());
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  } else {
    for (size_t i = 0; i < config.blocks.size(); ++i) candidates.push_back(i);
  }
  for (size_t at : candidates) {
    const SshConfigBlock& b = config.blocks[at];
    if (!block_applies(b, names)) continue;
    for (const auto& l : b.lines) {
      const std::string& v = l.args[0];
      if (l.keyword == "hostname") {
        if (!h.hostname) h.hostname = v;
      } else if (l.keyword == "user") {
        if (!h.user) h.user = v;
      } else if (l.keyword == "port") {
        set_int(h.port, v, 1, 65535);
      } else if (l.keyword == "identityfile") {
        // Expanded later, when the host name and user are known (%h, %r).
        h.identity_files.push_back(v);
      } else if (l.keyword == "identitiesonly") {
        set_bool(h.identities_only, v);
      } else if (l.keyword == "identityagent") {
        if (!h.identity_agent) h.identity_agent = v;
      } else if (l.keyword == "proxyjump") {
        if (!h.proxy_jump) h.proxy_jump = v;
      } else if (l.keyword == "proxycommand") {
        if (!h.proxy_command) {
          std::string all;
          for (const auto& a : l.args) all += (all.empty() ? "" : " ") + a;
          h.proxy_command = all;
        }
      } else if (l.keyword == "userknownhostsfile") {
        if (!h.user_known_hosts_file) h.user_known_hosts_file = ssh_expand(v, env);
      } else if (l.keyword == "globalknownhostsfile") {
        if (!h.global_known_hosts_file) h.global_known_hosts_file = ssh_expand(v, env);
      } else if (l.keyword == "connecttimeout") {
        set_int(h.connect_timeout_s, v, 1, 86400);
      } else if (l.keyword == "serveraliveinterval") {
        set_int(h.server_alive_interval_s, v, 0, 86400);
      } else if (l.keyword == "serveralivecountmax") {
        set_int(h.server_alive_count_max, v, 0, 1000);
      } else if (l.keyword == "passwordauthentication") {
        set_bool(h.password_authentication, v);
      } else if (l.keyword == "pubkeyauthentication") {
        set_bool(h.pubkey_authentication, v);
      }
    }
  }
  return h;
}

}  // namespace pai::remote

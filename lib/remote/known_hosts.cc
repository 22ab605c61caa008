#include "remote/known_hosts.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "remote/ssh_config.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::remote {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The next whitespace-separated field of `s` from `pos`.
std::string_view next_field(std::string_view s, size_t& pos) {
  while (pos < s.size() && is_space(s[pos])) ++pos;
  size_t start = pos;
  while (pos < s.size() && !is_space(s[pos])) ++pos;
  return s.substr(start, pos - start);
}

bool has_wildcard(std::string_view p) {
  return p.find_first_of("*?") != std::string_view::npos || (!p.empty() && p[0] == '!');
}

std::string hmac_sha1(std::string_view key, std::string_view msg) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out, &len))
    return {};
  return std::string(reinterpret_cast<const char*>(out), len);
}

// libssh's default host-key algorithms (0.10), in its order of preference.
constexpr const char* kDefaultHostKeyAlgorithms[] = {
    "ssh-ed25519",
    "ecdsa-sha2-nistp521",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp256",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "rsa-sha2-512",
    "rsa-sha2-256",
};

}  // namespace

KnownHosts KnownHosts::parse(std::string_view text) {
  KnownHosts kh;
  int lineno = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view raw =
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    size_t pos = 0;
    std::string_view first = next_field(raw, pos);
    if (first.empty() || first[0] == '#') continue;
    std::string_view marker;
    if (first[0] == '@') {
      marker = first;
      first = next_field(raw, pos);
    }
    std::string_view hosts = first;
    std::string_view type = next_field(raw, pos);
    std::string_view b64 = next_field(raw, pos);
    if (hosts.empty() || type.empty() || b64.empty()) continue;
    auto blob = util::base64_decode(b64);
    if (!blob || blob->empty()) continue;
    if (marker == "@revoked") {
      kh.revoked_.insert(std::string(type) + ' ' + *blob);
      continue;
    }
    if (!marker.empty()) continue;  // @cert-authority, or a marker OpenSSH does not know

    Line line;
    if (hosts.substr(0, 3) == "|1|") {
      auto parts = util::split(hosts.substr(3), '|');
      if (parts.size() != 2) continue;
      auto salt = util::base64_decode(parts[0]);
      auto hash = util::base64_decode(parts[1]);
      if (!salt || !hash || salt->empty() || hash->size() != 20) continue;
      line.salt = std::move(*salt);
      line.hash = std::move(*hash);
    } else {
      for (std::string_view p : util::split(hosts, ','))
        if (!p.empty()) line.patterns.push_back(util::to_lower(p));
      if (line.patterns.empty()) continue;
    }
    line.key = kh.keys_.size();
    kh.keys_.push_back(KnownHostKey{std::string(type), std::move(*blob), lineno});

    bool indexed = !line.patterns.empty();
    for (const auto& p : line.patterns)
      if (has_wildcard(p)) indexed = false;
    if (indexed) {
      for (const auto& p : line.patterns) {
        auto& v = kh.by_name_[p];
        if (v.empty() || v.back() != line.key) v.push_back(line.key);
      }
    } else {
      kh.scanned_.push_back(std::move(line));
    }
  }
  return kh;
}

bool KnownHosts::applies(const Line& l, std::string_view lower_name) const {
  if (l.patterns.empty()) return hmac_sha1(l.salt, lower_name) == l.hash;
  bool matched = false;
  for (const auto& p : l.patterns) {
    if (p[0] == '!') {
      if (ssh_pattern_match(std::string_view(p).substr(1), lower_name)) return false;
    } else if (!matched && ssh_pattern_match(p, lower_name)) {
      matched = true;
    }
  }
  return matched;
}

std::vector<const KnownHostKey*> KnownHosts::keys_for(std::string_view name) const {
  std::string lower = util::to_lower(name);
  std::vector<size_t> idx;
  bool known = false;
  if (!scanned_.empty()) {
    std::lock_guard lock(memo_->mu);
    if (auto it = memo_->names.find(lower); it != memo_->names.end()) {
      idx = it->second;
      known = true;
    }
  }
  if (!known) {
    if (auto it = by_name_.find(lower); it != by_name_.end()) idx = it->second;
    for (const auto& l : scanned_)
      if (applies(l, lower)) idx.push_back(l.key);
    std::sort(idx.begin(), idx.end());
    if (!scanned_.empty()) {
      std::lock_guard lock(memo_->mu);
      memo_->names.emplace(lower, idx);
    }
  }
  std::vector<const KnownHostKey*> out;
  out.reserve(idx.size());
  for (size_t i : idx) out.push_back(&keys_[i]);
  return out;
}

bool KnownHosts::revoked(std::string_view type, std::string_view blob) const {
  if (revoked_.empty()) return false;
  std::string k(type);
  k += ' ';
  k += blob;
  return revoked_.count(k) > 0;
}

KnownHostCheck check_known_host(const std::vector<const KnownHosts*>& files, std::string_view name,
                                std::string_view type, std::string_view blob) {
  KnownHostCheck out;
  for (const KnownHosts* f : files)
    if (f && f->revoked(type, blob)) return {KnownHostStatus::Revoked, 0};
  bool any = false;
  int changed_line = 0;
  for (const KnownHosts* f : files) {
    if (!f) continue;
    for (const KnownHostKey* k : f->keys_for(name)) {
      any = true;
      if (k->type == type && k->blob == blob) return {KnownHostStatus::Ok, k->line};
      if (k->type == type && changed_line == 0) changed_line = k->line;
    }
  }
  if (changed_line) return {KnownHostStatus::Changed, changed_line};
  if (any) return {KnownHostStatus::Other, 0};
  return out;
}

std::string host_key_algorithms(const std::vector<std::string>& known_types) {
  auto known = [&](std::string_view algo) {
    for (const auto& t : known_types) {
      if (t == algo) return true;
      if (t == "ssh-rsa" && (algo == "rsa-sha2-512" || algo == "rsa-sha2-256")) return true;
    }
    return false;
  };
  std::string first, rest;
  for (const char* a : kDefaultHostKeyAlgorithms) {
    std::string& to = known(a) ? first : rest;
    if (!to.empty()) to += ',';
    to += a;
  }
  if (first.empty()) return rest;
  return rest.empty() ? first : first + "," + rest;
}

std::string known_hosts_line(std::string_view name, std::string_view type,
                             std::string_view base64_key) {
  std::string out(name);
  out += ' ';
  out += type;
  out += ' ';
  out += base64_key;
  out += '\n';
  return out;
}

util::Result<std::shared_ptr<const KnownHosts>> KnownHostsCache::get(const std::string& path) {
  struct stat st {};
  Entry now;
  if (::stat(path.c_str(), &st) == 0) {
    now.present = true;
    now.dev = st.st_dev;
    now.ino = st.st_ino;
    now.size = static_cast<uint64_t>(st.st_size);
    now.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  } else if (errno != ENOENT && errno != ENOTDIR) {
    return util::Error{path + ": " + std::strerror(errno), {}, util::Error::Kind::Input};
  }
  std::lock_guard lock(mu_);
  Entry& e = files_[path];
  if (e.parsed && e.present == now.present && e.dev == now.dev && e.ino == now.ino &&
      e.size == now.size && e.mtime_ns == now.mtime_ns)
    return e.parsed;
  if (!now.present) {
    now.parsed = std::make_shared<const KnownHosts>();
  } else {
    auto text = util::read_file(path);
    if (!text.ok())
      return util::Error{path + " " + text.error().message, {}, util::Error::Kind::Input};
    now.parsed = std::make_shared<const KnownHosts>(KnownHosts::parse(*text));
  }
  e = now;
  return e.parsed;
}

}  // namespace pai::remote

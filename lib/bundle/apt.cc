#include "bundle/apt.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "util/strings.h"

namespace pai::bundle {

namespace {

std::string apt_trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// dpkg's character order: '~' before everything (even the end), letters
// before non-letters.
int apt_order(char c) {
  if (std::isdigit(static_cast<unsigned char>(c))) return 0;
  if (std::isalpha(static_cast<unsigned char>(c))) return c;
  if (c == '~') return -1;
  if (c) return c + 256;
  return 0;
}

int apt_compare_part(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    int first_diff = 0;
    while ((i < a.size() && !std::isdigit(static_cast<unsigned char>(a[i]))) ||
           (j < b.size() && !std::isdigit(static_cast<unsigned char>(b[j])))) {
      int ac = i < a.size() ? apt_order(a[i]) : 0;
      int bc = j < b.size() ? apt_order(b[j]) : 0;
      if (ac != bc) return ac - bc;
      ++i;
      ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])) && j < b.size() &&
           std::isdigit(static_cast<unsigned char>(b[j]))) {
      if (!first_diff) first_diff = a[i] - b[j];
      ++i;
      ++j;
    }
    if (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) return 1;
    if (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j]))) return -1;
    if (first_diff) return first_diff;
  }
  return 0;
}

struct AptVersion {
  long epoch = 0;
  std::string upstream, revision;
};

AptVersion apt_split_version(const std::string& v) {
  AptVersion out;
  std::string rest = v;
  if (auto c = rest.find(':'); c != std::string::npos) {
    out.epoch = std::strtol(rest.substr(0, c).c_str(), nullptr, 10);
    rest = rest.substr(c + 1);
  }
  if (auto d = rest.rfind('-'); d != std::string::npos) {
    out.revision = rest.substr(d + 1);
    rest = rest.substr(0, d);
  }
  out.upstream = rest;
  return out;
}

// One relation of a Depends field: "name:any (>= 1.0)".
struct AptRelation {
  std::string name, op, version;
  std::string text;
};

AptRelation apt_relation(const std::string& text) {
  AptRelation r;
  r.text = apt_trim(text);
  std::string s = r.text;
  if (auto p = s.find('('); p != std::string::npos) {
    auto q = s.find(')', p);
    std::string rel = s.substr(p + 1, q == std::string::npos ? std::string::npos : q - p - 1);
    s = s.substr(0, p);
    rel = apt_trim(rel);
    size_t k = 0;
    while (k < rel.size() && std::string("<>=").find(rel[k]) != std::string::npos) ++k;
    r.op = rel.substr(0, k);
    r.version = apt_trim(rel.substr(k));
  }
  if (auto b = s.find('['); b != std::string::npos) s = s.substr(0, b);
  s = apt_trim(s);
  if (auto c = s.find(':'); c != std::string::npos) s = s.substr(0, c);
  r.name = s;
  return r;
}

}  // namespace

std::vector<std::string> AptSource::index_urls(const std::string& arch) const {
  std::string base = url;
  for (auto at = base.find("$(ARCH)"); at != std::string::npos; at = base.find("$(ARCH)"))
    base.replace(at, 7, arch);
  if (flat()) {
    std::string dir = suite == "/" || suite == "./" ? "" : "/" + suite.substr(0, suite.size() - 1);
    return {base + dir + "/Packages"};
  }
  std::vector<std::string> out;
  for (const auto& c : components)
    out.push_back(base + "/dists/" + suite + "/" + c + "/binary-" + arch + "/Packages");
  return out;
}

std::string AptSource::str() const {
  std::string s = "deb " + url + " " + suite;
  for (const auto& c : components) s += " " + c;
  return s;
}

util::Result<AptSource> parse_apt_source(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  size_t i = 0;
  if (i < words.size() && words[i] == "deb") ++i;
  if (i < words.size() && words[i].front() == '[') {
    while (i < words.size() && words[i].back() != ']') ++i;
    ++i;
  }
  AptSource s;
  if (i >= words.size() || words[i].find("://") == std::string::npos)
    return util::Error{"\"" + line + "\" is not an apt source",
                       "write deb URL SUITE COMPONENT... or deb URL / for a flat repository",
                       util::Error::Kind::Input};
  s.url = words[i++];
  while (!s.url.empty() && s.url.back() == '/') s.url.pop_back();
  if (i < words.size()) s.suite = words[i++];
  for (; i < words.size(); ++i) s.components.push_back(words[i]);
  if (!s.flat() && s.components.empty())
    return util::Error{"\"" + line + "\" names a suite without components",
                       "e.g. deb http://archive.ubuntu.com/ubuntu jammy main restricted",
                       util::Error::Kind::Input};
  return s;
}

std::vector<AptPackage> parse_packages_index(const std::string& text, const std::string& base_url) {
  std::vector<AptPackage> out;
  AptPackage cur;
  std::string last_key;
  auto flush = [&]() {
    if (!cur.name.empty() && !cur.version.empty() && !cur.filename.empty() &&
        cur.sha256.size() == 64 && cur.size > 0) {
      cur.base_url = base_url;
      out.push_back(std::move(cur));
    }
    cur = AptPackage{};
  };
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (apt_trim(line).empty()) {
      flush();
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') continue;  // a continuation (Description)
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon), value = apt_trim(line.substr(colon + 1));
    if (key == "Package")
      cur.name = value;
    else if (key == "Version")
      cur.version = value;
    else if (key == "Architecture")
      cur.architecture = value;
    else if (key == "Filename")
      cur.filename = value;
    else if (key == "SHA256")
      cur.sha256 = util::to_lower(value);
    else if (key == "Size")
      cur.size = std::strtoull(value.c_str(), nullptr, 10);
    else if (key == "Depends")
      cur.depends = value;
    else if (key == "Pre-Depends")
      cur.pre_depends = value;
    else if (key == "Provides")
      cur.provides = value;
    else if (key == "Priority")
      cur.priority = value;
  }
  flush();
  return out;
}

int compare_debian_versions(const std::string& a, const std::string& b) {
  AptVersion x = apt_split_version(a), y = apt_split_version(b);
  if (x.epoch != y.epoch) return x.epoch < y.epoch ? -1 : 1;
  int c = apt_compare_part(x.upstream, y.upstream);
  if (c) return c < 0 ? -1 : 1;
  c = apt_compare_part(x.revision, y.revision);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

bool version_satisfies(const std::string& version, const std::string& op,
                       const std::string& wanted) {
  if (op.empty() || wanted.empty()) return true;
  int c = compare_debian_versions(version, wanted);
  if (op == ">=") return c >= 0;
  if (op == "<=") return c <= 0;
  if (op == ">>" || op == ">") return c > 0;
  if (op == "<<" || op == "<") return c < 0;
  if (op == "=") return c == 0;
  return false;
}

util::Result<Resolution> resolve_packages(const std::vector<Wanted>& wanted,
                                          const std::vector<AptPackage>& index) {
  std::map<std::string, std::vector<const AptPackage*>> by_name, providers;
  for (const auto& p : index) {
    by_name[p.name].push_back(&p);
    for (auto prov : util::split(p.provides, ',')) {
      auto r = apt_relation(std::string(prov));
      if (!r.name.empty()) providers[r.name].push_back(&p);
    }
  }
  auto newest = [](std::vector<const AptPackage*> c) -> const AptPackage* {
    if (c.empty()) return nullptr;
    return *std::max_element(c.begin(), c.end(), [](const AptPackage* x, const AptPackage* y) {
      return compare_debian_versions(x->version, y->version) < 0;
    });
  };
  Resolution res;
  std::map<std::string, const AptPackage*> chosen;  // by name
  std::vector<const AptPackage*> queue;
  std::set<std::string> assumed;

  for (const auto& w : wanted) {
    const AptPackage* pick = nullptr;
    for (const auto& name : w.names) {
      std::vector<const AptPackage*> c;
      for (const auto* p : by_name[name])
        if (w.version.empty() || compare_debian_versions(p->version, w.version) == 0)
          c.push_back(p);
      if ((pick = newest(c))) break;
    }
    if (!pick) {
      std::string what = util::join(w.names, " or ") + (w.version.empty() ? "" : " " + w.version);
      return util::Error{"no repository has " + what,
                         "check the repositories the bundle reads (kube_package_repo, "
                         "nvidia_package_repo, --os-repo) and the version",
                         util::Error::Kind::Remote};
    }
    if (chosen.count(pick->name)) continue;
    chosen[pick->name] = pick;
    queue.push_back(pick);
  }
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const AptPackage* p = queue[qi];
    res.packages.push_back(*p);
    std::string deps = p->pre_depends;
    if (!p->depends.empty()) deps += (deps.empty() ? "" : ", ") + p->depends;
    for (auto clause_v : util::split(deps, ',')) {
      std::string clause = apt_trim(std::string(clause_v));
      if (clause.empty()) continue;
      std::vector<AptRelation> alts;
      for (auto a : util::split(clause, '|')) alts.push_back(apt_relation(std::string(a)));
      bool met = false;
      for (const auto& a : alts) {
        auto it = chosen.find(a.name);
        if (it != chosen.end() && version_satisfies(it->second->version, a.op, a.version))
          met = true;
        for (const auto& [n, c] : chosen)
          for (auto prov : util::split(c->provides, ','))
            if (apt_relation(std::string(prov)).name == a.name && a.op.empty()) met = true;
      }
      if (met) continue;
      const AptPackage* pick = nullptr;
      for (const auto& a : alts) {
        std::vector<const AptPackage*> c;
        for (const auto* q : by_name[a.name])
          if (version_satisfies(q->version, a.op, a.version)) c.push_back(q);
        if (c.empty() && a.op.empty()) c = providers[a.name];
        if ((pick = newest(c))) break;
      }
      if (!pick) {
        assumed.insert(clause);
        continue;
      }
      if (pick->priority == "required" || pick->priority == "important") continue;
      if (chosen.count(pick->name)) continue;  // another version is chosen: kept
      chosen[pick->name] = pick;
      queue.push_back(pick);
    }
  }
  res.assumed.assign(assumed.begin(), assumed.end());
  return res;
}

}  // namespace pai::bundle

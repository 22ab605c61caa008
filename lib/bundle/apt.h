#pragma once
// Debian package repositories as `bundle build` reads them: a repository's
// Packages index (Debian repository format, deb822 stanzas), dpkg's version
// order, and the set of .debs that installing some packages needs.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace pai::bundle {

// One apt source: `deb URL SUITE COMPONENT...`, or a flat repository
// (`deb URL /`, `deb URL ./`: SUITE ends in '/', no components).
struct AptSource {
  std::string url;  // without a trailing '/'
  std::string suite = "/";
  std::vector<std::string> components;
  bool flat() const { return !suite.empty() && suite.back() == '/'; }
  // The URLs of its Packages indexes for an architecture (flat: URL/SUITE/Packages).
  std::vector<std::string> index_urls(const std::string& arch) const;
  std::string str() const;
};
// Parses "deb [OPTIONS] URL SUITE [COMPONENT...]" (the leading "deb" and the
// [options] may be left out). "$(ARCH)" in the URL is kept for index_urls.
util::Result<AptSource> parse_apt_source(const std::string& line);

struct AptPackage {
  std::string name, version, architecture;
  std::string filename;  // relative to the repository's base URL
  std::string sha256;
  uint64_t size = 0;
  std::string depends, pre_depends, provides, priority;
  std::string base_url;  // the repository it came from
  std::string url() const { return base_url + "/" + filename; }
};

// The stanzas of a Packages file (uncompressed). A stanza without Package,
// Version, Filename, SHA256 or Size is skipped.
std::vector<AptPackage> parse_packages_index(const std::string& text, const std::string& base_url);

// dpkg's order of versions ([epoch:]upstream[-revision]): <0, 0, >0.
int compare_debian_versions(const std::string& a, const std::string& b);
// Whether `version` satisfies a relation "(>= 1.2)", "(= 1.30.4-1.1)", "" (any).
bool version_satisfies(const std::string& version, const std::string& op,
                       const std::string& wanted);

// A wanted package: a name (alternatives "a|b": the first a repository has),
// and optionally an exact version.
struct Wanted {
  std::vector<std::string> names;
  std::string version;  // "" = the newest
};

struct Resolution {
  std::vector<AptPackage> packages;  // to fetch, each once, in resolution order
  // Dependencies no repository provides, assumed part of the OS ("libc6 (>= 2.34)").
  std::vector<std::string> assumed;
};

// Chooses the .debs of `wanted` and of their Depends and Pre-Depends,
// recursively, from `index` (every repository's packages of one
// architecture, plus "all"): a dependency already chosen that satisfies it
// is kept; else the newest package of the first alternative that satisfies
// it (a real package, or one that Provides it). Packages of Priority required
// or important (present on every installed system) are not followed, nor is
// what no repository has (listed in `assumed`). A wanted package no
// repository has, or no version that satisfies, is the error.
util::Result<Resolution> resolve_packages(const std::vector<Wanted>& wanted,
                                          const std::vector<AptPackage>& index);

}  // namespace pai::bundle

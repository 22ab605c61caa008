#include "kube/cluster_files.h"

#include <cstdint>

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::kube {

namespace {

const char* const kFiles[] = {"layout.yaml", "config.yaml", "services-configuration.yaml"};

// A Secret's value; one that is not base64 (the API server never sends one)
// reads as empty.
std::string base64_decode(const std::string& in) {
  return util::base64_decode(in).value_or(std::string());
}

}  // namespace

bool secret_file(const std::string& name) {
  return name != "layout.yaml";
}

util::Result<ClusterFiles> read_cluster_files(const std::string& dir) {
  ClusterFiles out;
  for (const char* f : kFiles) {
    std::string path = dir + "/" + f;
    auto r = util::read_file_if_present(path, 16u << 20);
    if (!r.ok())
      return util::Error{"cannot read " + path + ": " + r.error().message, "",
                         util::Error::Kind::Input};
    if (*r) out[f] = std::move(**r);
  }
  return out;
}

std::string cluster_files_objects() {
  return std::string("configmap/") + kClusterFilesObject + " secret/" + kClusterFilesObject;
}

std::vector<std::string> cluster_files_paths() {
  return {std::string("/configmaps/") + kClusterFilesObject,
          std::string("/secrets/") + kClusterFilesObject};
}

ClusterFiles parse_cluster_files(const std::string& text) {
  ClusterFiles out;
  auto j = util::parse_json_or_discarded(text);
  if (j.is_discarded()) return out;
  std::vector<nlohmann::json> items;
  if (j.contains("items") && j["items"].is_array())
    for (const auto& i : j["items"]) items.push_back(i);
  else if (j.contains("kind"))
    items.push_back(j);
  for (const auto& o : items) {
    if (!o.is_object() || !o.contains("data") || !o["data"].is_object()) continue;
    if (o.contains("metadata") && o["metadata"].is_object() &&
        o["metadata"].value("name", kClusterFilesObject) != kClusterFilesObject)
      continue;
    bool secret = o.value("kind", "") == "Secret";
    for (const auto& [k, v] : o["data"].items())
      if (v.is_string())
        out[k] = secret ? base64_decode(v.get<std::string>()) : v.get<std::string>();
  }
  return out;
}

}  // namespace pai::kube

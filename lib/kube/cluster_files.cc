#include "kube/cluster_files.h"

#include <cstdint>

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "util/json.h"

namespace pai::kube {

namespace {

const char* const kFiles[] = {"layout.yaml", "config.yaml", "services-configuration.yaml"};

std::string base64_decode(const std::string& in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  for (char c : in) {
    int v = val(c);
    if (v < 0) continue;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xff);
    }
  }
  return out;
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

#include "deploy/openpai.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "deploy/cluster_files.h"
#include "deploy/onprem.h"
#include "deploy/phases/workloads.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/strings.h"
#include "yaml/yaml.h"

namespace pai::deploy {

std::string secret_manifest(const OpenPaiSettings& o, const std::string& admin_b64,
                            const std::string& postgres_b64, const std::string& jwt_b64) {
  nlohmann::json secret = {{"apiVersion", "v1"},
                           {"kind", "Secret"},
                           {"metadata",
                            {{"name", phases::kServicesSecret},
                             {"namespace", o.ns},
                             {"labels", {{"app.kubernetes.io/part-of", "openpai"}}}}},
                           {"type", "Opaque"},
                           {"data",
                            {{"admin-username", base64(o.admin_user)},
                             {"admin-password", admin_b64},
                             {"postgres-password", postgres_b64},
                             {"jwt-secret", jwt_b64}}}};
  return util::dump_json(secret) + "\n";
}

namespace {

std::string dns_label(const std::string& s) {
  std::string out;
  for (char c : s) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += (std::isalnum(static_cast<unsigned char>(l)) ? l : '-');
  }
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "vc" : out;
}

}  // namespace

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n =
        (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    out += t[n >> 18];
    out += t[(n >> 12) & 63];
    out += t[(n >> 6) & 63];
    out += t[n & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint32_t(uint8_t(in[i])) << 16;
    out += t[n >> 18];
    out += t[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8);
    out += t[n >> 18];
    out += t[(n >> 12) & 63];
    out += t[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

util::Result<OpenPaiSettings> load_openpai_settings(const std::string& services_file) {
  OpenPaiSettings s;
  s.services_file = services_file;
  // Only a path with nothing at it means "no OpenPAI"; a directory, a FIFO or a
  // broken symbolic link in its place is an error, never a plan without phases.
  auto read = util::read_file_if_present(services_file, 16u << 20);
  if (!read.ok())
    return util::Error{"cannot read " + services_file + ": " + read.error().message,
                       "services-configuration.yaml must be a regular file (or absent)",
                       util::Error::Kind::Input};
  if (!*read) {
    s.enabled = false;
    return s;
  }
  const std::string& text = **read;
  auto stream = yaml::load(text);
  if (stream.error)
    return util::Error{services_file + ":" + std::to_string(stream.error->mark.line) + ":" +
                           std::to_string(stream.error->mark.column) + ": " + stream.error->message,
                       "", util::Error::Kind::Input};
  s.enabled = true;
  if (stream.documents.empty() || !stream.documents[0]->is_mapping()) return s;
  const yaml::Node* root = stream.documents[0];
  auto str = [](const yaml::Node* n, const char* key) -> const yaml::Node* {
    const yaml::Node* v = n && n->is_mapping() ? n->get(key) : nullptr;
    return v && v->is_scalar() && !v->is_null() ? v : nullptr;
  };
  auto port = [&](const yaml::Node* n, const char* key, int& out) {
    if (const yaml::Node* v = str(n, key))
      if (auto p = util::parse_int(v->scalar()); p && *p >= 1 && *p <= 65535)
        out = static_cast<int>(*p);
  };
  const yaml::Node* cluster = root->get("cluster");
  const yaml::Node* common = cluster && cluster->is_mapping() ? cluster->get("common") : nullptr;
  if (const yaml::Node* v = str(common, "cluster-id")) s.cluster_id = v->scalar();
  if (const yaml::Node* v = str(common, "data-path")) s.data_path = v->scalar();
  const yaml::Node* reg =
      cluster && cluster->is_mapping() ? cluster->get("docker-registry") : nullptr;
  std::string domain = "docker.io", rns = "openpai";
  if (const yaml::Node* v = str(reg, "domain")) domain = v->scalar();
  if (const yaml::Node* v = str(reg, "namespace")) rns = v->scalar();
  if (const yaml::Node* v = str(reg, "tag")) s.tag = v->scalar();
  s.image_prefix = domain + "/" + rns + "/";
  const yaml::Node* rs = root->get("rest-server");
  if (const yaml::Node* v = str(rs, "default-pai-admin-username")) s.admin_user = v->scalar();
  if (const yaml::Node* v = str(rs, "default-pai-admin-password"))
    s.admin_password = remote::Secret(v->scalar());
  port(rs, "server-port", s.rest_port);
  port(root->get("webportal"), "server-port", s.webportal_port);
  port(root->get("pylon"), "port", s.pylon_port);
  const yaml::Node* hs = root->get("hivedscheduler");
  if (const yaml::Node* v = str(hs, "config")) {
    s.hived_config = v->scalar();
    auto inner = yaml::load(s.hived_config);
    if (inner.error) {
      auto m = v->inner_mark(inner.error->mark.line, inner.error->mark.column);
      return util::Error{services_file + ":" + std::to_string(m.line) + ":" +
                             std::to_string(m.column) +
                             ": hivedscheduler.config: " + inner.error->message,
                         "", util::Error::Kind::Input};
    }
    if (!inner.documents.empty() && inner.documents[0]->is_mapping()) {
      if (const yaml::Node* vcs = inner.documents[0]->get("virtualClusters");
          vcs && vcs->is_mapping())
        for (const auto& p : vcs->pairs())
          if (p.key->is_scalar()) s.vcs.push_back(p.key->scalar());
      if (const yaml::Node* w = str(inner.documents[0], "webServerAddress")) {
        auto colon = w->scalar().rfind(':');
        if (auto p =
                util::parse_int(w->scalar().substr(colon == std::string::npos ? 0 : colon + 1)))
          s.hived_port = static_cast<int>(*p);
      }
    }
  }
  return s;
}

std::string hived_config_file(const OpenPaiSettings& s) {
  std::string out;
  if (s.hived_config.find("webServerAddress:") == std::string::npos)
    out += "webServerAddress: \":" + std::to_string(s.hived_port) + "\"\n";
  if (s.hived_config.find("waitingPodSchedulingBlockMilliSec:") == std::string::npos)
    out += "waitingPodSchedulingBlockMilliSec: 50\n";
  out += s.hived_config;
  if (!out.empty() && out.back() != '\n') out += "\n";
  return out;
}

util::Result<std::string> render_hived_configmap(const std::string& templates_dir,
                                                 const OpenPaiSettings& s) {
  std::string config = hived_config_file(s);
  return render_template(templates_dir, "hived-configmap.yaml",
                         {{"ns", s.ns},
                          {"config", phases::indent_text(config, 4)},
                          {"config_hash", phases::config_hash(config)}});
}

std::string vc_scheduler_name(const std::string& vc) {
  std::string n = "hivedscheduler-ds-" + dns_label(vc);
  return n.size() > 52 ? n.substr(0, 52) : n;  // StatefulSet pod names stay within 63
}

util::Result<std::string> render_scheduler_config(const std::string& templates_dir,
                                                  const OpenPaiSettings& s, const std::string& vc,
                                                  const std::string& hived_address) {
  return render_template(templates_dir, "kube-scheduler-config.yaml",
                         {{"ns", s.ns},
                          {"scheduler", vc_scheduler_name(vc)},
                          {"hived_address", hived_address},
                          {"hived_port", std::to_string(s.hived_port)}});
}

util::Result<Manifests> render_openpai_manifests(const InstallSettings& s, const HostSpec& master) {
  Manifests out;
  auto ns = render_template(s.templates_dir, "namespace.yaml", {{"ns", s.openpai.ns}});
  if (!ns) return ns.error();
  out.emplace_back("namespace", std::move(*ns));
  if (phases::hived_wanted(s)) {
    auto cs = phases::hived_components(s, master);
    if (!cs) return cs.error();
    for (auto& c : *cs) out.emplace_back("hived: " + c.name, c.manifest);
  }
  if (phases::openpai_wanted(s)) {
    auto cs = phases::openpai_components(s, master);
    if (!cs) return cs.error();
    for (auto& c : *cs) out.emplace_back("openpai: " + c.name, c.manifest);
  }
  if (s.openpai.enabled)
    out.emplace_back("openpai: the Secret",
                     secret_manifest(s.openpai, base64("x"), base64("y"), base64("z")));
  return out;
}

std::string namespace_secrets_script(const InstallSettings& s) {
  std::string objects;
  std::vector<std::string> paths;
  const std::string ns = "/api/v1/namespaces/" + s.openpai.ns;
  if (s.openpai.enabled) {
    objects = std::string("secret/") + phases::kServicesSecret;
    paths.push_back(ns + "/secrets/" + phases::kServicesSecret);
  }
  if (!s.cluster_files.empty()) {
    objects += (objects.empty() ? "" : " ") + cluster_files_objects();
    for (const auto& p : cluster_files_paths()) paths.push_back(ns + p);
  }
  if (objects.empty()) return {};
  // --ignore-not-found: an object not there yet is left out of the List (and
  // nothing is printed when none is), instead of failing the read of the others.
  return api_json_read_script(
      paths, "-n " + s.openpai.ns + " get " + objects + " -o json --ignore-not-found");
}

nlohmann::json find_listed_object(const std::string& kubectl_json, const std::string& kind,
                                  const std::string& name) {
  auto j = util::parse_json_or_discarded(kubectl_json);
  auto is_it = [&](const nlohmann::json& o) {
    return o.is_object() && o.value("kind", "") == kind && o.contains("metadata") &&
           o["metadata"].is_object() && o["metadata"].value("name", "") == name;
  };
  if (is_it(j)) return j;
  if (j.is_object() && j.contains("items") && j["items"].is_array())
    for (const auto& o : j["items"])
      if (is_it(o)) return o;
  return nullptr;
}

}  // namespace pai::deploy

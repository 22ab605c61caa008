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
#include "util/strings.h"
#include "yaml/yaml.h"

namespace pai::deploy {

namespace {

using util::shell_quote;

constexpr const char* kSecretName = "pai-secrets";

std::string fnv_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string indent(const std::string& text, int n) {
  std::string pad(static_cast<size_t>(n), ' '), out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += (line.empty() ? "" : pad + line) + "\n";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string random_hex(size_t bytes) {
  std::ifstream in("/dev/urandom", std::ios::binary);
  std::string raw(bytes, '\0');
  in.read(raw.data(), static_cast<std::streamsize>(bytes));
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

// A set of objects applied together, recognised on the cluster by the hash of
// their rendered text in the annotation paictl.io/config-hash of its workloads.
struct Component {
  std::string name;
  std::string manifest;
  std::string hash;
  std::vector<std::pair<std::string, std::string>> workloads;  // (statefulset|deployment, name)
};

struct WorkloadState {
  bool found = false;
  std::string hash;
  bool available = false;
};

// The base of `hived` and `openpai`: components applied on the master with
// server-side apply when their hash differs, then their rollouts waited for; a
// rollout that does not finish is reported with its pods' state and events.
class WorkloadsPhase : public Phase, public ReadsAhead {
 public:
  WorkloadsPhase(std::string name, const InstallSettings& s)
      : Phase(std::move(name),
              {.hosts = PhaseTraits::Hosts::Master, .cluster_scope = true, .barrier = true}),
        s_(s) {}

  virtual bool wanted() const = 0;
  virtual util::Result<void> components(const HostSpec& master, std::vector<Component>& out) = 0;
  virtual util::Result<void> observe_extra(HostRun&, std::vector<std::string>&) { return {}; }
  virtual util::Result<void> apply_extra(HostRun&) { return {}; }

  util::Result<void> render(const std::string& name, const std::vector<std::string>& templates,
                            std::map<std::string, std::string> values, Component& c) {
    std::string text;
    values["hash"] = "";
    for (const auto& t : templates) {
      auto part = render_template(s_.templates_dir, t, values);
      if (!part) return part.error();
      text += "---\n" + *part;
    }
    values["hash"] = fnv_hash(text);
    c.name = name;
    c.hash = values["hash"];
    c.manifest.clear();
    for (const auto& t : templates) {
      auto part = render_template(s_.templates_dir, t, values);
      if (!part) return part.error();
      c.manifest += "---\n" + *part;
    }
    return {};
  }

  std::map<std::string, std::string> base_values(const HostSpec& master) const {
    const auto& o = s_.openpai;
    return {{"ns", o.ns},
            {"cluster_id", o.cluster_id},
            {"image_prefix", o.image_prefix},
            {"tag", o.tag},
            {"data_path", o.data_path},
            {"admin_user", o.admin_user},
            {"rest_port", std::to_string(o.rest_port)},
            {"webportal_port", std::to_string(o.webportal_port)},
            {"pylon_port", std::to_string(o.pylon_port)},
            {"hived_port", std::to_string(o.hived_port)},
            {"hived_address", master.address},
            {"kube_version", s_.kube_version}};
  }

  static std::string workloads_script() { return cluster_objects_script(); }
  virtual void extra_reads(HostRun&, std::vector<ObservationRead>&) {}
  void observation_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    if (!wanted()) return;
    extra_reads(h, out);
    out.push_back({&h, workloads_script()});
  }

  util::Result<void> workloads(HostRun& h, std::map<std::string, WorkloadState>& out) {
    auto r = h.observe_sh(workloads_script());
    if (!r.ok()) return command_failure("listing the workloads of " + s_.openpai.ns, r);
    auto all = nlohmann::json::parse(r.out, nullptr, false);
    nlohmann::json items = nlohmann::json::array();
    for (const char* kind : {"StatefulSet", "Deployment"}) {
      nlohmann::json of_kind = objects_of_kind(all, kind, s_.openpai.ns);
      for (auto& o : of_kind["items"]) items.push_back(std::move(o));
    }
    for (const auto& it : items) {
      if (!it.is_object() || !it.contains("metadata")) continue;
      const auto& md = it["metadata"];
      std::string kind = util::to_lower(it.value("kind", ""));
      std::string key = kind + "/" + md.value("name", "");
      WorkloadState w;
      w.found = true;
      if (md.contains("annotations") && md["annotations"].is_object())
        w.hash = md["annotations"].value("paictl.io/config-hash", "");
      w.available = rolled_out(it);
      out[key] = w;
    }
    return {};
  }

  util::Result<void> observe(HostRun& h, std::vector<std::string>& needs) override {
    pending_.clear();
    waiting_.clear();
    if (!wanted()) return {};
    std::vector<Component> cs;
    if (util::Result<void> s = components(h.spec(), cs); !s.ok()) return s;
    if (util::Result<void> s = observe_extra(h, needs); !s.ok()) return s;
    std::map<std::string, WorkloadState> live;
    if (util::Result<void> s = workloads(h, live); !s.ok()) return s;
    for (const auto& c : cs) {
      bool current = true, available = true;
      for (const auto& [kind, name] : c.workloads) {
        auto it = live.find(kind + "/" + name);
        if (it == live.end() || it->second.hash != c.hash) current = false;
        if (it == live.end() || !it->second.available) available = false;
      }
      if (!current) {
        needs.push_back("apply " + c.name);
        pending_.insert(c.name);
      } else if (!available) {
        needs.push_back("wait for " + c.name + " to roll out");
        waiting_.insert(c.name);
      }
    }
    return {};
  }

  util::Result<void> apply(HostRun& h, const std::vector<std::string>&) override {
    if (util::Result<void> s = apply_extra(h); !s.ok()) return s;
    std::vector<Component> cs;
    if (util::Result<void> s = components(h.spec(), cs); !s.ok()) return s;
    auto ns_doc = render_template(s_.templates_dir, "namespace.yaml", {{"ns", s_.openpai.ns}});
    if (!ns_doc) return ns_doc.error();
    std::string manifest;
    for (const auto& c : cs)
      if (pending_.count(c.name)) manifest += c.manifest;
    if (!manifest.empty()) {
      if (util::Result<void> s =
              run_step(h, "applying " + util::join({pending_.begin(), pending_.end()}, ", "),
                       std::string(kKubectl) +
                           " apply --server-side --field-manager=paictl --force-conflicts "
                           "-f - >/dev/null",
                       "---\n" + *ns_doc + "\n" + manifest);
          !s.ok())
        return s;
    }
    // Every rollout at once, in one read of the namespace's workloads per look.
    std::vector<std::string> wait;
    std::map<std::string, std::string> component_of;
    for (const auto& c : cs) {
      if (!pending_.count(c.name) && !waiting_.count(c.name)) continue;
      for (const auto& [kind, name] : c.workloads) {
        wait.push_back(kind + "/" + name);
        component_of[kind + "/" + name] = c.name;
      }
    }
    if (wait.empty()) return {};
    auto left = wait_for_rollouts(h, s_.openpai.ns, wait, s_.wait_s);
    if (left.empty()) return {};
    const std::string& w = left.front();
    std::string others;
    if (left.size() > 1) others = " (nor " + util::join({left.begin() + 1, left.end()}, ", ") + ")";
    return util::Error{component_of[w] + ": " + w + " did not roll out within " +
                           std::to_string(s_.wait_s) + " s" + others +
                           pod_report(h, w.substr(w.find('/') + 1)),
                       "look at the pods (kubectl -n " + s_.openpai.ns +
                           " describe pod ...): their image, node and logs; a re-run "
                           "waits again (--wait sets the time)"};
  }

  // The workload's pods and the events about them (only these fields: the log
  // keeps what the commands print).
  std::string pod_report(HostRun& h, const std::string& workload) {
    auto r =
        h.sh(std::string(kKubectl) + " -n " + s_.openpai.ns +
             " get pods --request-timeout=20s -o 'jsonpath={range .items[*]}{.metadata.name}"
             "{\"\\t\"}{.status.phase}{\"\\t\"}{.spec.nodeName}{\"\\t\"}{range "
             ".status.containerStatuses[*]}{.name} {.state.waiting.reason},{end}{\"\\n\"}{end}' "
             "2>/dev/null; echo '#EVENTS#'; " +
             kKubectl + " -n " + s_.openpai.ns +
             " get events --request-timeout=20s -o 'jsonpath={range .items[*]}"
             "{.involvedObject.name}{\"\\t\"}{.reason}{\"\\t\"}{.message}{\"\\n\"}{end}' "
             "2>/dev/null");
    if (!r.ok()) return {};
    auto cut = r.out.find("#EVENTS#");
    if (cut == std::string::npos) return {};
    std::vector<std::string> lines;
    std::set<std::string> names;
    for (auto line : util::split(std::string_view(r.out).substr(0, cut), '\n')) {
      auto f = util::split(line, '\t');
      if (f.size() < 3 || std::string(f[0]).rfind(workload + "-", 0) != 0) continue;
      names.insert(std::string(f[0]));
      std::string out = "pod " + std::string(f[0]) + ": " + std::string(f[1]);
      if (!f[2].empty()) out += " on " + std::string(f[2]);
      if (f.size() > 3)
        for (auto c : util::split(f[3], ','))
          if (auto sp = c.find(' '); sp != std::string_view::npos && sp + 1 < c.size())
            out += ", " + std::string(c.substr(0, sp)) + " " + std::string(c.substr(sp + 1));
      lines.push_back(out);
    }
    size_t events = 0;
    for (auto line : util::split(std::string_view(r.out).substr(cut + 8), '\n')) {
      auto f = util::split(line, '\t');
      if (f.size() < 3) continue;
      std::string n(f[0]);
      if (!names.count(n) && n != workload) continue;
      lines.push_back("event " + std::string(f[1]) + " on " + n + ": " + std::string(f[2]));
      if (++events >= 8) break;
    }
    return lines.empty() ? std::string() : "; " + util::join(lines, "; ");
  }

 protected:
  const InstallSettings& s_;
  std::set<std::string> pending_, waiting_;
};

class HivedPhase : public WorkloadsPhase {
 public:
  explicit HivedPhase(const InstallSettings& s) : WorkloadsPhase("hived", s) {}
  bool wanted() const override {
    return s_.openpai.enabled && s_.openpai.hived_enabled && !s_.openpai.hived_config.empty();
  }
  util::Result<void> components(const HostSpec& master, std::vector<Component>& out) override {
    auto v = base_values(master);
    const auto& o = s_.openpai;
    std::string config = hived_config_file(o);
    v["config"] = indent(config, 4);
    v["config_hash"] = fnv_hash(config);
    Component hs;
    if (util::Result<void> s =
            render("hivedscheduler (ConfigMap, StatefulSet hivedscheduler-hs, Service)",
                   {"hived-configmap.yaml", "hivedscheduler.yaml"}, v, hs);
        !s.ok())
      return s;
    hs.workloads = {{"statefulset", "hivedscheduler-hs"}};
    out.push_back(std::move(hs));
    for (const auto& vc : o.vcs) {
      auto sc = render_scheduler_config(s_.templates_dir, o, vc, master.address);
      if (!sc) return sc.error();
      auto vv = v;
      vv["vc"] = vc;
      vv["scheduler"] = vc_scheduler_name(vc);
      vv["scheduler_config"] = indent(*sc, 4);
      Component c;
      if (util::Result<void> s =
              render("the kube-scheduler of VC " + vc + " (" + vv["scheduler"] + ")",
                     {"hivedscheduler-vc.yaml"}, vv, c);
          !s.ok())
        return s;
      c.workloads = {{"statefulset", vv["scheduler"]}};
      out.push_back(std::move(c));
    }
    return {};
  }
};

class OpenPaiPhase : public WorkloadsPhase {
 public:
  explicit OpenPaiPhase(const InstallSettings& s) : WorkloadsPhase("openpai", s) {}
  bool wanted() const override { return s_.openpai.enabled; }
  util::Result<void> components(const HostSpec& master, std::vector<Component>& out) override {
    auto v = base_values(master);
    struct Def {
      const char* name;
      const char* tmpl;
      const char* kind;
    };
    for (const Def& d : {Def{"frameworkcontroller", "frameworkcontroller.yaml", "statefulset"},
                         Def{"postgresql", "postgresql.yaml", "statefulset"},
                         Def{"rest-server", "rest-server.yaml", "deployment"},
                         Def{"webportal", "webportal.yaml", "deployment"},
                         Def{"pylon", "pylon.yaml", "deployment"}}) {
      Component c;
      if (util::Result<void> s = render(d.name, {d.tmpl}, v, c); !s.ok()) return s;
      c.workloads = {{d.kind, d.name}};
      out.push_back(std::move(c));
    }
    return {};
  }

  // The Secret pai-secrets: the admin password from services-configuration.yaml,
  // the database password and the JWT key made once and kept. Read with the
  // cluster files (namespace_secrets_script), one kubectl run for both phases.
  void extra_reads(HostRun& h, std::vector<ObservationRead>& out) override {
    out.push_back({&h, namespace_secrets_script(s_), true});
  }
  util::Result<void> observe_extra(HostRun& h, std::vector<std::string>& needs) override {
    existing_.clear();
    secret_needed_ = false;
    auto r = h.observe_sh(namespace_secrets_script(s_), 120000, true);
    if (!r.ok()) return command_failure("reading the Secret " + std::string(kSecretName), r);
    auto j = find_listed_object(r.out, "Secret", kSecretName);
    std::fill(r.out.begin(), r.out.end(), '\0');
    if (j.is_object() && j.contains("data") && j["data"].is_object())
      for (const auto& [k, val] : j["data"].items())
        if (val.is_string()) existing_[k] = val.get<std::string>();
    std::vector<std::string> why;
    if (!existing_.count("postgres-password")) why.push_back("the database password");
    if (!existing_.count("jwt-secret")) why.push_back("the REST server's JWT key");
    if (!s_.openpai.admin_password.empty() &&
        existing_["admin-password"] != base64(s_.openpai.admin_password.reveal()))
      why.push_back("the admin password");
    if (s_.openpai.admin_password.empty() && !existing_.count("admin-password"))
      why.push_back("an admin password (services-configuration.yaml has none: one is made)");
    if (!why.empty()) {
      needs.push_back("write the Secret " + s_.openpai.ns + "/" + kSecretName + " (" +
                      util::join(why, ", ") + ")");
      secret_needed_ = true;
    }
    return {};
  }

  util::Result<void> apply_extra(HostRun& h) override {
    if (!secret_needed_) return {};
    auto keep = [&](const char* key, size_t bytes) {
      auto it = existing_.find(key);
      return it != existing_.end() ? it->second : base64(random_hex(bytes));
    };
    std::string admin = s_.openpai.admin_password.empty()
                            ? keep("admin-password", 12)
                            : base64(s_.openpai.admin_password.reveal());
    std::string secret =
        secret_manifest(s_.openpai, admin, keep("postgres-password", 16), keep("jwt-secret", 32));
    auto ns_doc = render_template(s_.templates_dir, "namespace.yaml", {{"ns", s_.openpai.ns}});
    if (!ns_doc) {
      std::fill(secret.begin(), secret.end(), '\0');
      return ns_doc.error();
    }
    std::string body = *ns_doc + "\n---\n" + secret;
    std::fill(secret.begin(), secret.end(), '\0');
    // The values go on stdin only; the log says how many bytes, nothing more.
    util::Result<void> s =
        run_step(h, "writing the Secret " + std::string(kSecretName),
                 std::string(kKubectl) +
                     " apply --server-side --field-manager=paictl --force-conflicts -f - "
                     ">/dev/null",
                 body);
    std::fill(body.begin(), body.end(), '\0');
    return s;
  }

 private:
  std::map<std::string, std::string> existing_;  // base64 values
  bool secret_needed_ = false;
};

}  // namespace

std::string secret_manifest(const OpenPaiSettings& o, const std::string& admin_b64,
                            const std::string& postgres_b64, const std::string& jwt_b64) {
  nlohmann::json secret = {{"apiVersion", "v1"},
                           {"kind", "Secret"},
                           {"metadata",
                            {{"name", kSecretName},
                             {"namespace", o.ns},
                             {"labels", {{"app.kubernetes.io/part-of", "openpai"}}}}},
                           {"type", "Opaque"},
                           {"data",
                            {{"admin-username", base64(o.admin_user)},
                             {"admin-password", admin_b64},
                             {"postgres-password", postgres_b64},
                             {"jwt-secret", jwt_b64}}}};
  return secret.dump() + "\n";
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
  std::ifstream in(services_file);
  if (!in) {
    s.enabled = false;
    return s;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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
  return render_template(
      templates_dir, "hived-configmap.yaml",
      {{"ns", s.ns}, {"config", indent(config, 4)}, {"config_hash", fnv_hash(config)}});
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
  HivedPhase hived(s);
  OpenPaiPhase openpai(s);
  for (WorkloadsPhase* p :
       {static_cast<WorkloadsPhase*>(&hived), static_cast<WorkloadsPhase*>(&openpai)}) {
    if (!p->wanted()) continue;
    std::vector<Component> cs;
    if (util::Result<void> st = p->components(master, cs); !st.ok()) return st.error();
    for (auto& c : cs) out.emplace_back(p->name() + ": " + c.name, c.manifest);
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
    objects = std::string("secret/") + kSecretName;
    paths.push_back(ns + "/secrets/" + kSecretName);
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
  auto j = nlohmann::json::parse(kubectl_json, nullptr, false);
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

std::unique_ptr<Phase> make_hived_phase(const InstallSettings& s) {
  return std::make_unique<HivedPhase>(s);
}
std::unique_ptr<Phase> make_openpai_phase(const InstallSettings& s) {
  return std::make_unique<OpenPaiPhase>(s);
}

}  // namespace pai::deploy

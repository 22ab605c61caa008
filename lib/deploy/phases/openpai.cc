// The `openpai` phase: the Secret pai-secrets, frameworkcontroller, PostgreSQL,
// the REST server, the web portal and the pylon gateway.
#include <algorithm>

#include "deploy/credentials.h"
#include "deploy/openpai.h"
#include "deploy/phases/workloads.h"
#include "util/fs.h"
#include "util/strings.h"

namespace pai::deploy {
namespace phases {

namespace {

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
      // Several masters: one replica of each stateless service on each, as
      // far as they are up (a lost master's replica waits; the others serve).
      const bool stateless = std::string(d.kind) == "deployment";
      v["master_spread"] = stateless && s_.highly_available()
                               ? std::string(
                                     "\n      topologySpreadConstraints:\n"
                                     "      - maxSkew: 1\n"
                                     "        topologyKey: kubernetes.io/hostname\n"
                                     "        whenUnsatisfiable: ScheduleAnyway\n"
                                     "        labelSelector:\n"
                                     "          matchLabels:\n"
                                     "            app: ") +
                                     d.name
                               : std::string();
      v["master_replicas"] =
          stateless ? std::to_string(std::max<size_t>(1, s_.masters.size())) : std::string("1");
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
    if (!r.ok()) return command_failure("reading the Secret " + std::string(kServicesSecret), r);
    auto j = find_listed_object(r.out, "Secret", kServicesSecret);
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
      why.push_back(
          "an admin password (services-configuration.yaml has none: one is made and written "
          "there first)");
    if (!why.empty()) {
      needs.push_back("write the Secret " + s_.openpai.ns + "/" + kServicesSecret + " (" +
                      util::join(why, ", ") + ")");
      secret_needed_ = true;
    }
    return {};
  }

  util::Result<void> apply_extra(HostRun& h) override {
    if (!secret_needed_) return {};
    auto keep = [&](const char* key, size_t bytes) -> util::Result<std::string> {
      if (auto it = existing_.find(key); it != existing_.end()) return it->second;
      auto made = util::random_hex(bytes);
      if (!made) return made.error();
      return base64(*made);
    };
    auto postgres = keep("postgres-password", 16);
    if (!postgres) return postgres.error();
    auto jwt = keep("jwt-secret", 32);
    if (!jwt) return jwt.error();
    std::string admin;
    if (!s_.openpai.admin_password.empty()) {
      admin = base64(s_.openpai.admin_password.reveal());
    } else if (existing_.count("admin-password")) {
      admin = existing_["admin-password"];
    } else {
      // The one home of the admin password is services-configuration.yaml: a
      // password made here is written there before the cluster gets it, so
      // that a kill between the two never loses it (a re-run reads it there).
      remote::Secret made = make_admin_password();
      if (h.run().masker) h.run().masker->add(made.reveal());
      if (auto w = write_admin_password(s_.openpai.services_file, made); !w.ok())
        return util::Error{"writing the new admin password into " + s_.openpai.services_file +
                               ": " + w.error().message,
                           "set rest-server.default-pai-admin-password there by hand"};
      h.log("openpai: a new admin password was written into " + s_.openpai.services_file);
      admin = base64(made.reveal());
    }
    std::string secret = secret_manifest(s_.openpai, admin, *postgres, *jwt);
    auto ns_doc = render_template(s_.templates_dir, "namespace.yaml", {{"ns", s_.openpai.ns}});
    if (!ns_doc) {
      std::fill(secret.begin(), secret.end(), '\0');
      return ns_doc.error();
    }
    std::string body = *ns_doc + "\n---\n" + secret;
    std::fill(secret.begin(), secret.end(), '\0');
    // The values go on stdin only; the log says how many bytes, nothing more.
    util::Result<void> s =
        run_step(h, "writing the Secret " + std::string(kServicesSecret),
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

bool openpai_wanted(const InstallSettings& s) {
  return OpenPaiPhase(s).wanted();
}

util::Result<std::vector<Component>> openpai_components(const InstallSettings& s,
                                                        const HostSpec& master) {
  std::vector<Component> out;
  if (auto made = OpenPaiPhase(s).components(master, out); !made) return made.error();
  return out;
}

}  // namespace phases

std::unique_ptr<Phase> make_openpai_phase(const InstallSettings& s) {
  return std::make_unique<phases::OpenPaiPhase>(s);
}

}  // namespace pai::deploy

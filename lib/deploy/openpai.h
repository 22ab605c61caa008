#pragma once
// HiveD and the OpenPAI services on an installed cluster: what `paictl install`
// applies after the nodes are Ready (templates/install/*.yaml rendered from the
// cluster files, applied on the master with server-side apply, rollouts waited
// for), and the HiveD ConfigMap `paictl hived apply` writes too.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "deploy/phase.h"
#include "remote/secret.h"
#include "util/result.h"

namespace pai::http {
class Client;
}

namespace pai::deploy {

// What the services need from services-configuration.yaml (and config.yaml).
struct OpenPaiSettings {
  bool enabled = false;       // services-configuration.yaml is there
  std::string services_file;  // its path (the admin password's home)
  std::string ns = "openpai";
  std::string cluster_id = "pai";
  std::string hived_config;      // hivedscheduler.config as written; "" = no HiveD
  std::vector<std::string> vcs;  // its virtual clusters, in file order
  bool hived_enabled = true;     // config.yaml enable_hived_scheduler
  std::string image_prefix = "docker.io/openpai/";  // cluster.docker-registry domain/namespace
  std::string tag = "v1.8.0";                       // cluster.docker-registry.tag
  std::string data_path = "/datastorage";           // cluster.common.data-path
  std::string admin_user = "admin";
  remote::Secret admin_password;  // rest-server.default-pai-admin-password
  int rest_port = 9186, webportal_port = 9286, pylon_port = 80, hived_port = 30096;
};

// Reads services-configuration.yaml (no file: the services are not enabled).
// The error (an Input one) names file:line:col when a value install needs is
// unusable; the file's own checks are `paictl check config`'s.
util::Result<OpenPaiSettings> load_openpai_settings(const std::string& services_file);

// HiveD's own config file: webServerAddress and the scheduling block, then the
// physicalCluster/virtualClusters text from services-configuration.yaml.
std::string hived_config_file(const OpenPaiSettings& s);
// The ConfigMap `hivedscheduler-config` (namespace s.ns) holding that file,
// from templates_dir/install/hived-configmap.yaml.
util::Result<std::string> render_hived_configmap(const std::string& templates_dir,
                                                 const OpenPaiSettings& s);
// The kube-scheduler of a VC: "hivedscheduler-ds-<vc>" (the VC's name made a DNS label).
std::string vc_scheduler_name(const std::string& vc);
// Its KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1, HiveD as extender).
util::Result<std::string> render_scheduler_config(const std::string& templates_dir,
                                                  const OpenPaiSettings& s, const std::string& vc,
                                                  const std::string& hived_address);

struct InstallSettings;
// One kubectl run on the master that reads the Secret pai-secrets (when the
// services are installed) and the cluster files' ConfigMap and Secret (when the
// config phase pushes them), in namespace s.openpai.ns: the openpai and config
// phases share it. "" when neither is wanted. Its output holds secrets.
std::string namespace_secrets_script(const InstallSettings& s);
// The object of this kind and name in that output (a List, or the object
// alone when only one was asked for); null when it is not there.
nlohmann::json find_listed_object(const std::string& kubectl_json, const std::string& kind,
                                  const std::string& name);

// The `hived` phase: the HiveD ConfigMap, HiveD, its inspect API Service, one
// kube-scheduler per VC with HiveD as its extender.
std::unique_ptr<Phase> make_hived_phase(const InstallSettings& s);
// The `openpai` phase: the Secret, frameworkcontroller, PostgreSQL, rest-server,
// webportal and the pylon gateway.
std::unique_ptr<Phase> make_openpai_phase(const InstallSettings& s);

// The `endpoints` phase, the last: the gateway's GET /api/v2/info (under
// /rest-server, else at its root) and HiveD's GET /v1/inspect/clusterstatus
// answer from this machine, and HiveD shows the nodes its config names Healthy.
std::unique_ptr<Phase> make_endpoints_phase(const InstallSettings& s);

// What answered what, for that phase (and its tests).
struct EndpointReport {
  bool gateway_ok = false;
  bool hived_ok = false;              // also false when HiveD is not installed
  std::vector<std::string> answers;   // "GET URL answered 200 (...)", one per request
  std::vector<std::string> problems;  // empty: everything answered as it should
};
EndpointReport check_endpoints(http::Client& client, const OpenPaiSettings& o,
                               const std::string& master_address,
                               const std::vector<std::string>& hived_nodes);
// The hosts (of `hosts`) that the HiveD config names as a cellAddress.
std::vector<std::string> hived_config_nodes(const OpenPaiSettings& o,
                                            const std::vector<std::string>& hosts);

// The Secret pai-secrets with these (base64) values.
std::string secret_manifest(const OpenPaiSettings& o, const std::string& admin_b64,
                            const std::string& postgres_b64, const std::string& jwt_b64);

// Every manifest the hived and openpai phases apply, rendered for this master
// as the phases render them: (what, text). For the schema tests.
util::Result<Manifests> render_openpai_manifests(const InstallSettings& s, const HostSpec& master);

// Base64 (RFC 4648, padded), for Secret data.
std::string base64(const std::string& in);

}  // namespace pai::deploy

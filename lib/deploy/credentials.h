#pragma once
// What an install hands back: the OpenPAI admin password (made by install when
// services-configuration.yaml has none, and written there, mode 0600, before
// the cluster is given it, so that a kill never loses it), the addresses the
// installed cluster is reached at (the pylon gateway and HiveD's inspect API
// on the master's network), and its registration in the user's cluster
// registry (lib/cluster/add.h: a sign-in to the gateway as the admin, whose
// token, never the password, is stored). docs/install.md.

#include <string>

#include "cluster/add.h"
#include "deploy/openpai.h"
#include "remote/secret.h"
#include "util/result.h"

namespace pai::http {
class Client;
}

namespace pai::deploy {

struct PreparedCluster;

// How the installed cluster is reached from this machine.
struct ClusterAccess {
  std::string name;           // services-configuration cluster.common.cluster-id
  std::string gateway;        // http://MASTER[:pylon.port] (the pylon, on the master)
  std::string hived;          // http://MASTER:PORT (HiveD's inspect API); "" without HiveD
  std::string user;           // the admin
  std::string services_file;  // where the admin password is
};
// The master's address and the settings: the gateway as check_endpoints asks
// it, HiveD as its StatefulSet serves it (hostNetwork, webServerAddress's port).
ClusterAccess cluster_access(const OpenPaiSettings& openpai, const std::string& master_address);
// The same for a prepared cluster (its master); `enabled` false without services.
ClusterAccess cluster_access(const PreparedCluster& cluster);

// A new admin password: 20 letters and digits from the kernel's random source.
remote::Secret make_admin_password();

// services-configuration.yaml's text with rest-server.default-pai-admin-password
// set to `password`: a key there with an empty value gets it, else the key is
// added under rest-server (made at the end when missing). Every other line,
// comments included, is kept as it was. An error (file:line:col) when the text
// is not YAML or rest-server is not a block mapping (nor empty).
util::Result<std::string> with_admin_password(const std::string& text,
                                              const std::string& services_file,
                                              const remote::Secret& password);

// Writes `password` into services-configuration.yaml (through a temporary file
// and a rename, mode 0600): the one home of the admin password.
util::Result<void> write_admin_password(const std::string& services_file,
                                        const remote::Secret& password);

// The admin password services-configuration.yaml holds now (empty when none).
util::Result<remote::Secret> read_admin_password(const std::string& services_file);

// `install --register NAME`: registers the installed cluster in the user's
// registry as `paictl cluster add NAME --uri GATEWAY --user ADMIN --hived HIVED
// --password-stdin` does: a sign-in to the gateway (REST v2 login) with the
// password, whose token is stored (the password is not).
struct RegisterRequest {
  std::string name;
  ClusterAccess access;
  remote::Secret password;
  bool force = false;  // replace a cluster of the same name
};
cluster::AddResult register_cluster(const RegisterRequest& request, http::Client& http,
                                    const cluster::Registry& registry, diag::List& diags);

// The command that does the same by hand (no password in it: it is read from stdin).
std::string cluster_add_command(const std::string& name, const ClusterAccess& access);

}  // namespace pai::deploy

#pragma once
// The Kubernetes control plane as a script on its master reaches it, for the
// use cases (lib/deploy) and check cluster (lib/check) alike: kubectl as
// cluster-admin, the API server through curl with admin.conf's credentials,
// a script run as root.

#include <string>

#include "inventory/host_spec.h"
#include "remote/transport.h"

namespace pai::kube {

// kubectl on the master, as cluster-admin. Its discovery cache stays in paictl's
// state directory, which reset removes, not in root's home.
inline constexpr const char* kKubectl =
    "kubectl --kubeconfig=/etc/kubernetes/admin.conf --cache-dir=/etc/paictl/kube-cache";

// The pieces of an API read or write in a script on the master: the first sets
// pai_api=1 where admin.conf has a server and a client certificate and curl and
// base64 are there; the second is a curl command line of `args` (after
// api_access_script, with "$pai_s" the server) given those credentials.
std::string api_access_script();
std::string api_curl(const std::string& args);

// Runs `script` on a host of the cluster (the master, mostly) as root over
// `transport` (sudo -n unless root), within `timeout_ms`.
remote::ExecResult run_on_master(remote::Transport& transport, const inventory::HostSpec& master,
                                 const std::string& script, const std::string& input = {},
                                 int timeout_ms = 120000);

}  // namespace pai::kube

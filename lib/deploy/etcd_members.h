#pragma once
// The stacked etcd cluster of an HA control plane as a master's etcdctl sees it
// (`member list` and `endpoint health --cluster`), and whether removing members
// keeps its quorum: node remove of a master asks this before it removes the
// master's member (docs/install.md, "Losing a master").
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "util/result.h"

namespace pai::deploy {

struct EtcdMember {
  std::string id;  // hexadecimal, as `etcdctl member remove` takes it
  std::string name;
  std::vector<std::string> peer_urls, client_urls;
  bool healthy = false;  // one of its client URLs answered `endpoint health`
};

// The shell lines that print both views of the members through the etcd at
// `endpoint`, with kubeadm's health-check client certificate (etcdctl_prelude).
std::string etcd_members_script(const std::string& endpoint);

// What etcd_members_script printed: the members, each with its health. An
// error when the member list is missing or is not etcdctl's JSON.
util::Result<std::vector<EtcdMember>> parse_etcd_members(const std::string& output);

// The names of the members that did not answer `endpoint health`, in list order.
std::vector<std::string> unhealthy_etcd_members(const std::vector<EtcdMember>& members);

// The member of a master: its name, or a peer URL on its address.
const EtcdMember* find_etcd_member(const std::vector<EtcdMember>& members, const std::string& name,
                                   const std::string& address);

// Why removing `removing` (member names) would leave etcd without a quorum
// (fewer healthy members than a majority of those left), or would remove every
// member; nullopt when the removal is safe.
std::optional<util::Error> etcd_quorum_refusal(const std::vector<EtcdMember>& members,
                                               const std::set<std::string>& removing);

// Why a master named `joining` (at `address`) must not join now: its old member
// is still listed (a replaced machine: remove that member first), or the member
// it adds, not started yet, would leave fewer healthy members than a majority
// (etcd itself refuses that member add); nullopt when the join is safe.
std::optional<util::Error> etcd_join_refusal(const std::vector<EtcdMember>& members,
                                             const std::string& joining,
                                             const std::string& address);

}  // namespace pai::deploy

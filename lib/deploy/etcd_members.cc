#include "deploy/etcd_members.h"

#include <cinttypes>
#include <cstdio>

#include "deploy/backup.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {

constexpr const char* kMembersMark = "@@paictl members@@";
constexpr const char* kHealthMark = "@@paictl health@@";

std::vector<std::string> etcd_strings(const nlohmann::json& m, const char* key) {
  std::vector<std::string> out;
  if (m.contains(key) && m[key].is_array())
    for (const auto& u : m[key])
      if (u.is_string()) out.push_back(u.get<std::string>());
  return out;
}

}  // namespace

std::string etcd_members_script(const std::string& endpoint) {
  // endpoint health exits 1 when a member is down; its JSON is what is read.
  return etcdctl_prelude(endpoint, 10) + "echo '" + kMembersMark + "'; $E member list -w json\n" +
         "echo; echo '" + kHealthMark + "'; $E endpoint health --cluster -w json 2>/dev/null\n" +
         "true\n";
}

util::Result<std::vector<EtcdMember>> parse_etcd_members(const std::string& output) {
  size_t m = output.find(kMembersMark), h = output.find(kHealthMark);
  if (m == std::string::npos || h == std::string::npos || h < m)
    return util::Error{"etcdctl printed no member list", "", util::Error::Kind::Remote};
  size_t from = m + std::string(kMembersMark).size();
  auto list = util::parse_json_or_discarded(output.substr(from, h - from));
  auto health = util::parse_json_or_discarded(output.substr(h + std::string(kHealthMark).size()));
  if (!list.is_object() || !list.contains("members") || !list["members"].is_array())
    return util::Error{"etcdctl's member list is not the JSON of `member list -w json`", "",
                       util::Error::Kind::Remote};
  std::set<std::string> up;
  if (health.is_array())
    for (const auto& e : health)
      if (e.is_object() && e.value("health", false) && e.contains("endpoint") &&
          e["endpoint"].is_string())
        up.insert(e["endpoint"].get<std::string>());
  std::vector<EtcdMember> out;
  for (const auto& x : list["members"]) {
    if (!x.is_object()) continue;
    EtcdMember em;
    if (x.contains("ID") && x["ID"].is_number_unsigned()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%" PRIx64, x["ID"].get<uint64_t>());
      em.id = buf;
    } else if (x.contains("ID") && x["ID"].is_number_integer()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%" PRIx64, static_cast<uint64_t>(x["ID"].get<int64_t>()));
      em.id = buf;
    }
    em.name = x.value("name", "");
    em.peer_urls = etcd_strings(x, "peerURLs");
    em.client_urls = etcd_strings(x, "clientURLs");
    for (const auto& u : em.client_urls) em.healthy |= up.count(u) > 0;
    out.push_back(std::move(em));
  }
  return out;
}

std::vector<std::string> unhealthy_etcd_members(const std::vector<EtcdMember>& members) {
  std::vector<std::string> sick;
  for (const auto& m : members)
    if (!m.healthy) sick.push_back(m.name);
  return sick;
}

const EtcdMember* find_etcd_member(const std::vector<EtcdMember>& members, const std::string& name,
                                   const std::string& address) {
  for (const auto& m : members)
    if (m.name == name) return &m;
  std::string peer = "https://" + address + ":2380";
  for (const auto& m : members)
    for (const auto& u : m.peer_urls)
      if (u == peer) return &m;
  return nullptr;
}

std::optional<util::Error> etcd_quorum_refusal(const std::vector<EtcdMember>& members,
                                               const std::set<std::string>& removing) {
  size_t healthy = 0;
  std::vector<std::string> left, sick;
  size_t healthy_left = 0;
  for (const auto& m : members) {
    healthy += m.healthy;
    if (removing.count(m.name)) continue;
    left.push_back(m.name);
    healthy_left += m.healthy;
    if (!m.healthy) sick.push_back(m.name);
  }
  std::string hint_sick =
      sick.empty() ? ""
                   : "bring " + util::join(sick, ", ") + " back, or remove the lost master" +
                         (sick.size() == 1 ? "" : "s") + " first (paictl node remove CLUSTER_DIR " +
                         util::join(sick, " ") + ")";
  if (healthy < members.size() / 2 + 1)
    return util::Error{
        "etcd has no quorum: " + std::to_string(healthy) + " of " + std::to_string(members.size()) +
            " members healthy",
        "no member can be removed until a majority answers; " +
            (hint_sick.empty() ? std::string("look at the masters' etcd pods") : hint_sick),
        util::Error::Kind::Remote};
  if (left.empty())
    return util::Error{"removing every etcd member would remove the cluster",
                       "paictl reset removes the cluster; keep at least one master",
                       util::Error::Kind::Input};
  size_t need = left.size() / 2 + 1;
  if (healthy_left < need)
    return util::Error{
        "removing " + util::join(std::vector<std::string>(removing.begin(), removing.end()), ", ") +
            " would leave " + std::to_string(left.size()) + " etcd member" +
            (left.size() == 1 ? "" : "s") + " (" + util::join(left, ", ") + ") of which " +
            std::to_string(healthy_left) + " healthy; a quorum needs " + std::to_string(need),
        hint_sick, util::Error::Kind::Input};
  return std::nullopt;
}

std::optional<util::Error> etcd_join_refusal(const std::vector<EtcdMember>& members,
                                             const std::string& joining,
                                             const std::string& address) {
  if (const EtcdMember* old = find_etcd_member(members, joining, address))
    return util::Error{
        "etcd still lists a member of " + joining + " (" + old->name + ", " +
            (old->healthy ? "healthy" : "not healthy") + ") that this host does not run",
        "a replaced master joins once its old member is gone: paictl node remove CLUSTER_DIR " +
            joining + " removes it (then put the host back in layout.yaml and node add it)",
        util::Error::Kind::Input};
  size_t healthy = 0;
  std::vector<std::string> sick;
  for (const auto& m : members) {
    healthy += m.healthy;
    if (!m.healthy) sick.push_back(m.name);
  }
  size_t need = (members.size() + 1) / 2 + 1;
  // As etcd's own check: a second member may join one that runs (growing one
  // master to three goes through two members).
  if (members.size() == 1 && healthy == 1) return std::nullopt;
  if (healthy < need)
    return util::Error{"joining " + joining + " would make " + std::to_string(members.size() + 1) +
                           " etcd members of which " + std::to_string(healthy) +
                           " healthy until it starts; a quorum needs " + std::to_string(need),
                       sick.empty()
                           ? std::string("look at the masters' etcd pods")
                           : "remove the lost master" + std::string(sick.size() == 1 ? "" : "s") +
                                 " first (paictl node remove CLUSTER_DIR " + util::join(sick, " ") +
                                 "), or bring " + util::join(sick, ", ") + " back",
                       util::Error::Kind::Input};
  return std::nullopt;
}

}  // namespace pai::deploy

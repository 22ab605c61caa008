#pragma once
// HiveD's inspect API (microsoft/hivedscheduler pkg/webserver, pkg/api/types.go):
// its JSON shapes as types, strict parsers, writers in HiveD's own field order,
// and a client over http::Client.
//
//   GET /v1/inspect/clusterstatus                      {"physicalCluster":[...],
//   "virtualClusters":{vc:[...]}} GET /v1/inspect/clusterstatus/physicalcluster
//   [PhysicalCellStatus...] GET /v1/inspect/clusterstatus/virtualclusters/     {vc:
//   [VirtualCellStatus...]} GET /v1/inspect/clusterstatus/virtualclusters/VC [VirtualCellStatus...]
//   400 "VC x not found" GET /v1/inspect/affinitygroups/ {"items":[AffinityGroup...]} GET
//   /v1/inspect/affinitygroups/NAME                AffinityGroup            400 "Affinity group
//   ..."
//
// Errors come as HiveD writes them: the status code and a bare JSON string.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/client.h"
#include "util/result.h"

namespace pai::hived {

using Json = nlohmann::ordered_json;

struct CellStatus {
  std::string leaf_cell_type;  // leafCellType: top cells of a chain only (omitempty)
  std::string cell_type;
  bool is_node_level = false;
  std::string cell_address;
  std::string cell_state;        // Free | Used | Reserving | Reserved
  std::string cell_healthiness;  // Healthy | Bad
  int32_t cell_priority = -2;    // -2 free, -1 opportunistic, 0..1000
};

struct VirtualCellStatus;

struct PhysicalCellStatus : CellStatus {
  std::vector<PhysicalCellStatus> children;         // cellChildren (omitempty)
  std::string vc;                                   // vc (omitempty)
  std::shared_ptr<VirtualCellStatus> virtual_cell;  // virtualCell: shallow (omitempty)
};

struct VirtualCellStatus : CellStatus {
  std::vector<VirtualCellStatus> children;            // cellChildren (omitempty)
  std::shared_ptr<PhysicalCellStatus> physical_cell;  // physicalCell: shallow (omitempty)
};

using PhysicalClusterStatus = std::vector<PhysicalCellStatus>;
using VirtualClusterStatus = std::vector<VirtualCellStatus>;

struct ClusterStatus {
  PhysicalClusterStatus physical_cluster;
  std::map<std::string, VirtualClusterStatus> virtual_clusters;
};

struct LazyPreemptionStatus {
  std::string preemptor;
  std::string preemption_time;  // RFC 3339
};

struct AffinityGroup {
  std::string name;  // metadata.name
  std::string vc;
  int32_t priority = 0;
  std::string state;  // Allocated | Preempting | BeingPreempted
  std::map<std::string, std::vector<int32_t>> physical_placement;     // node -> leaf cell indices
  std::map<std::string, std::vector<std::string>> virtual_placement;  // preassigned -> leaves
  std::vector<std::string> allocated_pods;
  std::vector<std::string> preempting_pods;
  std::optional<LazyPreemptionStatus> lazy_preemption_status;
};

// --- parsing: strict on the fields paictl relies on, unknown fields ignored ---------

// A parse error's message says where, in HiveD's terms:
// "physicalCluster[0].cellChildren[1].cellPriority: expected an integer".
template <class T>
using Parsed = util::Result<T>;

Parsed<ClusterStatus> parse_cluster_status(std::string_view text);
Parsed<PhysicalClusterStatus> parse_physical_cluster(std::string_view text);
Parsed<std::map<std::string, VirtualClusterStatus>> parse_virtual_clusters(std::string_view text);
Parsed<VirtualClusterStatus> parse_virtual_cluster(std::string_view text);
Parsed<std::vector<AffinityGroup>> parse_affinity_groups(std::string_view text);
Parsed<AffinityGroup> parse_affinity_group(std::string_view text);

// A saved live state (`paictl hived snapshot`): {"clusterStatus": the answer of
// GET /v1/inspect/clusterstatus, "affinityGroups": that of /v1/inspect/affinitygroups/};
// other keys are ignored.
struct Snapshot {
  ClusterStatus status;
  std::vector<AffinityGroup> groups;
};
Parsed<Snapshot> parse_snapshot(std::string_view text);

// --- writing, in HiveD's field order and omitempty rules ------------------------------

Json to_json(const PhysicalCellStatus& c);
Json to_json(const VirtualCellStatus& c);
Json to_json(const PhysicalClusterStatus& s);
Json to_json(const std::map<std::string, VirtualClusterStatus>& s);
Json to_json(const ClusterStatus& s);
Json to_json(const AffinityGroup& g);
Json to_json(const std::vector<AffinityGroup>& groups);  // {"items": [...]}

// --- the client -------------------------------------------------------------------------

struct Error {
  enum class Kind { Transport, Http, Decode } kind = Kind::Http;
  long status = 0;
  std::string message;  // HiveD's message (the bare JSON string), or what went wrong
  http::ErrorKind transport = http::ErrorKind::None;
  std::string doing;            // what was asked, when a caller says: "reading the cluster status"
  std::string summary() const;  // "400: VC x not found"
};

template <class T>
using Result = util::Result<T, Error>;

// The error of a non-2xx answer: HiveD's bare JSON string, else the body's text.
Error error_from_response(const http::Response& r);

class Client {
 public:
  // `base` is where HiveD's web server answers ("http://master:30096", or through
  // OpenPAI's pylon "https://pai.example.com/a/master:30096"). The token is sent
  // as a bearer token to `token_host` only (the registered cluster's host), as the
  // REST client does; "" sends none.
  Client(http::Client& http, std::string base, std::string token = {}, std::string token_host = {});
  const std::string& base() const { return base_; }

  Result<ClusterStatus> cluster_status();
  Result<PhysicalClusterStatus> physical_cluster();
  Result<std::map<std::string, VirtualClusterStatus>> virtual_clusters();
  Result<VirtualClusterStatus> virtual_cluster(const std::string& vc);
  Result<std::vector<AffinityGroup>> affinity_groups();
  Result<AffinityGroup> affinity_group(const std::string& name);
  // The raw answer of GET base+path (for callers that need the text).
  Result<std::string> get(const std::string& path);

 private:
  http::Client& http_;
  std::string base_;
  std::string token_;
  std::string token_host_;
};

// HiveD's address behind a registered OpenPAI cluster: OpenPAI serves HiveD on
// NodePort 30096 of the master and its pylon proxies /a/<host>:<port>/..., so
// "https://pai.example.com" -> "https://pai.example.com/a/pai.example.com:30096".
std::string base_behind_pylon(const std::string& cluster_uri, int port = 30096);

// The last '/'-separated part of a cell address ("VC/3/1" -> "1"), or all of it.
std::string last_segment(const std::string& address);
// A VC's opportunistic use: HiveD lists it as cells at priority -1 whose address
// ends in "-opp".
bool is_opportunistic_entry(const CellStatus& c);

}  // namespace pai::hived

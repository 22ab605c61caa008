#pragma once
// A client of the OpenPAI REST API v2 (src/rest-server, routes/v2). Every call
// returns the decoded answer or an Error that says, in one line per item, what
// the server refused and how to fix it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/client.h"
#include "util/result.h"

namespace pai::api {

using Json = nlohmann::json;

struct Error {
  enum class Kind { Transport, Http, Decode } kind = Kind::Http;
  long status = 0;
  std::string code;                  // OpenPAI's error code (NoJobError, InvalidProtocolError, ...)
  std::string message;               // one line
  std::vector<std::string> details;  // InvalidProtocolError's schema errors, one per line
  std::string hint;                  // what to do about it; may be empty
  http::ErrorKind transport = http::ErrorKind::None;
  // "404 NoJobError: Job alice~x is not found." or the transport message.
  std::string summary() const;
};

// Reads an OpenPAI error answer ({code, message}), a proxy's HTML page, or the
// rate limiter's text into an Error. InvalidProtocolError messages that hold
// AJV's JSON error list become one detail line per schema error.
Error error_from_response(const http::Response& r);
Error error_from_transport(const http::Result& r);

// The answer of a call, or the server's (or the transport's) refusal.
template <class T>
using Result = util::Result<T, Error>;

struct ClusterInfo {
  std::string name;
  std::string version;
  std::string launcher_type;
  std::string authn_method;  // basic or OIDC
};

struct LoginResult {
  std::string token;
  std::string user;
  bool admin = false;
};

struct UserInfo {
  std::string username;
  bool admin = false;
  std::vector<std::string> virtual_clusters;  // the VCs the user may submit to
  Json raw;
};

struct Resources {
  double cpu = 0;
  double memory_mb = 0;
  double gpu = 0;
};

struct VirtualCluster {
  std::string name;
  double capacity = 0;       // % of the cluster's GPUs guaranteed
  double used_capacity = 0;  // %
  double max_capacity = 0;   // %
  bool dedicated = false;
  Resources used;
  Resources guaranteed;
  Resources total;
  Json raw;
  // total - used, not below 0
  Resources free() const;
};

struct SkuType {
  std::string name;
  double cpu = 0;
  double memory_mb = 0;
  double gpu = 0;
};

struct Storage {
  std::string name;
  bool share = false;
  bool is_default = false;
};

struct JobFilter {
  std::string username;  // comma list
  std::string vc;
  std::string state;  // comma list of WAITING, RUNNING, ...
  std::string keyword;
  std::string tags_contain;      // comma list: jobs with any of these tags
  std::string tags_not_contain;  // comma list: jobs with none of these tags
  std::string order;             // "<field>,ASC|DESC" (server default submissionTime,DESC)
  int offset = 0;
  int limit = 0;  // 0: server default (5000)
  bool with_total_count = false;
};

// One page of GET /api/v2/jobs.
struct JobPage {
  Json items = Json::array();
  long total = -1;  // withTotalCount's totalCount; -1 when the server did not say
};

// A piece of a log read from a byte offset (HTTP Range).
struct LogChunk {
  std::string data;          // the new bytes
  uint64_t next_offset = 0;  // where the next read starts
  bool whole = false;        // the server ignored the range and sent the whole log
};

// The OpenPAI job id: "user~name".
std::string job_id(const std::string& user, const std::string& name);

class Client {
 public:
  // `rest_base` is the rest-server prefix, e.g. "https://host/rest-server"
  // (pylon) or "http://host:9186"; paths start with /api/v2.
  Client(http::Client& http, std::string rest_base, std::string token = {});

  const std::string& base() const { return base_; }

  Result<ClusterInfo> info();
  Result<std::string> authn_method();  // GET /api/v2/authn/info: "basic" or "OIDC"
  Result<LoginResult> login(const std::string& user, const std::string& password,
                            int expiration_s = 7 * 86400);
  Result<UserInfo> user(const std::string& name);
  Result<std::vector<VirtualCluster>> virtual_clusters();
  Result<std::vector<SkuType>> sku_types(const std::string& vc = {});
  Result<std::vector<Storage>> storages();

  // POST /api/v2/jobs with the YAML text. Returns the server's message.
  Result<std::string> submit_job(const std::string& yaml);
  Result<Json> list_jobs(const JobFilter& f);
  Result<JobPage> list_jobs_page(const JobFilter& f);
  // GET .../job-attempts: every attempt of the job (retries), oldest first.
  Result<Json> job_attempts(const std::string& user, const std::string& name);
  Result<Json> get_job(const std::string& user, const std::string& name);
  // true when the job exists, false on 404 NoJobError.
  Result<bool> job_exists(const std::string& user, const std::string& name);
  Result<std::string> job_config(const std::string& user, const std::string& name);
  // GET .../events: the Kubernetes events of the job's pods ({totalCount, data: [...]});
  // `type` "Warning" or "Normal" filters them ("" for all).
  Result<Json> job_events(const std::string& user, const std::string& name,
                          const std::string& type = {});
  Result<std::string> set_execution_type(const std::string& user, const std::string& name,
                                         const std::string& value);
  Result<std::string> add_tag(const std::string& user, const std::string& name,
                              const std::string& tag);
  Result<std::string> remove_tag(const std::string& user, const std::string& name,
                                 const std::string& tag);
  Result<Json> task_log_locations(const std::string& user, const std::string& name, int job_attempt,
                                  const std::string& task_role, int task_index, int task_attempt,
                                  bool tail);
  // The attempt history of one task: its status plus `attempts: [...]`.
  Result<Json> task_attempts(const std::string& user, const std::string& name, int job_attempt,
                             const std::string& task_role, int task_index);
  // Downloads a log from the URL the server gave (log-manager URLs carry their
  // own token; the cluster token is sent only to the cluster's own host).
  Result<std::string> fetch_log(const std::string& url);
  // The log from byte `offset` on ("Range: bytes=N-"). A 416 answer means no new
  // bytes. A server that ignores Range answers 200 with the whole log: the bytes
  // before `offset` are dropped here and `whole` is set.
  Result<LogChunk> fetch_log_from(const std::string& url, uint64_t offset);

 private:
  http::Result call(const std::string& method, const std::string& path,
                    const std::string& body = {}, const std::string& content_type = {},
                    bool auth = true, std::optional<bool> idempotent = {});
  template <class T>
  Result<T> fail(const http::Result& r);
  Result<Json> json_call(const std::string& method, const std::string& path,
                         const std::string& body = {}, const std::string& content_type = {},
                         bool auth = true);

  http::Client& http_;
  std::string base_;
  std::string token_;
};

}  // namespace pai::api

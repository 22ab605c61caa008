// Reads of the cluster's objects on the master (phase.h): through kubectl, or
// through one curl run against the API server with admin.conf's credentials.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deploy/engine.h"
#include "deploy/phase.h"
#include "util/json.h"
#include "util/strings.h"

namespace pai::deploy {

namespace {
constexpr const char* kKubectlReadGuard =
    "[ -f /etc/kubernetes/admin.conf ] || { echo '{}'; exit 0; }\n";
}  // namespace

bool is_cluster_read(const std::string& script) {
  return script.starts_with(kKubectlReadGuard);
}

std::string kubectl_json_read_script(const std::string& args) {
  return std::string(kKubectlReadGuard) + kKubectl + " " + args +
         " --request-timeout=20s 2>/dev/null || echo '{}'";
}

namespace {
constexpr const char* kApiReadMark = "# paictl API read; else kubectl ";
constexpr const char* kApiStatus = "@@paictl-api ";
constexpr const char* kApiUnavailable = "@@paictl-api-unavailable";
}  // namespace

std::string api_json_read_script(const std::vector<std::string>& paths,
                                 const std::string& kubectl_args) {
  std::string urls;
  for (const auto& p : paths) urls += " \"$pai_s\"" + util::shell_quote(p);
  return std::string(kKubectlReadGuard) + kApiReadMark + kubectl_args + "\n" + api_access_script() +
         "[ -n \"$pai_api\" ] || { echo '" + kApiUnavailable +
         "'; exit 0; }\n"
         "{\n" +
         api_curl("-w '\\n" + std::string(kApiStatus) + "%{http_code}\\n'" + urls) + "} || echo '" +
         kApiUnavailable + "'\n";
}

std::string api_read_fallback(const std::string& script) {
  const std::string head = std::string(kKubectlReadGuard) + kApiReadMark;
  if (!script.starts_with(head)) return {};
  size_t nl = script.find('\n', head.size());
  return script.substr(head.size(), nl == std::string::npos ? std::string::npos : nl - head.size());
}

bool api_read_as_list(const std::string& output, std::string& out) {
  std::string_view o = util::trim(output);
  if (o == "{}") {  // no admin.conf yet: no cluster, as the kubectl read says
    out = "{}";
    return true;
  }
  if (o.find(kApiUnavailable) != std::string_view::npos) return false;
  nlohmann::json items = nlohmann::json::array();
  size_t pos = 0, answers = 0;
  const std::string status = std::string("\n") + kApiStatus;
  std::string_view all(output);
  while (pos < all.size()) {
    size_t at = all.find(status, pos);
    if (at == std::string_view::npos) {
      if (!util::trim(all.substr(pos)).empty()) return false;  // a cut answer
      break;
    }
    std::string_view body = all.substr(pos, at - pos);
    size_t code_at = at + status.size();
    size_t eol = all.find('\n', code_at);
    std::string_view code =
        all.substr(code_at, eol == std::string_view::npos ? std::string_view::npos : eol - code_at);
    pos = eol == std::string_view::npos ? all.size() : eol + 1;
    ++answers;
    if (code == "404") continue;  // not there: left out, as --ignore-not-found
    if (code != "200") return false;
    auto j = util::parse_json_or_discarded(body);
    if (!j.is_object()) return false;
    std::string kind = j.value("kind", "");
    if (kind.size() > 4 && kind.ends_with("List") && j.contains("items") && j["items"].is_array()) {
      // The API server's lists leave their items' kind out; kubectl fills it in.
      std::string item_kind = kind.substr(0, kind.size() - 4);
      std::string api_version = j.value("apiVersion", "");
      for (auto& i : j["items"]) {
        if (!i.is_object()) continue;
        if (!i.contains("kind")) i["kind"] = item_kind;
        if (!i.contains("apiVersion") && !api_version.empty()) i["apiVersion"] = api_version;
        items.push_back(std::move(i));
      }
    } else if (!kind.empty()) {
      items.push_back(std::move(j));
    } else {
      return false;
    }
  }
  if (answers == 0) return false;
  nlohmann::json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
  out = util::dump_json(list);
  return true;
}

}  // namespace pai::deploy

#include "http/library_version.h"

#include <curl/curl.h>

namespace pai::http {

std::string libcurl_version() {
  const curl_version_info_data* v = curl_version_info(CURLVERSION_NOW);
  if (!v || !v->version) return "unknown";
  std::string s = v->version;
  if (v->ssl_version) s += std::string(" (") + v->ssl_version + ")";
  return s;
}

}  // namespace pai::http

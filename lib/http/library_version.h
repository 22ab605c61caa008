#pragma once
#include <string>

namespace pai::http {
// The version of the libcurl libpai runs with, and its TLS backend ("8.1.2 (OpenSSL/3.0.9)").
std::string libcurl_version();
}  // namespace pai::http

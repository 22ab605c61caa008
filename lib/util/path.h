#pragma once
// Paths as text.

#include <string>

namespace pai::util {

// A file in a directory: "out/" + "a.yaml" -> "out/a.yaml", "out" + "a.yaml" ->
// "out/a.yaml", "" + "a.yaml" -> "a.yaml" (the directory's trailing slashes
// are not doubled; "/" stays "/a.yaml").
inline std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  size_t end = dir.find_last_not_of('/');
  if (end == std::string::npos) return "/" + name;
  return dir.substr(0, end + 1) + "/" + name;
}

}  // namespace pai::util

#pragma once
// Reading the files a unit test compares against (samples, recorded data, docs).

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace pai::test {

// The whole content of `path`, as bytes; a file that cannot be opened fails the test.
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace pai::test

#pragma once
// Where a YAML 1.1 loader reads a plain scalar differently from YAML 1.2.
//
// paictl reads YAML 1.2 (core schema), but the programs that consume the files
// follow YAML 1.1: PyYAML (OpenPAI's installer reads the cluster files), Go's
// gopkg.in/yaml.v2 (HiveD reads its config). For them `yes`/`no`/`on`/`off` are
// booleans, `0777` is the octal number 511, `1:20` is the base-60 number 80,
// `1_000` is 1000 and `2024-01-01` is a date, where YAML 1.2 sees strings or other
// numbers. This module tells, for each plain untagged scalar, what the consumer
// will see when it is not what paictl sees.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "yaml/yaml.h"

namespace pai::yaml {

enum class Loader : uint8_t { PyYaml, GoYamlV2 };

// What a loader makes of a plain scalar.
struct ScalarReading {
  enum class Type : uint8_t { Null, Bool, Int, Float, Timestamp, String };
  Type type = Type::String;
  bool boolean = false;
  double number = 0;
  // "the boolean true", "the number 511", "the date 2024-01-01", "the string \"yes\"", "null".
  std::string describe(std::string_view text) const;
  bool same_value(const ScalarReading& o) const;
};

// YAML 1.2 core schema, as Node::is_null/as_bool/as_int/as_float read it.
ScalarReading read_yaml12(const Node& n);
ScalarReading read_yaml11(std::string_view text, Loader loader);

struct LoaderDifference {
  const Node* node;
  std::string message;  // "PyYAML reads `yes` as the boolean true; YAML 1.2 ... the string \"yes\""
  std::string hint;
};

// Every plain untagged scalar (keys and values) of the stream's documents that
// `loader` reads differently, in document order, each node once.
std::vector<LoaderDifference> loader_differences(const Stream& s, Loader loader,
                                                 std::string_view consumer);
// The same for any loader: `read` gives its reading of a plain scalar's text, or
// nullopt to skip it.
using PlainReader = std::function<std::optional<ScalarReading>(std::string_view)>;
std::vector<LoaderDifference> loader_differences(const Stream& s, const PlainReader& read,
                                                 std::string_view consumer);

}  // namespace pai::yaml

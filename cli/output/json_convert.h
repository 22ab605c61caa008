// Conversions between the JSON of lib/ (nlohmann::json, keys in name order)
// and paictl's output documents (nlohmann::ordered_json).
#pragma once

#include <nlohmann/json.hpp>

namespace paictl {

// A server's answer as an output document, without a round trip through text.
nlohmann::ordered_json to_ordered(const nlohmann::json& j);

}  // namespace paictl

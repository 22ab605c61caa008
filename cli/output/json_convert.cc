#include "output/json_convert.h"

namespace paictl {

nlohmann::ordered_json to_ordered(const nlohmann::json& j) {
  using Json = nlohmann::ordered_json;
  using T = nlohmann::json::value_t;
  switch (j.type()) {
    case T::object: {
      Json o = Json::object();
      for (auto it = j.begin(); it != j.end(); ++it) o.emplace(it.key(), to_ordered(it.value()));
      return o;
    }
    case T::array: {
      Json a = Json::array();
      a.get_ref<Json::array_t&>().reserve(j.size());
      for (const auto& v : j) a.push_back(to_ordered(v));
      return a;
    }
    case T::string:
      return j.get_ref<const std::string&>();
    case T::boolean:
      return j.get<bool>();
    case T::number_integer:
      return j.get<int64_t>();
    case T::number_unsigned:
      return j.get<uint64_t>();
    case T::number_float:
      return j.get<double>();
    default:
      return nullptr;
  }
}

}  // namespace paictl

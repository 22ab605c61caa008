#include "sim/sweep_store.h"

#include "util/fs.h"
#include "util/json.h"

namespace pai::sim {

using nlohmann::json;

util::Result<SweepStore> SweepStore::open(const SweepSpec& spec, std::vector<SweepPoint> points,
                                          std::string out_dir) {
  SweepStore s;
  s.spec_ = &spec;
  s.points_ = std::move(points);
  s.out_ = std::move(out_dir);
  s.dir_ = s.out_ + "/points";
  if (auto made = util::make_directories(s.dir_); !made.ok())
    return util::Error{"cannot create " + s.dir_ + ": " + made.error().message, "",
                       util::Error::Kind::Input};
  const size_t n = s.points_.size();
  s.results_.assign(n, json());
  s.status_.assign(n, "pending");
  s.errors_.assign(n, "");
  for (const auto& p : s.points_) {
    auto text = util::read_file(s.dir_ + "/" + p.key + ".json");
    if (text.ok()) {
      json j = util::parse_json_or_discarded(*text);
      if (!j.is_discarded() && j.contains("result") && j["key"] == p.key) {
        s.results_[p.index] = j["result"];
        s.status_[p.index] = "stored";
        continue;
      }
    }
    s.pending_.push_back(p.index);
  }
  s.stored_ = n - s.pending_.size();
  return s;
}

SweepStore::Accepted SweepStore::accept(size_t index, const json& r, double seconds) {
  const SweepPoint& p = points_[index];
  Accepted a;
  a.axes = point_axes(*spec_, p);
  if (r.contains("error")) {
    status_[index] = "failed";
    errors_[index] = r["error"].get<std::string>();
    a.error = errors_[index];
    return a;
  }
  json rec{{"key", p.key}, {"point", a.axes}, {"result", r}, {"seconds", seconds}};
  auto written = util::write_file_atomic(dir_ + "/" + p.key + ".json", rec.dump(1) + "\n");
  if (!written.ok()) {
    status_[index] = "failed";
    errors_[index] = "cannot store the result: " + written.error().message;
    a.error = errors_[index];
    return a;
  }
  results_[index] = r;
  status_[index] = "ran";
  a.ok = true;
  return a;
}

void SweepStore::fail_pending(const std::string& why) {
  for (size_t i : pending_)
    if (status_[i] == "pending") {
      status_[i] = "failed";
      if (errors_[i].empty()) errors_[i] = why;
    }
}

size_t SweepStore::ran() const {
  size_t n = 0;
  for (const auto& s : status_) n += s == "ran";
  return n;
}

size_t SweepStore::failed() const {
  size_t n = 0;
  for (const auto& s : status_) n += s == "failed";
  return n;
}

json SweepStore::document(const std::string& version, const std::string& spec_name) const {
  json items = json::array();
  for (const auto& p : points_) {
    json it = point_axes(*spec_, p);
    it["key"] = p.key;
    it["status"] = status_[p.index];
    if (status_[p.index] == "failed")
      it["error"] = errors_[p.index];
    else if (!results_[p.index].is_null())
      it["result"] = results_[p.index];
    items.push_back(it);
  }
  return json{{"paictl", version},        {"spec", spec_name}, {"out", out_},
              {"points", points_.size()}, {"ran", ran()},      {"stored", stored_},
              {"failed", failed()},       {"items", items}};
}

}  // namespace pai::sim

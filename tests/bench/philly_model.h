#pragma once
// The Philly-shaped cluster (`paictl simulate generate --scale N`, 15 VCs) as a
// checked HiveD model, built once per scale and shared by the scheduler and
// simulator benchmarks.

#include <map>
#include <memory>
#include <string>

#include "config/context.h"
#include "config/hived.h"
#include "config/hived_model.h"
#include "sim/generate.h"
#include "yaml/yaml.h"

inline std::shared_ptr<pai::config::HivedModel> philly_model(int scale) {
  static std::map<int, std::shared_ptr<pai::config::HivedModel>> cache;
  auto& m = cache[scale];
  if (m) return m;
  std::string text = pai::sim::philly_cluster_config(scale, 15);
  pai::yaml::Stream s = pai::yaml::load(text);
  pai::diag::List dl;
  pai::config::Context ctx("philly.yaml", dl);
  const pai::yaml::Node* root = pai::config::single_document(s, ctx, "hivedscheduler.yaml");
  m = std::make_shared<pai::config::HivedModel>(
      pai::config::build_hived_model(pai::config::load_hived_config(root, ctx), ctx));
  return m;
}

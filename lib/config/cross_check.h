#pragma once
// Checks across layout.yaml, config.yaml and the HiveD config.

#include "config/cluster_config.h"
#include "config/hived_model.h"
#include "config/layout.h"

namespace pai::config {

// `hived_ctx` reports into the HiveD config's file, `layout_ctx` into layout.yaml.
void cross_check_hived(const Layout& layout, const HivedConfig& hived, const HivedModel& model,
                       Context& hived_ctx, Context& layout_ctx);

void cross_check_devices(const Layout& layout, const ClusterConfig& config, Context& config_ctx);

}  // namespace pai::config

#pragma once
// The document of `paictl hived diff -o json` (paictl.hivedDiff/v1), without
// its apiVersion; `hived apply -o json` starts from it.

#include "hived/diff.h"
#include "hived/inspect.h"

namespace pai::hived {

// {"old","new","groupSource","groupSourceDetail","badNodes","changes","summary",
//  "virtualClusters","pinnedCells","nodesRemoved","nodesAdded","groups"}
Json diff_json(const DiffInput& in, const ConfigDiff& d);

}  // namespace pai::hived

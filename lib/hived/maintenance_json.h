#pragma once
// The document of a maintenance plan (paictl.maintenancePlan/v1), without its
// apiVersion: `upgrade -o json` and `node maintain -o json` embed it.

#include "hived/inspect.h"
#include "hived/maintenance.h"

namespace pai::hived {

// {"order": "hived"|"plain", "fallbackReason"?, "maxUnavailable": "1"|"10%",
//  "nodesPerBatch", "clusterNodes", "waitForGroupsSeconds", "evict", "now",
//  "end", "replayedBatches", "batches": [{"index", "nodes", "start", "reason",
//    "groups": [{"name","vc","priority","action","until"?,"expectedEnd"?,
//                "nodes","leafCells","reason","lazilyPreempted"?,"lazyReason"?}],
//    "doomed": [{"vc","chain","cellType","cells","leafCells","addedLeafCells",
//                "guaranteedLeafCells","allowedLeafCells"?}]}],
//  "blocking": [group...], "blocked": [{"node","groups","reason"}], "evicted": [...],
//  "unknownNodes": [...], "warnings": [...]}
// Times are epoch seconds (integers when whole).
Json maintenance_json(const MaintenancePlan& plan);

}  // namespace pai::hived

# hived why's reason codes (docs/hived.md#reason-codes), each in a hand-worked
# state of the HiveD test server where it is the answer:
#  * the lab (scenarios/lab.json, v7 bad and doomed to research): research's
#    three V100 node cells are v7's (doomed), res-1's and a free one, so two
#    pods of 8 wait for BadCellsDoomed first, VCQuotaExhausted second; a leaf
#    type the cluster lacks, a VC without K80 cells, more than research's 24
#    V100 GPUs never fit; opportunistic work finds two free V100 nodes;
#  * the reasons lab (scenarios/reasons.json): a1..a4 (4 GPUs each) packed two
#    to a node cell of VC a, then a2 and a4 gone: 8 free GPUs of a, no free
#    node cell (ChainFragmented); a 1-GPU group of VC b inside its node cell
#    (CellSplitBySmallerGroup);
#  * a preemption in progress (scenarios/preempting.json): WaitingForPreemption.
# (VCQuotaExhausted alone: test_hived_commands.sh; the kube-scheduler's reason
# from pod events and wouldFit from expected ends: test_hived_auto.sh.)
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
start_server lab
CFG="$SCEN/lab-hived.yaml"
why() { run hived why "$@" --hived "$URL" -o json; }

why two --config "$CFG" --vc research --priority 50 --pods 2 --gpus 8 --leaf-type V100
expect_rc 0 "why of two pods of 8 in research"
schema_check hivedWhy "hived why -o json (doomed)"
json_check "[r['code'] for r in d['reasons']] == ['BadCellsDoomed', 'VCQuotaExhausted'] and d['reason']['tier'] == 3" "BadCellsDoomed ranks before VCQuotaExhausted"
json_check "'doomed on bad nodes: research/' in d['reason']['detail'] and ' on v7' in d['reason']['detail'] and 'repair v7' in d['reason']['hint']" "the doomed cell and its node are named"
json_check "d['wouldFit']['kind'] == 'unknown' and d['wouldFit']['event'] == 'v7 healthy again'" "wouldFit: no expected end known, it fits once v7 is healthy again"
run hived why two --config "$CFG" --vc research --priority 50 --pods 2 --gpus 8 --leaf-type V100 --hived "$URL"
expect_out "  reason: BadCellsDoomed (tier 3, the VC's cells are doomed on bad nodes): " "the text: the first code"
expect_out "  also:   VCQuotaExhausted (tier 5, " "and the second"

why x --config "$CFG" --vc research --priority 50 --gpus 1 --leaf-type A100
expect_rc 0 "why of a leaf type the cluster lacks"
json_check "d['verdict'] == 'rejected' and d['reason']['code'] == 'NoSuchLeafType' and d['wouldFit']['kind'] == 'never' and 'ask for one of' in d['wouldFit']['change']" "NoSuchLeafType: never under this config, with what to change"
why x --config "$CFG" --vc prod --priority 50 --gpus 4 --leaf-type K80
json_check "d['reason']['code'] == 'NoChainForVC' and d['reason']['tier'] == 1 and d['wouldFit']['kind'] == 'never'" "NoChainForVC: prod has no K80 cells"
why x --config "$CFG" --vc research --priority 50 --pods 4 --gpus 8 --leaf-type V100
json_check "d['reason']['code'] == 'RequestExceedsVC' and 'ask for at most 24 GPUs' in d['wouldFit']['text']" "RequestExceedsVC: 32 GPUs in a VC of 24"
why x --config "$CFG" --vc research --priority -1 --pods 4 --gpus 8 --leaf-type V100
json_check "d['reason']['code'] == 'OpportunisticNoCapacity' and [r['code'] for r in d['reasons']] == ['OpportunisticNoCapacity']" "OpportunisticNoCapacity: four opportunistic pods of 8"

start_server reasons
CFG="$SCEN/reasons-hived.yaml"
why whole --config "$CFG" --vc a --priority 100 --gpus 8 --leaf-type V100
expect_rc 0 "why of 8 GPUs in a"
json_check "d['verdict'] == 'waits' and [r['code'] for r in d['reasons']] == ['ChainFragmented']" "ChainFragmented: 8 free GPUs of a, in two half-used node cells"
json_check "'VC a has 8 free leaf cells in chain V100-RACK but 0 free V100-NODE cell(s) of the 1 it needs' in d['reason']['detail'] and 'pods of at most 4 GPUs would fit now' in d['reason']['hint']" "it says how many and where"
why big --config "$CFG" --vc b --priority 100 --gpus 8 --leaf-type V100
expect_rc 0 "why of 8 GPUs in b"
json_check "[r['code'] for r in d['reasons']] == ['CellSplitBySmallerGroup', 'ChainFragmented'] and 'small sit(s) in V100-NODE cell b/' in d['reason']['detail']" "CellSplitBySmallerGroup: small sits in b's node cell, b's single cells free"

start_server preempting
run hived why urgent --hived "$URL" -o json
expect_rc 0 "why of a preempting group"
schema_check hivedWhy "hived why -o json (preempting, v2)"
json_check "d['reason']['code'] == 'WaitingForPreemption' and 'opp-' in d['reason']['detail'] and d['wouldFit']['kind'] == 'now'" "WaitingForPreemption names its victim"
finish

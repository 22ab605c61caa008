# paictl hived status, groups and why against the HiveD test server's lab
# scenario: v7 is bad and doomed to research, infer-c was lazily preempted by
# urgent, big-wait waits, opp-1 runs opportunistically on infer-c's node.
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
start_server lab

run hived status --hived "$URL" -o json
expect_rc 0 "status -o json"
schema_check hivedStatus "hived status -o json"
json_check "d['apiVersion'] == 'paictl.hivedStatus/v1' and d['groups'] == 8 and d['lazilyPreempted'] == 1" "status counts the groups"
json_check "[ (c['total'], c['bad'], c['doomed']) for c in d['cells'] if c['cellType'] == 'V100-NODE'] == [(8, 1, 1)]" "v7 is a bad and doomed V100-NODE"
json_check "[n['healthy'] for n in d['nodes'] if n['name'] == 'v7'] == [False]" "node v7 is bad"
json_check "{(v['vc'], v['sku']): (v['guaranteed'], v['used'], v['opportunistic']) for v in d['virtualClusters']}[('prod', 'V100')] == (40, 34, 4)" "prod: 5 node cells with the pinned one, 34 GPUs used, 4 opportunistic"
json_check "{(v['vc'], v['sku']): v['bad'] for v in d['virtualClusters']}[('research', 'V100')] == 8" "research sees the doomed node's 8 GPUs as bad"
json_check "sorted([n['name'] for n in d['nodes'] if 'opp-1' in n['groups']]) == ['v4']" "opp-1 runs on v4"
json_check "[n['usedBy'] for n in d['nodes'] if n['name'] == 'v4'] == [[{'group': 'infer-c', 'vc': 'prod', 'priority': -1, 'leafCells': [0, 1, 2, 3]}, {'group': 'opp-1', 'vc': 'research', 'priority': -1, 'leafCells': [4, 5, 6, 7]}]]" "v4's leaf cells: 0-3 lazily preempted infer-c's (prod), 4-7 opp-1's (research), both opportunistic"
json_check "[n['usedBy'] for n in d['nodes'] if n['name'] in ('v7', 'k2')] == [[], []]" "nobody uses the bad v7 or the free k2"

run hived status --hived "$URL"
expect_rc 0 "status table"
expect_out "V100-RACK      2  V100-NODE      8" "the table lists V100-NODE cells"
expect_out "1 lazily preempted" "the table says one group is lazily preempted"
expect_out "v4    V100  Healthy     8     8    8  infer-c[0-3] opp-1[4-7]" "the node table says who uses which leaf cells"
expect_no_out "k2  " "an idle healthy node is left out of the table"

run hived groups --hived "$URL" --vc prod -o json
expect_rc 0 "groups --vc prod"
schema_check hivedGroup "hived groups -o json"
json_check "[g['name'] for g in d['items']] == ['train-a', 'train-b', 'urgent', 'pin-1', 'infer-c']" "prod's groups by priority"
json_check "[g['lazyPreemption']['preemptor'] for g in d['items'] if g['name'] == 'infer-c'] == ['urgent']" "infer-c was lazily preempted by urgent"
json_check "[g['physicalPlacement'] for g in d['items'] if g['name'] == 'train-a'][0] == {'v5': list(range(8)), 'v6': list(range(8))}" "train-a's placement"

run hived groups --hived "$URL" --vc nope
expect_rc 2 "groups --vc of a VC HiveD does not have"
expect_err "400 Bad Request: VC nope not found" "HiveD's own answer for the VC is shown"
run hived status --hived "$URL" --vc nope
expect_rc 2 "status --vc of a VC HiveD does not have"
run hived groups --hived "$URL" --vc research
expect_rc 0 "groups --vc research"
if requests_seen | grep -qx "GET /v1/inspect/clusterstatus/virtualclusters/research"; then pass "groups --vc looks the VC up (GET .../virtualclusters/research)"; else fail "groups --vc did not ask HiveD for the VC"; fi

# A VC shrunk on the lab: prod's four node cells become three; train-a (two cells)
# and train-b (one) run at 300, urgent at 200: at the restart urgent finds no
# free cell of prod at its level and is lazily preempted, whatever the order
# (a higher priority takes a cell back from a lower one); pin-1 keeps prod's
# pinned cell, infer-c is already opportunistic.
run hived diff "$SCEN/lab-hived.yaml" "$SCEN/lab-moved.yaml" --live --hived "$URL" -o json
expect_rc 0 "diff of prod shrunk on the lab"
json_check "[(g['name'], g['effect']) for g in d['groups'] if g['effect'] != 'keeps'] == [('urgent', 'lazilyPreempted')]" "only urgent (200) loses a cell; train-a and train-b (300) keep theirs"
json_check "d['summary']['guaranteedPreempted'] == 1 and [g['guaranteed'] for g in d['groups'] if g['name'] == 'infer-c'] == [False]" "infer-c is not counted: it runs opportunistically already"

run hived why infer-c --hived "$URL"
expect_rc 0 "why of a lazily preempted group"
expect_out "lazily preempted by urgent" "why names the preemptor"
expect_out "on 4 GPUs: v4[0-3]" "why says where it runs"
run hived why infer-c --hived "$URL" -o json
expect_rc 0 "why -o json of a running group"
schema_check hivedWhy "hived why -o json (running)"
json_check "d['running'] is True and d['lazyPreemption']['preemptor'] == 'urgent'" "why -o json of a running group says who preempted it"

run hived why train-a --hived "$URL" -o wide
expect_rc 0 "why -o wide of a running group"
expect_out "virtual cell prod/0: prod/0/0 prod/0/1" "-o wide: the leaf cells of each virtual cell"
expect_out "allocated pods (2): train-a-pod-0, train-a-pod-1" "-o wide: the pods HiveD bound"
run hived why big-wait --hived "$URL" --config "$SCEN/lab-hived.yaml" --vc prod --priority 100 --gpus 8 --leaf-type V100 -o wide
expect_rc 0 "why -o wide of a waiting group"
expect_out "of its 4 guaranteed V100-NODE cells, 4 are bound to running groups: train-a (300), train-b (300), urgent (200)" "the reason in cells, naming the running groups"
expect_out "request: 1 pod(s) of 8 GPUs in VC prod at priority 100, leaf type V100, from the command line" "-o wide: the request judged"
expect_out "judged on 8 running groups rebuilt from their placements and 1 bad node(s)" "-o wide: what it was judged on"

run hived why big-wait --hived "$URL"
expect_rc 2 "why of a waiting group without its request"
expect_err "--vc VC --priority P" "the hint asks for the request"

run hived why big-wait --hived "$URL" --config "$SCEN/lab-hived.yaml" --vc prod --priority 100 --gpus 8 --leaf-type V100 -o json
expect_rc 0 "why of a waiting group"
schema_check hivedWhy "hived why -o json (waiting)"
# hivedWhy/v2: the algorithm's words are schedulerReason (v1's reason); reason is the code.
json_check "d['verdict'] == 'waits' and 'insufficient capacity' in d['schedulerReason']" "it waits for capacity in prod"
json_check "d['apiVersion'] == 'paictl.hivedWhy/v2' and d['reason']['code'] == 'VCQuotaExhausted' and d['reason']['tier'] == 5 and [r['code'] for r in d['reasons']] == ['VCQuotaExhausted']" "prod's cells are all bound: VCQuotaExhausted"
json_check "d['wouldFit']['kind'] == 'unknown' and d['wouldFit']['needs'] == '1 more V100-NODE cell(s) in chain V100-RACK'" "wouldFit: no expected ends without a cluster, and the cell it lacks"
json_check "d['vcGuaranteedCells'] == 4 and d['vcBoundCells'] == 4" "all 4 of prod's node cells are bound"
# The server's replay left big-wait waiting with the scheduler's own reason; why,
# which rebuilds the state from HiveD's answers alone, finds the same one.
WAITING=$("$PY" -c "import json, sys, urllib.request; print([w['reason'] for w in json.load(urllib.request.urlopen(sys.argv[1])) if w['group'] == 'big-wait'][0])" "$URL/__control/waiting")
json_check "d['schedulerReason'] == '$WAITING' and d['schedulerReason'].startswith('insufficient capacity')" "why's reason is the one the scheduler gave when the stream was replayed"
json_check "d['cellsPerPod'] == [{'leafCellNumber': 8, 'chain': 'V100-RACK', 'cellType': 'V100-NODE', 'cellLeafCells': 8}]" "the pod of 8 GPUs needs a whole V100-NODE cell"
json_check "'needs 1 pod(s) of 8 GPUs at priority 100 (a pod of 8 GPUs takes a whole V100-NODE cell of chain V100-RACK); of its 4 guaranteed V100-NODE cells, 4 are bound to running groups: train-a (300), train-b (300), urgent (200)' in d['explanation']" "the reason in cells"
json_check "[h['group'] for h in d['heldBy']] == ['train-a', 'train-b', 'urgent']" "held by train-a, train-b and urgent"
json_check "d['badNodes'] == ['v7']" "v7 is the bad candidate"

# research's only K80 node cell is k-1's (priority 20): a priority-50 group preempts it.
run hived why new-4 --hived "$URL" --config "$SCEN/lab-hived.yaml" --vc research --priority 50 --gpus 4 --leaf-type K80 -o json
expect_rc 0 "why of a group that preempts"
schema_check hivedWhy "hived why -o json (preempts)"
json_check "d['verdict'] == 'preempts' and d['victims'] == ['k-1']" "a 4-GPU K80 group of research at 50 preempts k-1"
json_check "d['reason']['code'] == 'WaitingForPreemption' and d['wouldFit']['kind'] == 'now'" "a preempting placement: WaitingForPreemption, it runs once k-1 is gone"
# An opportunistic one fits on the free k2.
run hived why opp-4 --hived "$URL" --config "$SCEN/lab-hived.yaml" --vc research --priority -1 --gpus 4 --leaf-type K80 -o json
expect_rc 0 "why of a group that fits"
schema_check hivedWhy "hived why -o json (fits)"
json_check "d['verdict'] == 'fits' and 'k2[0-3]' in d['explanation']" "an opportunistic K80 group fits on k2"

run hived why nope --hived "$URL" --vc nope
expect_rc 2 "why of an unknown group with a partial request"

run hived status --hived "$URL/nowhere"
expect_rc 3 "a wrong path is a remote failure"
expect_err "404 Not Found: Path not found" "HiveD's bare-string error is shown"

run hived status --hived "http://127.0.0.1:1"
expect_rc 3 "nothing listening is a remote failure"

# -o name: the group names, one a line; refused by a command that lists no names.
run hived groups --hived "$URL" --vc prod -o name
expect_rc 0 "groups -o name"
if [ "$(tr '\n' ' ' <"$OUT")" = "train-a train-b urgent pin-1 infer-c " ]; then pass "groups -o name: one group name a line"; else fail "groups -o name printed: $(cat "$OUT")"; fi
run hived status --hived "$URL" -o name
expect_rc 2 "status refuses -o name"
expect_err "-o name: paictl hived status lists no names" "the refusal names the command"

# A preemption in progress (scenarios/preempting.json): urgent (prod, 4 GPUs) has
# reserved half of an opportunistic group's 8 GPUs; the victim is not deleted yet.
start_server preempting
run hived status --hived "$URL" -o json
expect_rc 0 "status during a preemption"
json_check "d['preempting'] == 1" "one group is preempting"
json_check "sum(v['opportunistic'] for v in d['virtualClusters'] if v['vc'] == 'research') == 8 * (d['groups'] - 1)" "research's opportunistic GPUs: every GPU its groups hold, the reserved ones too"
json_check "sorted(n['opportunistic'] for n in d['nodes'] if n['used']) == [8] * len([n for n in d['nodes'] if n['used']])" "each node of an opportunistic group counts its 8 GPUs, the victim's too"
schema_check hivedStatus "hived status -o json (preempting)"
json_check "[r['group'] for n in d['nodes'] for r in n['reservedBy']] == ['urgent'] and [len(r['leafCells']) for n in d['nodes'] for r in n['reservedBy']] == [4]" "the node says urgent reserved 4 of its leaf cells"
run hived status --hived "$URL"
expect_out "(urgent reserves 0-3)" "the node table says who reserved which leaf cells"
run hived why urgent --hived "$URL"
expect_rc 0 "why of a preempting group"
expect_out "it waits for the groups on its cells to be deleted (preemption in progress): opp-" "why names the victim it waits for"
expect_out "(VC research, priority -1, BeingPreempted) on v" "with its VC, priority, state and where"
run hived why urgent --hived "$URL" -o json
schema_check hivedWhy "hived why -o json (preempting)"
json_check "len(d['waitsFor']) == 1 and d['waitsFor'][0]['priority'] == -1 and sum(len(v) for v in d['waitsFor'][0]['leafCells'].values()) == 4" "waitsFor: the victim and the 4 leaf cells it still holds"
finish

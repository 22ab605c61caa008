# paictl node remove --hived URL against the reconf scenario (five V100 nodes,
# n4 pinned to VC b, two K80 nodes; a-train, a-big and b-1 each on a V100
# node): removing the node b-1 runs on is refused and names b-1, before
# anything changes and also in a dry run; --force goes on; a node no group uses
# is not refused; a node holding a pinned cell is refused; the HiveD config's
# change is shown in the dry run. The hosts are not reachable (127.0.0.1:9):
# what comes after the HiveD checks fails, which these checks do not need.
. "$PAI_SOURCE_DIR/tests/integration/hived/lib.sh"
start_server reconf
C="$TMP/cluster"
mkdir -p "$C"
{
  cat <<'YAML'
machine-sku:
  master-machine:
    mem: 32Gi
    cpu:
      vcore: 4
  v100-machine:
    mem: 512Gi
    cpu:
      vcore: 64
    computing-device:
      type: nvidia.com/gpu
      model: V100
      count: 8
  k80-machine:
    mem: 200Gi
    cpu:
      vcore: 32
    computing-device:
      type: nvidia.com/gpu
      model: K80
      count: 4
machine-list:
  - hostname: m
    hostip: 127.0.0.1
    machine-type: master-machine
    pai-master: "true"
YAML
  i=10
  for n in n1 n2 n3 n4 n5 k1 k2; do
    i=$((i + 1))
    case $n in n*) t=v100-machine ;; *) t=k80-machine ;; esac
    printf '  - hostname: %s\n    hostip: 127.0.0.%s\n    machine-type: %s\n    pai-worker: "true"\n' $n $i $t
  done
} >"$C/layout.yaml"
printf 'user: root\npassword: pw\ndocker_image_tag: v1.8.0\n' >"$C/config.yaml"
{
  printf 'cluster:\n  common:\n    cluster-id: reconf\nhivedscheduler:\n  config: |\n'
  grep -v '^#' "$SCEN/reconf-hived.yaml" | sed 's/^/    /'
} >"$C/services-configuration.yaml"
printf 'Host *\n  HostName 127.0.0.1\n  Port 9\n  ConnectTimeout 2\n  BatchMode yes\n' >"$TMP/ssh_config"
run check config "$C"
expect_rc 0 "the cluster files check"
cp "$C/services-configuration.yaml" "$TMP/services.orig"
cp "$C/layout.yaml" "$TMP/layout.orig"

run hived groups --hived "$URL" -o json
node_of() { "$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
print([list(g['physicalPlacement'])[0] for g in d['items'] if g['name'] == sys.argv[2]][0])
" "$OUT" "$1"; }
B1=$(node_of b-1)
USED=$(for g in a-train a-big b-1; do node_of "$g"; done | tr '\n' ' ')
FREE=$(for n in n1 n2 n3 n5; do case " $USED " in *" $n "*) ;; *) echo $n ;; esac; done | head -1)
[ -n "$B1" ] && [ -n "$FREE" ] || { fail "the scenario's placements: b-1 on '$B1', free '$FREE'"; finish; }

S="--ssh-config $TMP/ssh_config --connect-timeout 2"
run node remove "$C" "$B1" --hived "$URL" --dry-run $S
expect_rc 1 "a dry run of removing b-1's node is refused"
expect_err "running groups use the cells of $B1: b-1 (VC b, onRemovedCells)" "the refusal names b-1"
run node remove "$C" "$B1" --hived "$URL" --yes $S
expect_rc 1 "removing b-1's node is refused"
cmp -s "$C/services-configuration.yaml" "$TMP/services.orig" && cmp -s "$C/layout.yaml" "$TMP/layout.orig" &&
  pass "the refusal changes no file" || fail "a refused removal changed the cluster files"

run node remove "$C" "$B1" --hived "$URL" --force --dry-run $S
expect_err "removing anyway (--force)" "--force goes on, with a warning"
expect_out "physicalCells: $B1's V100-NODE cell (8 leaf cells) of chain V100-NODE goes" "the dry run shows the HiveD change"
expect_out "-      - {cellType: V100-NODE, cellAddress: $B1}" "the dry run shows the HiveD config diff"
expect_out "virtualClusters: unchanged for V100-NODE (0 left in no VC)" "the VCs' V100 cells still fit"

run node remove "$C" "$FREE" --hived "$URL" --dry-run -o json $S
cp "$OUT" "$TMP/remove.json"
expect_err "no running group uses $FREE" "a node no group uses is not refused"
schema_check nodeRemove "node remove --dry-run -o json"
json_check "d['apiVersion'] == 'paictl.nodeRemove/v1' and d['nodes'] == ['$FREE'] and d['dryRun'] and d['hived']['restartsHived']" \
  "one paictl.nodeRemove/v1 document: the node and the HiveD config's change"
run node remove "$C" "$FREE" --hived "$URL" --dry-run -o yaml $S
if "$PY" -c "
import json, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
j = json.load(open(sys.argv[2]))
sys.exit(0 if d['apiVersion'] == 'paictl.nodeRemove/v1' and d['nodes'] == ['$FREE'] and d == j else 1)
" "$OUT" "$TMP/remove.json"; then pass "node remove -o yaml: the same document as -o json"; else fail "node remove -o yaml"; sed 's/^/  | /' "$OUT" >&2; fi
run node remove "$C" n4 --hived "$URL" --dry-run $S
expect_rc 2 "the pinned cell's node is refused"
expect_err "n4 holds the pinned cell b-pin" "the refusal names the pinned cell"
run node remove "$C" k1 --dry-run $S
expect_rc 2 "a K80 node: both VCs hold K80 cells, none is left over"
expect_err "the VCs a, b hold 2 K80-NODE cells; 1 are left" "the VCs are named"
expect_err "--vc VC names the VC that gives up 1" "the hint names --vc"
run node remove "$C" k1 --vc b --dry-run $S
expect_out "virtualClusters: b K80-NODE cellNumber 1 -> 0" "--vc b gives up its K80 cell"
cmp -s "$C/services-configuration.yaml" "$TMP/services.orig" && pass "dry runs change no file" || fail "a dry run changed the HiveD config"
finish

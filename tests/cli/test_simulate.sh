#!/bin/sh
# End to end: `paictl simulate` and `paictl simulate generate` through the real binary.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
HET=examples/clusters/heterogeneous
ANOMALY=examples/traces/sharing-anomaly.csv

expect_out_re() { if grep -qE -- "$1" "$OUT"; then pass "$2"; else fail "$2: stdout lacks /$1/"; sed 's/^/  | /' "$OUT" >&2; fi; }

# --- help -------------------------------------------------------------------------
run --help
expect_rc 0 "--help"
expect_out "simulate run" "--help lists simulate run"
expect_out "simulate generate" "--help lists simulate generate"

run simulate --help
expect_rc 0 "simulate --help"
expect_out "--policy" "simulate --help lists --policy"
expect_out "EXAMPLES:" "simulate --help has examples"

run simulate generate --help
expect_rc 0 "simulate generate --help"
expect_out "EXAMPLES:" "simulate generate --help has examples"

# --- the sharing anomaly ------------------------------------------------------------
run simulate --config "$HET" --trace "$ANOMALY" --policy hived,quota
expect_rc 0 "sharing-anomaly example"
expect_out_re "^sharing-anomaly jobs +0 +1$" "quota has the anomaly, hived does not"
expect_out_re "^queue delay max +0s +9\.8h$" "production waits ~10h under quota only"
expect_out "(csv)" "native CSV detected"

run simulate run --config "$HET" --trace "$ANOMALY" --policy quota -o json
expect_rc 0 "simulate run is simulate"
expect_out '"policy": "quota"' "JSON names the policy"
expect_out '"queue_delay_s"' "JSON has queue delays"
expect_out '"sharing_anomaly"' "JSON has sharing anomalies"

run simulate --config "$HET" --trace "$ANOMALY" --policy hived,quota -o yaml
expect_rc 0 "-o yaml"
expect_out_re "^  policy: quota$" "YAML lists the policies"
expect_out_re "^ +p99: 35400(\.0)?$" "YAML has quota's 9.8h p99 queue delay"

# --- a report with all four policies on the Philly-format example ---------------------
run simulate --config "$HET" --trace examples/traces/philly-small.json --policy hived,quota,k8s-default,private \
  --overflow --report "$TMP/report"
expect_rc 0 "philly-small with every policy and a report"
expect_out "(philly)" "Philly format detected"
expect_out "1500 jobs" "all jobs simulated"
for f in metrics.json jobs.csv report.html; do
  if [ -s "$TMP/report/$f" ]; then pass "report has $f"; else fail "report lacks $f"; fi
done
if grep -q "<svg" "$TMP/report/report.html" && ! grep -q "<script" "$TMP/report/report.html"; then
  pass "report.html has SVG charts and no scripts"
else
  fail "report.html should have <svg> and no <script>"
fi
if [ "$(wc -l <"$TMP/report/jobs.csv")" -eq 6001 ]; then pass "jobs.csv: one row per job and policy"; else fail "jobs.csv rows"; fi
expect_err "report: $TMP/report/report.html (report.html " "the report's files are named"
if grep -qE "jobs\.csv [0-9.]+(Ki|Mi)B" "$ERR"; then pass "jobs.csv's size is said"; else fail "jobs.csv's size is not said"; sed 's/^/  | /' "$ERR" >&2; fi

# --report-jobs none: no per-job table; -v off a terminal: progress lines on stderr.
run -v simulate --config "$HET" --trace examples/traces/philly-small.json --policy hived,quota \
  --report "$TMP/report-nojobs/" --report-jobs none
expect_rc 0 "--report-jobs none"
if [ -e "$TMP/report-nojobs/jobs.csv" ]; then fail "--report-jobs none wrote jobs.csv"; else pass "--report-jobs none skips jobs.csv"; fi
if [ -s "$TMP/report-nojobs/report.html" ] && [ -s "$TMP/report-nojobs/metrics.json" ]; then pass "the rest of the report is written"; else fail "report.html or metrics.json missing"; fi
expect_err "report: $TMP/report-nojobs/report.html" "a trailing slash is not doubled"
expect_err "jobs.csv not written (--report-jobs none)" "the skipped table is said"
expect_err "simulating hived (1/2): 1500 jobs" "-v: a line when a policy starts"
expect_err "simulated quota in " "-v: a line when a policy ends"
run simulate --config "$HET" --trace "$ANOMALY" --policy hived,quota
if grep -q "simulat" "$ERR"; then fail "progress without -v off a terminal"; else pass "no progress lines without -v off a terminal"; fi
run simulate --config "$HET" --trace "$ANOMALY" --report "$TMP/r3" --report-jobs json
expect_rc 2 "--report-jobs takes csv or none"
# A forecast's report to a file: refused before HiveD is asked (nothing listens on port 9).
echo keep >"$TMP/not-a-dir"
run simulate --from-live http://127.0.0.1:9 --report "$TMP/not-a-dir"
expect_rc 2 "simulate --from-live --report to a file"
expect_err "--report: cannot write the report to $TMP/not-a-dir: $TMP/not-a-dir is not a directory" "the file is named"
if [ "$(cat "$TMP/not-a-dir")" = keep ]; then pass "the file is left alone"; else fail "the file was written over"; fi

# --- bad input ------------------------------------------------------------------------
run simulate --config examples/clusters/broken --trace "$ANOMALY"
expect_rc 2 "a cluster with config errors is refused"
expect_err "has errors" "config errors are named"
expect_err "error[" "the config findings are printed"

mkdir -p "$TMP/empty"
run simulate --config "$TMP/empty" --trace "$ANOMALY"
expect_rc 2 "a directory without cluster files"

printf 'job_id,submit_time,duration,vc,members\nj1,0,1h,research,8\n' >"$TMP/bad.csv"
run simulate --config "$HET" --trace "$TMP/bad.csv"
expect_rc 2 "malformed trace"
expect_err "bad.csv:2:18: members \"8\" is malformed" "trace error has file:line:col"
expect_err "hint: PODSxGPUS" "trace error has a hint"

printf '[{"jobid": "a", "vc": "research", "submitted_time": "2017-10-03 06:47:47",\n  "attempts": [}]\n' >"$TMP/bad.json"
run simulate --config "$HET" --trace "$TMP/bad.json"
expect_rc 2 "malformed Philly JSON"
expect_err "bad.json:2:16:" "JSON error position"

run simulate --config "$HET" --trace "$ANOMALY" --policy hive
expect_rc 2 "unknown policy"
expect_err "did you mean \"hived\"?" "policy did-you-mean"

run simulate --config "$HET"
expect_rc 2 "--trace is required"

run simulate --config "$HET" --trace "$TMP/no-such-file.json" --trace-format philly
expect_rc 2 "missing trace file"
expect_err "cannot read" "missing trace file message"

# --- other formats -----------------------------------------------------------------------
cat >"$TMP/cluster_log.csv" <<'EOF'
job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
1,u1,research,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 19:41:01,3600,0
2,u2,production,8,8,1,COMPLETED,2020-06-09 18:42:01,2020-06-09 18:42:01,2020-06-09 20:42:01,7200,0
3,u3,interns,0,4,1,COMPLETED,2020-06-09 18:43:01,2020-06-09 18:43:01,2020-06-09 18:44:01,60,0
EOF
run simulate --config "$HET" --trace "$TMP/cluster_log.csv" --policy hived,k8s-default
expect_rc 0 "Helios cluster_log.csv"
expect_out "(helios)" "Helios format detected"
expect_out "1 x CPU-only job (gpu_num 0)" "CPU-only Helios job counted, not dropped silently"

printf 'j1,i1,alice,Terminated,100.0,900.0\nj2,i2,bob,Terminated,50.0,300.0\n' >"$TMP/pai_job_table.csv"
printf 'j1,worker,2.0,Terminated,120.0,800.0,600.0,29.3,100.0,V100\nj2,tf,1.0,Terminated,60.0,260.0,600.0,29.3,50.0,MISC\n' \
  >"$TMP/pai_task_table.csv"
run simulate --config "$HET" --trace "$TMP/pai_job_table.csv" --trace "$TMP/pai_task_table.csv"
expect_rc 0 "Alibaba job and task tables"
expect_out "(alibaba)" "Alibaba format detected"
expect_out "2 jobs" "both Alibaba jobs simulated"
run simulate --config "$HET" --trace "$TMP"
expect_rc 0 "Alibaba tables found in a directory"

# --- faults -------------------------------------------------------------------------------
printf 'time,node,event\n600,v100-r1-n1,down\n7200,v100-r1-n1,up\n' >"$TMP/faults.csv"
run simulate --config "$HET" --trace "$ANOMALY" --policy hived --faults "$TMP/faults.csv"
expect_rc 0 "fault file"
expect_out_re "^node failures +1$" "the node failure is counted"
printf 'time,node,event\n600,v100-r1-n9,down\n' >"$TMP/badfaults.csv"
run simulate --config "$HET" --trace "$ANOMALY" --faults "$TMP/badfaults.csv"
expect_rc 2 "fault file naming an unknown node"
expect_err "badfaults.csv:2:5:" "fault error position"
expect_err "did you mean" "fault node did-you-mean"
run simulate --config "$HET" --trace examples/traces/philly-small.json --faults random:mtbf=3d,mttr=6h,seed=2
expect_rc 0 "random fault model"
expect_out_re "^node failures +[1-9][0-9]*$" "random faults happen"

# --- generate ---------------------------------------------------------------------------
run simulate generate --jobs 300 --seed 5 --out "$TMP/a.json"
expect_rc 0 "generate"
run simulate generate --jobs 300 --seed 5 --out "$TMP/b.json"
run simulate generate --jobs 300 --seed 6 --out "$TMP/c.json"
if cmp -s "$TMP/a.json" "$TMP/b.json"; then pass "same seed, same trace"; else fail "same seed gave different traces"; fi
if cmp -s "$TMP/a.json" "$TMP/c.json"; then fail "different seeds gave the same trace"; else pass "another seed, another trace"; fi

run simulate generate --jobs 500 --seed 1 --cluster-out "$TMP/philly" --out "$TMP/philly/trace.csv" --format csv --opportunistic 0.2
expect_rc 0 "generate a Philly-shaped cluster and a CSV trace"
run check config "$TMP/philly"
expect_rc 0 "the generated cluster passes check config"
run simulate --config "$TMP/philly" --trace "$TMP/philly/trace.csv" --policy hived,quota
expect_rc 0 "simulate the generated cluster and trace"
expect_out "552 nodes" "Philly-shaped cluster has 552 nodes"
expect_out "2490 GPUs" "Philly-shaped cluster has 2490 GPUs"

run simulate generate --jobs 0
expect_rc 2 "generate refuses --jobs 0"

run simulate generate --jobs 10 --cluster-out "$TMP/philly2/" --out "$TMP/philly2.json"
expect_rc 0 "generate --cluster-out DIR/"
expect_err "cluster: $TMP/philly2/hivedscheduler.yaml" "a trailing slash of --cluster-out is not doubled"

run simulate generate --jobs 10 --load 0.5 --days 3 --out "$TMP/both.json"
expect_rc 2 "generate refuses --load with --days"
expect_err "--load and --days both set the arrival span" "--load with --days is named"
run simulate generate --jobs 10 --days 3 --out "$TMP/days.json"
expect_rc 0 "--days alone"

# --vc-map naming a VC the cluster lacks lists the VCs there are.
run simulate --config "$HET" --trace "$ANOMALY" --vc-map research=prod
expect_rc 2 "--vc-map to an unknown VC"
expect_err "hint: the cluster's virtual clusters: " "the hint lists the cluster's VCs"

finish

#!/bin/sh
# paictl's REST and HiveD clients against servers that misbehave: every answer
# is a remote failure (exit 3) with a readable message, within bounded time and
# memory; never a crash, a hang, or one bad cluster spoiling the others.
set -eu
. "$(dirname "$0")/lib.sh"
cd "$PAI_SOURCE_DIR"
own_home
REGISTRY="$XDG_CONFIG_HOME/paictl/clusters.yaml"
JOB=examples/jobs/pytorch-mnist.yaml
INFO='^/api/v2/info=ok:{"launcherType":"k8s","authnMethod":"basic","version":"v1.8.0"}'

# register NAME URI...: a registry with these clusters (each NAME URI pair), the first current.
register() {
  mkdir -p "$(dirname "$REGISTRY")"
  {
    echo "apiVersion: paictl/v1"
    echo "kind: ClusterRegistry"
    echo "current: $1"
    echo "clusters:"
    while [ $# -ge 2 ]; do
      printf -- '- name: %s\n  uri: %s\n  user: alice\n  token: tok-%s\n' "$1" "$2" "$1"
      shift 2
    done
  } >"$REGISTRY"
  chmod 600 "$REGISTRY"
}

# --- JSON nested a million deep: a bounded parse, not a stack overflow ------------------------
hostile deep deep-array:1000000
hostile deepobj deep-object:200000
hostile deepinfo --route "$INFO" deep-array:1000000

echo tok >"$TMP/token"
bounded 60 cluster add lab --uri "$deep_URI" --token-file "$TMP/token" -q
expect_bounded 3 "cluster add: the info answer is a million arrays deep"
bounded 60 cluster add lab --uri "$deepobj_URI" --token-file "$TMP/token" -q
expect_bounded 3 "cluster add: the info answer is 200,000 objects deep"

register deep "$deepinfo_URI" deepobj "$deepobj_URI"
bounded 60 cluster status --cluster deep
expect_bounded 3 "cluster status: deep answers"
bounded 60 job list --cluster deep
expect_bounded 3 "job list: a deep answer"
bounded 60 job list --cluster deepobj
expect_bounded 3 "job list: a deep object"
bounded 60 job submit "$JOB" --cluster deep
expect_bounded 3 "job submit: deep answers"
bounded 60 hived status --hived "$deep_URI"
expect_bounded 3 "hived status: a deep answer"

# One such cluster in the registry: the listing shows it and the good one.
hostile good --route "$INFO" status:404
register deep "$deep_URI" good "$good_URI"
bounded 60 cluster list
expect_bounded 0 "cluster list with a cluster answering deep JSON"
expect_out "deep" "the listing names the deep cluster"
expect_out "good" "the listing goes on to the next cluster"

# --- endless and huge bodies: the 64 MiB cap, memory bounded ---------------------------------
# The bound: uncapped, these answers took 4-6 GB. Reading up to the 64 MiB cap costs a few
# hundred MiB under the sanitizers (ASan keeps up to 256 MiB of freed buffers in quarantine,
# and a growing body is copied as it doubles), so 1500 MiB leaves room without hiding that.
MAXRSS_BOUND=1500
hostile endless endless
hostile chunked endless-chunked
hostile big big:200000000
register endless "$endless_URI" chunked "$chunked_URI" big "$big_URI"
for c in endless chunked big; do
  bounded 120 job list --cluster $c
  expect_bounded 3 "job list: $c body"
  expect_err "larger than 64 MiB" "job list: $c body stops at the cap"
  if [ "$MAXRSS" -lt "$MAXRSS_BOUND" ]; then pass "job list: $c body in $MAXRSS MiB"; else fail "job list: $c body took $MAXRSS MiB"; fi
done
for c in endless big; do
  eval "uri=\$${c}_URI"
  bounded 120 hived status --hived "$uri"
  expect_bounded 3 "hived status: $c body"
  expect_err "larger than 64 MiB" "hived status: $c body stops at the cap like the REST client"
  if [ "$MAXRSS" -lt "$MAXRSS_BOUND" ]; then pass "hived status: $c body in $MAXRSS MiB"; else fail "hived status: $c body took $MAXRSS MiB"; fi
done

# --- answers that are not JSON, silence, endless headers -------------------------------------
hostile html not-json
hostile silent silent
hostile mute silent-accept
hostile headers headers-only
register html "$html_URI" silent "$silent_URI" mute "$mute_URI" headers "$headers_URI"
bounded 60 job list --cluster html
expect_bounded 3 "job list: an HTML page with status 200"
bounded 60 hived status --hived "$html_URI"
expect_bounded 3 "hived status: an HTML page with status 200"
# A silent server costs each command its attempts (4) times the request timeout, plus the
# backoffs between them (about 2-3.5 s): the timeout is short so that the test waits
# seconds, not tens of them (at 2 s these four commands waited about 45 s).
for c in silent mute headers; do
  bounded 60 job list --cluster $c --request-timeout 0.5
  expect_bounded 3 "job list: a server that stays $c"
done
bounded 60 hived status --hived "$silent_URI" --request-timeout 0.5
expect_bounded 3 "hived status: a silent server"

# --- Retry-After: 99999 is reported, not waited for ------------------------------------------
hostile busy retry-after:99999
register busy "$busy_URI"
bounded 60 job list --cluster busy
expect_bounded 3 "job list: Retry-After 99999 (not waited for)"

finish

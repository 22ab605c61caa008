#!/bin/sh
# ctest fixture for the testbed: up 3 hosts on 127.0.31.x, or down (which also
# checks that nothing it started is left running). Skips (77) with the reason
# where this machine cannot run sshd test hosts.
set -eu
. "$(dirname "$0")/../../skip.sh"
case $1 in
  up)
    rm -f "$2.skipped"
    set +e
    reason=$("$TESTBED" can-run)
    rc=$?
    set -e
    if [ $rc -ne 0 ]; then echo "$reason" >"$2.skipped"; skip_test "$reason"; fi
    exec "$TESTBED" up 3 "$2" --base 127.0.31 --rollout-delay 0.3 ;;
  down)
    [ -f "$2.skipped" ] && skip_test "$(cat "$2.skipped")"
    [ -f "$2/testbed.json" ] || exit 0
    pids=$(cat "$2/pids" 2>/dev/null | cut -d' ' -f1; cat "$2"/hosts/*/state/apiserver/pid 2>/dev/null || true)
    ns=$(cut -d' ' -f2 "$2/namespaces" 2>/dev/null || true)
    "$TESTBED" down "$2"
    left=""
    for p in $pids; do
      if [ -r "/proc/$p/stat" ] && [ "$(cut -d' ' -f3 "/proc/$p/stat")" != Z ]; then left="$left $p"; fi
    done
    # A namespace's number may be another run's by now: a process is this run's when its
    # /root is one of this run's hosts' home directories (as testhosts.sh stop tells them).
    ours=$(stat -L -c '%d:%i' "$2"/hosts/*/root-home "$2"/hosts/*/fs/root 2>/dev/null | tr '\n' ' ')
    for n in $ns; do
      for f in /proc/[0-9]*/ns/mnt; do
        p=${f#/proc/}; p=${p%%/*}
        if [ "$(readlink "$f" 2>/dev/null)" = "$n" ] && [ "$(cut -d" " -f3 "/proc/$p/stat" 2>/dev/null)" != Z ]; then
          id=$(stat -L -c '%d:%i' "/proc/$p/root/root" 2>/dev/null) || continue
          case " $ours " in *" $id "*) left="$left $p" ;; esac
        fi
      done
    done
    if [ -n "$left" ]; then echo "FAIL: still running after down:$left" >&2; exit 1; fi
    echo "testbed: down left no process" ;;
esac

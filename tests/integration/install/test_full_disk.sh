#!/bin/sh
# paictl install in a cluster directory on a full disk (a 16 KiB tmpfs, filled):
# the install journal cannot be written, so the apply is refused with exit 2 and a
# clear message before any host is reached (the hosts are addresses nothing
# answers on); a dry run, which writes no journal, still plans. And .paictl/logs
# being a file: the run says the hosts' logs cannot be kept. Needs root (mount);
# skips (77) elsewhere.
. "$PAI_SOURCE_DIR/tests/cli/lib.sh"
set -e
own_home

if [ "$(id -u)" -ne 0 ]; then echo "skip: mounting a tmpfs needs root"; exit 77; fi
D="$TMP/full"
mkdir -p "$D"
if ! mount -t tmpfs -o size=16k,mode=0700 tmpfs "$D" 2>"$TMP/mount.err"; then
  echo "skip: cannot mount a tmpfs: $(cat "$TMP/mount.err")"
  exit 77
fi
trap 'umount "$D" 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM

# The quick-start cluster on 127.0.0.1 ports nothing listens on (no host is reached).
cp "$PAI_SOURCE_DIR/examples/clusters/quickstart/config.yaml" \
  "$PAI_SOURCE_DIR/examples/clusters/quickstart/services-configuration.yaml" "$D/"
sed -e 's/hostip: 10\.0\.0\.1/hostip: 127.0.0.1/' -e 's/hostip: 10\.0\.0\.1\([0-9]\)/hostip: 127.0.0.1\1/' \
  "$PAI_SOURCE_DIR/examples/clusters/quickstart/layout.yaml" >"$D/layout.yaml"
# Fill the rest of the disk.
dd if=/dev/zero of="$D/filler" bs=1024 count=64 2>/dev/null || true
if dd if=/dev/zero of="$D/more" bs=1 count=1 2>/dev/null; then
  fail "the tmpfs is not full"
fi
rm -f "$D/more"

run install "$D" --yes --connect-timeout 2 --ssh-config none --no-agent --known-hosts "$TMP/known_hosts"
expect_rc 2 "an install that cannot journal is refused"
expect_err "the install journal cannot be written (" "the reason"
expect_err "No space left on device" "what the disk said"
expect_err "nothing was changed" "nothing changed"
expect_err "free space" "what to do"

# Room again, but .paictl/logs is a file: said, and the run goes on (to the
# unreachable hosts, where it stops).
rm -f "$D/filler"
rm -rf "$D/.paictl"
mount -o remount,size=1m "$D"
mkdir -p "$D/.paictl"
echo "not a directory" >"$D/.paictl/logs"
run install "$D" --yes --connect-timeout 2 --ssh-config none --no-agent --known-hosts "$TMP/known_hosts"
expect_err "the hosts' logs cannot be kept: $D/.paictl/logs is not a directory" "a logs file is a warning"
[ "$RC" -ne 0 ] && pass "the unreachable hosts fail the run (exit $RC)" || fail "exit 0 with unreachable hosts"
finish

# The demo scripts' two helpers; source it after `cd` to the repository's root,
# with DEMO_NAME (the script's name in messages), PAICTL and status=0 set.
# DEMO_MASK=DIR prints DIR as $DEMO in the commands shown.

# step TEXT: a heading for the next commands.
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

# expect CODE COMMAND...: shows and runs the command and checks its exit code;
# a different code sets status=1 and the demo goes on.
expect() {
  want=$1; shift
  if [ -n "${DEMO_MASK:-}" ]; then
    echo "\$ paictl ${*#"$PAICTL" }" | sed "s|$DEMO_MASK|\$DEMO|g"
  else
    echo "\$ paictl ${*#"$PAICTL" }"
  fi
  set +e; "$@"; got=$?; set -e
  if [ "$got" -ne "$want" ]; then
    echo "$DEMO_NAME: expected exit $want, got $got" >&2
    status=1
  fi
}

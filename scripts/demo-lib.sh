# The demo scripts' helpers; source it after `cd` to the repository's root,
# with DEMO_NAME (the script's name in messages), PAICTL and status=0 set.
# DEMO_MASK=DIR prints DIR as $DEMO in the commands shown. DEMO_CAPTURE=FILE keeps
# each command's output (printed once it ends) for `shows`.

# step TEXT: a heading for the next commands.
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

# expect CODE COMMAND...: shows and runs the command and checks its exit code;
# a different code sets status=1 and the demo goes on.
expect() {
  want=$1; shift
  # The command as a shell would take it: an argument with blanks in quotes.
  shown=""
  for arg in "$@"; do
    case $arg in *[[:space:]]* | "") arg="\"$arg\"" ;; esac
    shown="$shown${shown:+ }$arg"
  done
  if [ -n "${DEMO_MASK:-}" ]; then
    echo "\$ paictl ${shown#"$PAICTL" }" | sed "s|$DEMO_MASK|\$DEMO|g"
  else
    echo "\$ paictl ${shown#"$PAICTL" }"
  fi
  set +e
  if [ -n "${DEMO_CAPTURE:-}" ]; then
    "$@" >"$DEMO_CAPTURE" 2>&1
    got=$?
    cat "$DEMO_CAPTURE"
  else
    "$@"
    got=$?
  fi
  set -e
  if [ "$got" -ne "$want" ]; then
    echo "$DEMO_NAME: expected exit $want, got $got" >&2
    status=1
  fi
}

# shows TEXT...: the output of the last `expect` (DEMO_CAPTURE=FILE keeps it) holds
# every TEXT; a missing one sets status=1. A demo whose commands exit as documented
# but print the wrong thing fails.
shows() {
  for text in "$@"; do
    if ! grep -qF -- "$text" "$DEMO_CAPTURE"; then
      echo "$DEMO_NAME: the output lacks: $text" >&2
      status=1
    fi
  done
}

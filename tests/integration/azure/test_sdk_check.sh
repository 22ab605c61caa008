#!/bin/sh
# The ARM test server against Microsoft's JavaScript SDKs (sdk_check.mjs): the
# npm packages are test-only dependencies, installed into the build tree at test
# time (like kubernetes-models and the YAML test suite). Without node, npm or a
# registry the test is skipped (77), unless PAI_REQUIRE_AZURE_SDK=1 (CI).
. "$PAI_SOURCE_DIR/tests/integration/azure/lib.sh"
set -e
: "${SDK_DEST:?SDK_DEST must name the directory for the npm packages}"
PKGS="@azure/identity@4.14.1 @azure/arm-resources@8.0.0 @azure/arm-network@39.0.0 @azure/arm-compute@25.1.1"
skip() {
  echo "sdk-check: $1" >&2
  if [ "${PAI_REQUIRE_AZURE_SDK:-0}" = "1" ]; then exit 1; fi
  exit 77
}
command -v node >/dev/null 2>&1 || skip "node is not installed (apt-get install npm)"
if [ ! -f "$SDK_DEST/node_modules/@azure/arm-compute/package.json" ] ||
   [ ! -f "$SDK_DEST/node_modules/@azure/identity/package.json" ]; then
  command -v npm >/dev/null 2>&1 || skip "npm is not installed (apt-get install npm)"
  mkdir -p "$SDK_DEST"
  # shellcheck disable=SC2086
  if ! timeout 300 npm install --prefix "$SDK_DEST" --no-save --no-audit --no-fund --no-package-lock \
      --loglevel=error $PKGS >"$SDK_DEST/npm.log" 2>&1; then
    cat "$SDK_DEST/npm.log" >&2
    skip "npm could not install the Azure SDKs (is the registry reachable?)"
  fi
fi
# Retry-After 0: the SDKs' pollers wait what the server says; the contract is the same.
start_arm --polls 2 --retry-after 0
cp "$AZ/sdk_check.mjs" "$SDK_DEST/sdk_check.mjs"
set +e
NODE_EXTRA_CA_CERTS="$CA" timeout 120 node "$SDK_DEST/sdk_check.mjs" "$ARM" "$CTL" contoso.onmicrosoft.com \
  "$CLIENT_ID" "$TMP/server-secret"
rc=$?
set -e
[ $rc -eq 0 ] && pass "the Azure SDKs create, poll, list and delete against the test server" ||
  fail "the Azure SDKs against the test server (exit $rc)"
finish

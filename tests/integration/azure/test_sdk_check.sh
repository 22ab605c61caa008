#!/bin/sh
# The ARM test server against Microsoft's JavaScript SDKs (sdk_check.mjs): the
# npm packages are test-only dependencies, installed into the build tree at test
# time (like kubernetes-models and the YAML test suite). Without node, npm or a
# registry the test is skipped (77), unless PAI_REQUIRE_AZURE_SDK=1 (CI).
. "$PAI_SOURCE_DIR/tests/integration/azure/lib.sh"
set -e
: "${SDK_DEST:?SDK_DEST must name the directory for the npm packages}"
PKGS="@azure/identity@4.14.1 @azure/arm-resources@8.0.0 @azure/arm-network@39.0.0 @azure/arm-compute@25.1.1"
npm_packages sdk-check "$SDK_DEST" "$PKGS" node_modules/@azure/arm-compute/package.json \
  node_modules/@azure/identity/package.json
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

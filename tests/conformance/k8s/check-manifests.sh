#!/bin/sh
# Every manifest paictl install applies, validated against the Kubernetes
# OpenAPI schemas of the npm package kubernetes-models (a test-only dependency,
# installed into the build tree at test time like the YAML test suite).
# Without npm or a registry the test is skipped (77), unless
# PAI_REQUIRE_K8S_MODELS=1 or PAI_REQUIRE_ALL=1 (CI), which make that a failure.
#   check-manifests.sh RENDER_MANIFESTS TEMPLATES SERVICES_FILE DEST
set -u
RENDER=$1 TEMPLATES=$2 SERVICES=$3 DEST=$4
MODELS=5.1.0 YAMLJS=2.9.1
HERE=$(cd "$(dirname "$0")" && pwd)
skip() {
  echo "check-manifests: $1" >&2
  if [ "${PAI_REQUIRE_K8S_MODELS:-0}" = "1" ] || [ "${PAI_REQUIRE_ALL:-0}" = "1" ]; then exit 1; fi
  exit 77
}
command -v node >/dev/null 2>&1 || skip "node is not installed (apt-get install npm)"
if [ ! -f "$DEST/node_modules/kubernetes-models/package.json" ] || [ ! -f "$DEST/node_modules/yaml/package.json" ]; then
  command -v npm >/dev/null 2>&1 || skip "npm is not installed (apt-get install npm)"
  mkdir -p "$DEST" || skip "cannot create $DEST"
  if ! timeout 300 npm install --prefix "$DEST" --no-save --no-audit --no-fund --no-package-lock \
      --loglevel=error "kubernetes-models@$MODELS" "yaml@$YAMLJS" >"$DEST/npm.log" 2>&1; then
    cat "$DEST/npm.log" >&2
    skip "npm could not install kubernetes-models@$MODELS (is the registry reachable?)"
  fi
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/paictl-manifests.XXXXXX")
trap 'rm -rf "$OUT"' EXIT INT TERM
"$RENDER" "$TEMPLATES" "$SERVICES" "$OUT" || { echo "check-manifests: rendering failed" >&2; exit 1; }
cp "$HERE/validate_manifests.mjs" "$DEST/validate_manifests.mjs"
node "$DEST/validate_manifests.mjs" "$OUT"

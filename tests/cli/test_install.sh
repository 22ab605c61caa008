#!/bin/sh
# `cmake --install` gives a working paictl, libpai, its headers and a pkg-config
# file that a program can build against.
set -eu
. "$(dirname "$0")/lib.sh"
: "${PAI_BUILD_DIR:?}"
PREFIX="$TMP/prefix"
cmake --install "$PAI_BUILD_DIR" --prefix "$PREFIX" >/dev/null
[ -x "$PREFIX/bin/paictl" ] && pass "paictl installed" || fail "paictl missing"
"$PREFIX/bin/paictl" --version | grep -q "^paictl " && pass "installed --version" || fail "installed --version"
set +e; "$PREFIX/bin/paictl" check config "$PAI_SOURCE_DIR/examples/clusters/quickstart" >/dev/null; rc=$?; set -e
[ "$rc" -eq 0 ] && pass "installed paictl runs a command" || fail "installed paictl: exit $rc"
MAN1=$(find "$PREFIX" -path '*/man1/paictl-check-config.1' | head -1)
[ -n "$MAN1" ] && [ -f "$(dirname "$MAN1")/paictl.1" ] && pass "man pages installed" || fail "man pages missing"
PC=$(find "$PREFIX" -name libpai.pc | head -1)
[ -n "$PC" ] && pass "pkg-config file installed" || fail "no libpai.pc"
cat > "$TMP/use.cc" <<'CC'
#include <config/cluster_files.h>
#include <util/version.h>
#include <cstdio>
int main(int argc, char** argv) {
  auto out = pai::config::check_paths({argv[1]});
  std::printf("libpai %s: %zu errors\n", pai::kVersion, out.diagnostics.count(pai::diag::Severity::Error));
  return argc > 1 && !out.diagnostics.has_errors() ? 0 : 1;
}
CC
export PKG_CONFIG_PATH="$(dirname "$PC")"
# A sanitized libpai needs its runtime linked into the program that uses it.
SAN=""
[ -n "${PAI_SANITIZE:-}" ] && SAN="-fsanitize=$PAI_SANITIZE"
# shellcheck disable=SC2046
c++ $SAN -o "$TMP/use" "$TMP/use.cc" $(pkg-config --cflags --libs libpai) -Wl,-rpath,"$PREFIX/$(basename "$(dirname "$(dirname "$PC")")")" \
  && pass "a program builds against the installed libpai" || fail "build against libpai"
"$TMP/use" "$PAI_SOURCE_DIR/examples/clusters/quickstart" | grep -q "0 errors" && pass "and runs" || fail "program against libpai"
finish

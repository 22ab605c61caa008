#!/bin/sh
# `cmake --install` gives a working paictl, libpai, its public headers, and a
# pkg-config file and a CMake package that a program can build against.
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

# Only public headers, and they include nothing that is not installed.
INC="$PREFIX/include/pai"
[ ! -e "$INC/scheduler/hived_algorithm.h" ] && [ ! -e "$INC/facts/text_lines.h" ] \
  && pass "internal headers are not installed" || fail "internal headers installed"
missing=$(cd "$INC" && for h in */*.h; do
  sed -n 's/^#include "\([^"]*\)".*/\1/p' "$h" | while read -r inc; do [ -e "$inc" ] || echo "$h -> $inc"; done
done)
[ -z "$missing" ] && pass "installed headers include only installed headers" || fail "installed headers include missing ones: $missing"

# find_package(libpai) from a CMake project.
CFG=$(find "$PREFIX" -name libpaiConfig.cmake | head -1)
[ -n "$CFG" ] && [ -f "$(dirname "$CFG")/libpaiConfigVersion.cmake" ] \
  && pass "CMake package and version files installed" || fail "no libpaiConfig.cmake / libpaiConfigVersion.cmake"
mkdir -p "$TMP/cmake-use"
cp "$TMP/use.cc" "$TMP/cmake-use/use.cc"
cat > "$TMP/cmake-use/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.22)
project(use_libpai CXX)
find_package(libpai 0.1 REQUIRED)
add_executable(use use.cc)
target_link_libraries(use PRIVATE libpai::pai)
if(SAN)
  target_compile_options(use PRIVATE -fsanitize=${SAN})
  target_link_options(use PRIVATE -fsanitize=${SAN})
endif()
CM
if cmake -S "$TMP/cmake-use" -B "$TMP/cmake-use/build" -DCMAKE_PREFIX_PATH="$PREFIX" \
     -DSAN="${PAI_SANITIZE:-}" >"$TMP/cmake-use.log" 2>&1 \
   && cmake --build "$TMP/cmake-use/build" >>"$TMP/cmake-use.log" 2>&1; then
  pass "a CMake program builds with find_package(libpai)"
else
  fail "find_package(libpai): $(tail -5 "$TMP/cmake-use.log")"
fi
"$TMP/cmake-use/build/use" "$PAI_SOURCE_DIR/examples/clusters/quickstart" | grep -q "0 errors" \
  && pass "and runs (libpai found through the package's rpath)" || fail "find_package program"
sed -i 's/libpai 0.1 REQUIRED/libpai 9.0 REQUIRED/' "$TMP/cmake-use/CMakeLists.txt"
if cmake -S "$TMP/cmake-use" -B "$TMP/cmake-use/b3" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null 2>&1; then
  fail "find_package(libpai 9.0) accepted version $(sed -n 's/.*PACKAGE_VERSION "\(.*\)".*/\1/p' "$(dirname "$CFG")/libpaiConfigVersion.cmake" | head -1)"
else
  pass "the version file refuses another version"
fi
finish

#!/bin/sh
# Configures and builds paictl into build/ (RelWithDebInfo). Extra arguments go to cmake.
#   PAI_BUILD_TARGETS="A B"   build only these targets (default: everything)
set -eu
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# shellcheck disable=SC2086
cmake --build build -j "$JOBS" ${PAI_BUILD_TARGETS:+--target $PAI_BUILD_TARGETS}

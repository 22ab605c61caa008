#!/bin/sh
# Configures and builds paictl into build/ (RelWithDebInfo). Extra arguments go to cmake.
set -eu
cd "$(dirname "$0")/.."
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j "$JOBS"

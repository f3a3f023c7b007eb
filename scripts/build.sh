#!/usr/bin/env bash
# Configures and builds xstage into build/ (executables in build/bin/). Extra args go to cmake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "${XS_BUILD_DIR:-build}" -DCMAKE_BUILD_TYPE="${XS_BUILD_TYPE:-RelWithDebInfo}" "$@" >/dev/null
cmake --build "${XS_BUILD_DIR:-build}" -j"$jobs"

#!/usr/bin/env bash
# Configures and builds xstage into build/ (executables in build/bin/). Extra args go to cmake configure.
#   env: XS_BUILD_DIR (build), XS_BUILD_TYPE (RelWithDebInfo), XS_TARGETS ("" = everything, else a
#        space-separated list), XS_BUILD_LOG (a file: all compiler output goes there, its tail is shown
#        only on failure; unset: to the console).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${XS_BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)

# A new build dir gets Ninja where it is on PATH, else Makefiles; an existing one keeps its generator.
generator=()
if [[ ! -f "$build_dir/CMakeCache.txt" && -z "${CMAKE_GENERATOR:-}" ]]; then
  if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); else generator=(-G "Unix Makefiles"); fi
fi
targets=()
for t in ${XS_TARGETS:-}; do targets+=(--target "$t"); done

log=${XS_BUILD_LOG:-}
step() {  # runs "$@", into the log if there is one
  if [[ -z "$log" ]]; then
    "$@"
  elif ! "$@" >>"$log" 2>&1; then
    echo "build: failed: $*" >&2
    echo "build: last lines of $log:" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
}
if [[ -n "$log" ]]; then
  mkdir -p "$(dirname "$log")"
  : >"$log"
fi
step cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="${XS_BUILD_TYPE:-RelWithDebInfo}" "$@"
step cmake --build "$build_dir" -j"$jobs" "${targets[@]}"

#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) in a separate clang build dir with ASan + UBSan (CUDA, tests and
# benchmarks off) and runs each for N seconds. Exit status is non-zero on any finding; the crashing input
# is kept in <build>/artifacts/<target>-crash-* and can be replayed with `<build>/bin/<target> <file>`.
#   scripts/fuzz.sh [seconds=20]      env: XS_FUZZ_BUILD_DIR (build-fuzz), XS_FUZZ_JOBS (2)
set -euo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${XS_FUZZ_BUILD_DIR:-$root/build-fuzz}"
jobs="${XS_FUZZ_JOBS:-2}"
targets=(fuzz_result_file fuzz_point_record fuzz_journal fuzz_gate_config)

CC=clang CXX=clang++ cmake -S "$root" -B "$build" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DXS_BUILD_FUZZERS=ON -DXS_ENABLE_CUDA=OFF -DXS_BUILD_TESTS=OFF -DXS_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" --target "${targets[@]}" -j "$jobs"

mkdir -p "$build/artifacts"
status=0
for target in "${targets[@]}"; do
  name="${target#fuzz_}"
  # New inputs go to the first corpus dir (scratch, in the build dir); the committed seeds stay untouched.
  work="$build/corpus/$name"
  mkdir -p "$work"
  echo "== $target for ${seconds}s"
  if ! "$build/bin/$target" "$work" "$root/fuzz/corpus/$name" \
      -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
      -dict="$root/fuzz/xstage.dict" -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1; then
    echo "!! $target found a problem; see $build/artifacts/" >&2
    status=1
  fi
done
exit "$status"

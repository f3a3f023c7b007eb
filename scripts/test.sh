#!/usr/bin/env bash
# The README's test command: set-up if needed, build, all tests. GPU tests report "Not Run" where there is
# no GPU. Then a short fuzz run of the file readers and a check that the simulator calibration runs end to end.
set -euo pipefail
cd "$(dirname "$0")/.."
XS_WITH_FUZZ=1 ./scripts/setup.sh
./scripts/build.sh
(cd "${XS_BUILD_DIR:-build}" && ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)")
# End to end on the simulator: sweep, fit, validation, result file, gate against itself.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/bin/xstage-calibrate --backend sim --no-progress --out "$tmp/cal.json" >"$tmp/cal.log"
build/bin/xstage-predict burst --model "$tmp/cal.json" --K 132 --B 32KiB --G 2us --json >/dev/null
build/bin/xstage-gate --baseline "$tmp/cal.json" --candidate "$tmp/cal.json" --config configs/gate/calibration.json >/dev/null
echo "test: simulator calibration end to end ok"
if [[ -x scripts/fuzz.sh ]]; then
  ./scripts/fuzz.sh "${XS_FUZZ_SECONDS:-15}"
fi
echo "test: all passed"

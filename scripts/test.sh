#!/usr/bin/env bash
# The README's test command: set-up if needed, build, all tests. GPU tests report "Not Run" where there is
# no GPU. Then a short fuzz run of the file readers and a check that the simulator calibration runs end to end.
# The build has -DXS_WITH_MPI=ON, so CTest's mpi.* tests run xstage-bench and xstage-calibrate under mpirun -np 4
# on the simulator: OpenMPI is required (setup.sh installs it where apt works, as in CI). Without it the run stops
# (exit 1, naming the packages) before building, unless XS_ALLOW_NO_MPI is 1, true, yes or on: then setup.sh is not
# asked for OpenMPI, and it builds without MPI, says so, and the mpirun tests check the refusal only (a developer
# machine without apt or root). Any other value of XS_ALLOW_NO_MPI (but 0, false, no, off or empty) is exit 2
# before anything runs.
set -euo pipefail
cd "$(dirname "$0")/.."
have_mpi() { command -v mpicxx >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; }
allow_no_mpi=0
case "$(printf '%s' "${XS_ALLOW_NO_MPI:-}" | tr '[:upper:]' '[:lower:]')" in
  1 | true | yes | on) allow_no_mpi=1 ;;
  "" | 0 | false | no | off) ;;
  *)
    echo "test: error: XS_ALLOW_NO_MPI='${XS_ALLOW_NO_MPI}': expected 1, true, yes or on (test without MPI where" \
      "OpenMPI is missing), or 0, false, no, off or unset (require it); nothing was run" >&2
    exit 2
    ;;
esac
# OpenMPI is looked for before set-up: where it is missing and allowed to be, setup.sh does not try to install it.
with_mpi=1
if ! have_mpi && [[ "$allow_no_mpi" == 1 ]]; then with_mpi=0; fi
XS_WITH_FUZZ=1 XS_WITH_MPI=$with_mpi ./scripts/setup.sh
if have_mpi; then
  ./scripts/build.sh -DXS_WITH_MPI=ON
elif [[ "$allow_no_mpi" == 1 ]]; then
  echo "test: no OpenMPI here and XS_ALLOW_NO_MPI=${XS_ALLOW_NO_MPI}: building without MPI (the mpirun tests check the" \
    "refusal only)"
  ./scripts/build.sh -DXS_WITH_MPI=OFF
else
  {
    echo "test: error: OpenMPI is missing (mpicxx and mpirun are not on PATH), so the MPI build and its mpirun tests"
    echo "test: cannot run. Install Debian's libopenmpi-dev and openmpi-bin (XS_WITH_MPI=1 ./scripts/setup.sh does"
    echo "test: so where apt-get works as root), or set XS_ALLOW_NO_MPI=1 to test without MPI."
  } >&2
  exit 1
fi
build_dir=${XS_BUILD_DIR:-build}
(cd "$build_dir" && ctest --output-on-failure -j"$(nproc 2>/dev/null || echo 2)")
# End to end on the simulator: sweep, fit, validation, result file, gate against itself.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build_dir/bin/xstage-calibrate" --backend sim --no-progress --out "$tmp/cal.json" >"$tmp/cal.log"
"$build_dir/bin/xstage-predict" burst --model "$tmp/cal.json" --K 132 --B 32KiB --G 2us --json >/dev/null
# --rate for the paced form (eq. I1), --B and --tile-time for the epilogue form (eq. I2, the default sweep's)
"$build_dir/bin/xstage-predict" interference --calibration "$tmp/cal.json" --K 132 --rate inf --B 8KiB --tile-time 3us \
  --json >/dev/null
"$build_dir/bin/xstage-gate" --baseline "$tmp/cal.json" --candidate "$tmp/cal.json" \
  --config configs/gate/calibration.json >/dev/null
echo "test: simulator calibration end to end ok"
# The fuzz run needs clang++ with libFuzzer; setup.sh installs it where apt works (CI) and says so where not.
fuzz_probe="$tmp/fuzz_probe.cpp"
printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' >"$fuzz_probe"
if command -v clang++ >/dev/null 2>&1 &&
   clang++ -fsanitize=fuzzer,address,undefined "$fuzz_probe" -o "$tmp/fuzz_probe" >/dev/null 2>&1; then
  ./scripts/fuzz.sh "${XS_FUZZ_SECONDS:-15}"
else
  echo "test: fuzz run skipped: no clang++ that links libFuzzer here (scripts/setup.sh with XS_WITH_FUZZ=1 installs it)"
fi
echo "test: all passed"

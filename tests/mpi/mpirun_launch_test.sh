#!/bin/sh
# CTest mpi.xstage_bench_launch (issue 14): xstage-bench started by mpirun on a machine without a GPU. In a
# -DXS_WITH_MPI=ON build: rank 0 alone prints a dry run, refusals are printed once with exit 2, a one-rank and
# a two-rank simulator run write their file. In a build without MPI: two ranks are refused with the -DXS_WITH_MPI=ON hint.
# Usage: mpirun_launch_test.sh <xstage-bench> <mpirun or ""> <ON|OFF>. Exit 77 (skipped) without mpirun.
bench=$1 mpirun=$2 with_mpi=$3
if [ -z "$mpirun" ] || [ ! -x "$mpirun" ]; then echo "mpirun not found: skipped"; exit 77; fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI containers run as root; OpenMPI refuses that
export OMPI_MCA_rmaps_base_oversubscribe=1                          # more ranks than cores here is fine
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# The tool runs in $tmp/work, apart from the captures: a dry run checks its outputs as the run does, and the
# capture file $tmp/out would stand where the default output folder out/ goes.
mkdir "$tmp/work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run <np> <args...>: stdout -> $tmp/out, stderr -> $tmp/err, exit code -> $rc
run() {
  np=$1; shift
  (cd "$tmp/work" && "$mpirun" -np "$np" "$bench" "$@" >"$tmp/out" 2>"$tmp/err"); rc=$?
  echo "\$ mpirun -np $np xstage-bench $* -> exit $rc"; sed 's/^/  out: /' "$tmp/out"; sed 's/^/  err: /' "$tmp/err"
}
count() { grep -c -- "$1" "$2"; }
expect_rc() { [ "$rc" -eq "$1" ] || fail "exit $rc, expected $1"; }
expect_count() { n=$(count "$2" "$3"); [ "$n" -eq "$1" ] || fail "'$2' $n times in $(basename "$3"), expected $1"; }

if [ "$with_mpi" = "ON" ]; then
  run 2 fa_a2a --dry-run --M 8192,16384 --target host --P 2
  expect_rc 0; expect_count 1 "launch: mpi, 2 ranks" "$tmp/out"; expect_count 1 "^2 points" "$tmp/out"
  run 1 fa_a2a --dry-run --M 8192 --target host
  expect_rc 0; expect_count 1 "launch: mpi, 1 rank" "$tmp/out"
  run 2 fa_a2a --dry-run --gpus 2
  expect_rc 2; expect_count 1 "under mpirun each process drives one GPU" "$tmp/err"
  run 2 fa_a2a --no-such-flag
  expect_rc 2; expect_count 1 "no-such-flag" "$tmp/err"
  run 2 fa_a2a --M 8192 --out r.json
  # Said once, by one rank: the host-only build stops at the rank start-up's check ("no rank has a GPU"), the
  # CUDA build at CUDA's own reason ("no usable GPU: ...").
  expect_rc 77; expect_count 1 "xstage-bench: error:" "$tmp/err"
  expect_count 1 "no rank has a GPU\\|no usable GPU" "$tmp/err"
  [ ! -e "$tmp/work/r.json" ] || fail "a refused run wrote r.json"
  run 2 remote_store.periodic --backend sim --K 8 --B 16KiB --G 0,1us --reps 2 --no-progress --out sim2.json
  expect_rc 0; expect_count 1 "wrote sim2.json (2 points" "$tmp/out"  # rank-aware since issue 31 (tests/mpi/mpi_sim_ranks_test.sh)
  [ -s "$tmp/work/sim2.json" ] || fail "mpirun -np 2 did not write sim2.json"
  run 1 remote_store.periodic --backend sim --K 8 --B 16KiB --G 0,1us --reps 2 --no-progress --out sim1.json
  expect_rc 0; [ -s "$tmp/work/sim1.json" ] || fail "mpirun -np 1 did not write sim1.json"
else
  run 2 fa_a2a --dry-run --M 8192
  expect_rc 2; expect_count 1 "built without MPI: configure with -DXS_WITH_MPI=ON" "$tmp/err"
  run 1 fa_a2a --dry-run --M 8192 --target host
  expect_rc 0; expect_count 1 "^1 points" "$tmp/out"
fi
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all mpirun checks passed"

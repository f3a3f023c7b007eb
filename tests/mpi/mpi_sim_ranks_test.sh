#!/bin/sh
# CTest mpi.sim.* (issue 31): xstage-bench and xstage-calibrate under `mpirun -np 4` on the simulator, on CPU, in
# a -DXS_WITH_MPI=ON build. Every rank simulates its own GPU (its own noise stream), rank 0 merges and writes.
#   merge    the merged file is, per repetition, the max over four single-rank runs with the ranks' seeds;
#            rank 0 alone prints and writes (one file in the folder)
#   resume   rank 2 fails at its third point (a thrown error): every rank exits 3, the error is printed once,
#            no result file, the journal holds the two finished points; a resume on 2 ranks is refused; the
#            resume on 4 ranks runs the rest and equals an uninterrupted run
#   failed   one rank hangs mid-point (XS_RANK_TIMEOUT_S=3) or dies mid-point: every rank ends within 60 s,
#            with an error naming the rank, no result file and only complete journal lines
#   calibrate  xstage-calibrate on 4 ranks fits and writes one calibration
# Usage: mpi_sim_ranks_test.sh <merge|resume|failed|calibrate> <mpirun> <xstage-bench> <xstage-calibrate>
#        <rank_result_check> <source dir>. Exit 0 when every check passed.
mode=$1 mpirun=$2 bench=$3 calibrate=$4 check=$5 src=$6
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI containers run as root; OpenMPI refuses that
export OMPI_MCA_rmaps_base_oversubscribe=1                          # 4 ranks on a 2-core machine
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/w" "$tmp/logs"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
sweep="remote_store.periodic --backend sim --K 8,33 --B 16KiB --G 0,2us --reps 5 --sim-noise 0.05 --no-progress"

# run <env assignments or -> <np> <tool> <args...>: in $tmp/w; stdout, stderr -> $tmp/logs/{out,err}; $rc, $elapsed_s
run() {
  env_args=$1 np=$2 tool=$3; shift 3
  [ "$env_args" = "-" ] && env_args=""
  start=$(date +%s)
  (cd "$tmp/w" && env $env_args "$mpirun" -np "$np" "$tool" "$@" >"$tmp/logs/out" 2>"$tmp/logs/err"); rc=$?
  elapsed_s=$(( $(date +%s) - start ))
  echo "\$ $env_args mpirun -np $np $(basename "$tool") $* -> exit $rc in ${elapsed_s}s"
  sed 's/^/  out: /' "$tmp/logs/out" | head -20; sed 's/^/  err: /' "$tmp/logs/err" | head -20
}
count() { grep -c -- "$1" "$2"; }
expect_rc() { [ "$rc" -eq "$1" ] || fail "exit $rc, expected $1"; }
expect_count() { n=$(count "$2" "$3"); [ "$n" -eq "$1" ] || fail "'$2' $n times in $(basename "$3"), expected $1"; }
# expect_files <names>: exactly these files in the folder, besides the journal a finished run may keep
expect_files() {
  have=$(cd "$tmp/w" && ls -A | grep -v -x -E "(r4|c4|f)\.json\.journal\.jsonl" | tr '\n' ' ')
  [ "$have" = "$1" ] || fail "files '$have', expected '$1'"
}
# journal_points <file>: the points of a journal (lines after the header), after checking every line is complete
journal_points() {
  [ -z "$(tail -c 1 "$1")" ] || fail "$1 ends in a cut line"
  echo $(( $(wc -l <"$1") - 1 ))
}

case $mode in
merge)
  run - 4 "$bench" $sweep --out r4.json
  expect_rc 0; expect_count 1 "wrote r4.json (4 points" "$tmp/logs/out"; expect_files "r4.json "
  seeds=$("$check" seeds "$tmp/w/r4.json")
  [ "$(echo "$seeds" | sort -u | wc -l)" -eq 4 ] || fail "the 4 ranks' seeds are not distinct: $seeds"
  singles="" r=0
  for seed in $seeds; do  # rank r on its own: the same sweep with rank r's seed, one process
    (cd "$tmp/w" && "$bench" $sweep --seed "$seed" --out "single$r.json" >/dev/null 2>"$tmp/logs/err") ||
      fail "single-rank run with seed $seed: $(cat "$tmp/logs/err")"
    singles="$singles $tmp/w/single$r.json"; r=$((r + 1))
  done
  "$check" max "$tmp/w/r4.json" $singles || fail "r4.json is not the per-repetition max of the ranks"
  ;;
resume)
  run - 4 "$bench" $sweep --out r4.json
  expect_rc 0
  run XS_SIM_FAULT=2:3:throw 4 "$bench" $sweep --out f.json
  expect_rc 3; expect_count 1 "error: rank 2: planted fault (XS_SIM_FAULT): failed at this rank's point 3" "$tmp/logs/err"
  expect_count 1 "error:" "$tmp/logs/err"
  expect_files "r4.json "
  [ -f "$tmp/w/f.json.journal.jsonl" ] || fail "no journal"
  [ "$(journal_points "$tmp/w/f.json.journal.jsonl")" -eq 2 ] || fail "the journal does not hold the 2 finished points"
  cp "$tmp/w/f.json.journal.jsonl" "$tmp/logs/journal"
  run - 2 "$bench" $sweep --out f.json --resume
  expect_rc 2; expect_count 1 "error:" "$tmp/logs/err"
  cmp -s "$tmp/w/f.json.journal.jsonl" "$tmp/logs/journal" || fail "a refused resume changed the journal"
  run - 4 "$bench" $sweep --out f.json --resume
  expect_rc 0; expect_count 1 "resuming 2/4 points" "$tmp/logs/err"
  "$check" same "$tmp/w/f.json" "$tmp/w/r4.json" || fail "the resumed run differs from the uninterrupted one"
  ;;
failed)
  run "XS_SIM_FAULT=1:2:hang XS_RANK_TIMEOUT_S=3" 4 "$bench" $sweep --out h.json
  [ "$rc" -ne 0 ] || fail "a hung rank: exit 0"
  [ "$elapsed_s" -le 60 ] || fail "a hung rank: the run took ${elapsed_s}s (bound 60 s)"
  expect_count 1 "error: rank 0: gather: no answer from rank 1 within 3 s" "$tmp/logs/err"
  expect_files "h.json.journal.jsonl "
  [ "$(journal_points "$tmp/w/h.json.journal.jsonl")" -eq 1 ] || fail "the journal does not hold the finished point"
  rm -f "$tmp/w/h.json.journal.jsonl"
  run XS_SIM_FAULT=3:2:exit 4 "$bench" $sweep --out d.json
  [ "$rc" -ne 0 ] || fail "a rank that died: exit 0"
  [ "$elapsed_s" -le 60 ] || fail "a rank that died: the run took ${elapsed_s}s (bound 60 s)"
  expect_count 1 "rank 3: planted fault" "$tmp/logs/err"
  [ ! -e "$tmp/w/d.json" ] || fail "a run with a dead rank wrote d.json"
  [ ! -e "$tmp/w/d.json.journal.jsonl" ] || [ "$(journal_points "$tmp/w/d.json.journal.jsonl")" -le 1 ] ||
    fail "the journal holds more than the finished point"
  ;;
calibrate)
  run - 4 "$calibrate" --backend sim --config "$src/configs/calibrate/quick.json" --bootstrap 50 --no-progress \
    --out c4.json
  expect_rc 0; expect_count 1 "(.* points, 4 ranks); wrote c4.json" "$tmp/logs/out"; expect_files "c4.json "
  grep -q '"R_Bps"' "$tmp/w/c4.json" || fail "c4.json has no fitted R"
  grep -q '"num_ranks": *4' "$tmp/w/c4.json" || fail "c4.json has no meta.launch.num_ranks 4"
  ;;
*) echo "usage: $0 <merge|resume|failed|calibrate> <mpirun> <xstage-bench> <xstage-calibrate> <check> <src>"; exit 2 ;;
esac
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all $mode checks passed"

#!/bin/sh
# CTest scripts.mpi_setup.* (issue 31): CI must not pass without the MPI build.
#   test   scripts/test.sh (reached through .ci/run, as CI runs it) with no OpenMPI on PATH: exit 1 before building,
#          naming libopenmpi-dev, openmpi-bin and XS_ALLOW_NO_MPI; with XS_ALLOW_NO_MPI=1 (true, yes, on) it builds
#          with -DXS_WITH_MPI=OFF, says so, and does not ask setup.sh for OpenMPI; another value is exit 2 before
#          setup; with mpicxx and mpirun on PATH it builds with -DXS_WITH_MPI=ON.
#          setup.sh and build.sh are stand-ins in a copy of the scripts (they record their arguments).
#   setup  scripts/setup.sh XS_WITH_MPI=1 on a PATH without OpenMPI and with a stand-in apt-get (and sudo) that
#          knows no package until `apt-get update`: it updates, then installs libopenmpi-dev openmpi-bin with -y
#          and DEBIAN_FRONTEND=noninteractive, and mpicxx/mpirun are then there; an apt-get that installs nothing
#          leaves a note naming OpenMPI and XS_ALLOW_NO_MPI, with apt's own last lines. A python3 first on PATH
#          outside /usr/bin (a venv) without matplotlib gets it through its own pip, not apt (issue 31).
# Usage: mpi_setup_test.sh <test|setup> <source dir>. Exit 0 when every check passed.
mode=$1 src=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
has() { grep -q -- "$1" "$2" || fail "'$1' not in $(basename "$2"): $(cat "$2")"; }

# A PATH without OpenMPI: every program on the caller's PATH except mpi*, linked into one folder (first name wins).
# The system python3 first where there is one: setup.sh then asks the stand-in apt-get for matplotlib, not pip.
bin="$tmp/bin"
mkdir "$bin"
[ -x /usr/bin/python3 ] && ln -s /usr/bin/python3 "$bin/python3"
old_ifs=$IFS; IFS=:
for dir in $PATH; do
  [ -d "$dir" ] || continue
  for f in "$dir"/*; do
    name=${f##*/}
    case $name in mpi*|orte*|ompi*|sudo|apt-get) continue ;; esac
    [ -x "$f" ] && [ ! -e "$bin/$name" ] && ln -s "$f" "$bin/$name"
  done
done
IFS=$old_ifs
fake_mpi() { for t in mpicxx mpirun; do printf '#!/bin/sh\nexit 0\n' >"$bin/$t"; chmod +x "$bin/$t"; done; }

case $mode in
test)
  repo="$tmp/repo"
  mkdir -p "$repo/scripts" "$repo/.ci"
  cp "$src/scripts/test.sh" "$repo/scripts/test.sh"
  cp "$src/.ci/run" "$repo/.ci/run"
  printf '#!/usr/bin/env bash\necho "$XS_WITH_MPI" >"%s/setup-args"\n' "$tmp" >"$repo/scripts/setup.sh"
  # build.sh stops test.sh right after the choice (exit 42), so nothing else runs.
  printf '#!/usr/bin/env bash\necho "$@" >"%s/build-args"\nexit 42\n' "$tmp" >"$repo/scripts/build.sh"
  chmod +x "$repo/scripts/"*.sh "$repo/.ci/run"
  run() {  # run <env...>: .ci/run in the copy, without OpenMPI unless fake_mpi ran; exit code in $rc
    rm -f "$tmp/build-args" "$tmp/setup-args"
    env -u XS_ALLOW_NO_MPI PATH="$bin" "$@" bash "$repo/.ci/run" >"$tmp/out" 2>"$tmp/err"; rc=$?
    echo "\$ $* .ci/run -> exit $rc"; sed 's/^/  /' "$tmp/out" "$tmp/err"
  }
  run CI=true
  [ "$rc" -eq 1 ] || fail "no OpenMPI in CI: exit $rc, expected 1"
  has "^1$" "$tmp/setup-args"  # XS_WITH_MPI=1
  has "test: error: OpenMPI is missing" "$tmp/err"
  has "libopenmpi-dev and openmpi-bin" "$tmp/err"
  has "XS_ALLOW_NO_MPI=1" "$tmp/err"
  [ ! -e "$tmp/build-args" ] || fail "built without OpenMPI: $(cat "$tmp/build-args")"
  run XS_ALLOW_NO_MPI=0
  [ "$rc" -eq 1 ] || fail "XS_ALLOW_NO_MPI=0: exit $rc, expected 1"
  [ ! -e "$tmp/build-args" ] || fail "XS_ALLOW_NO_MPI=0 built"
  run XS_ALLOW_NO_MPI=1
  [ "$rc" -eq 42 ] || fail "XS_ALLOW_NO_MPI=1: exit $rc, expected build.sh's 42"
  has "^-DXS_WITH_MPI=OFF$" "$tmp/build-args"
  has "^0$" "$tmp/setup-args"  # allowed to be missing: setup.sh is not asked to install OpenMPI
  has "XS_ALLOW_NO_MPI=1: building without MPI" "$tmp/out"
  for value in true yes on TRUE On; do
    run XS_ALLOW_NO_MPI=$value
    [ "$rc" -eq 42 ] || fail "XS_ALLOW_NO_MPI=$value: exit $rc, expected build.sh's 42"
    has "^-DXS_WITH_MPI=OFF$" "$tmp/build-args"
  done
  for value in false no off; do
    run XS_ALLOW_NO_MPI=$value
    [ "$rc" -eq 1 ] || fail "XS_ALLOW_NO_MPI=$value: exit $rc, expected 1"
    [ ! -e "$tmp/build-args" ] || fail "XS_ALLOW_NO_MPI=$value built"
  done
  # A value that is neither: exit 2 before set-up, naming the accepted values.
  run XS_ALLOW_NO_MPI=maybe
  [ "$rc" -eq 2 ] || fail "XS_ALLOW_NO_MPI=maybe: exit $rc, expected 2"
  has "XS_ALLOW_NO_MPI='maybe': expected 1, true, yes or on" "$tmp/err"
  [ ! -e "$tmp/setup-args" ] || fail "XS_ALLOW_NO_MPI=maybe ran setup.sh"
  [ ! -e "$tmp/build-args" ] || fail "XS_ALLOW_NO_MPI=maybe built"
  fake_mpi
  run CI=true
  [ "$rc" -eq 42 ] || fail "with OpenMPI: exit $rc, expected build.sh's 42"
  has "^-DXS_WITH_MPI=ON$" "$tmp/build-args"
  ;;
setup)
  state="$tmp/apt" && mkdir "$state"
  # apt-get: logs "<DEBIAN_FRONTEND> <args>"; knows no package before `update` (a fresh machine's empty lists);
  # then installs OpenMPI (as stand-ins) when $state/works exists, and nothing else.
  cat >"$bin/apt-get" <<EOF
#!/bin/sh
echo "\${DEBIAN_FRONTEND:-unset} \$*" >>"$state/log"
case " \$* " in *" update "*) touch "$state/updated"; exit 0 ;; esac
[ -e "$state/updated" ] || { echo "E: Unable to locate package \$*" >&2; exit 100; }
case " \$* " in
*" libopenmpi-dev openmpi-bin "*)
  if [ -e "$state/works" ]; then
    for t in mpicxx mpirun; do printf '#!/bin/sh\nexit 0\n' >"$bin/\$t"; chmod +x "$bin/\$t"; done; exit 0
  fi ;;
esac
echo "E: Package 'x' has no installation candidate (stand-in)" >&2
exit 100
EOF
  printf '#!/bin/sh\n[ "$1" = -n ] && shift\nexec "$@"\n' >"$bin/sudo"  # where the test does not run as root
  chmod +x "$bin/apt-get" "$bin/sudo"
  run() {
    rm -f "$state/log" "$state/updated"
    env PATH="$bin" XS_WITH_MPI=1 XS_WITH_FUZZ=0 bash "$src/scripts/setup.sh" >"$tmp/out" 2>"$tmp/err"; rc=$?
    echo "\$ XS_WITH_MPI=1 setup.sh -> exit $rc"; sed 's/^/  /' "$tmp/out" "$tmp/err"; echo "  apt-get calls:"
    sed 's/^/    /' "$state/log" 2>/dev/null
  }
  touch "$state/works"
  run
  [ "$rc" -eq 0 ] || fail "setup with a working apt: exit $rc, expected 0"
  grep -n "install.*libopenmpi-dev openmpi-bin" "$state/log" | tail -n 1 | grep -q "^[0-9]*:noninteractive -y -q install" ||
    fail "OpenMPI not installed with -y and DEBIAN_FRONTEND=noninteractive"
  update_line=$(grep -n " update" "$state/log" | head -n 1 | cut -d: -f1)
  install_line=$(grep -n "install.*libopenmpi-dev" "$state/log" | tail -n 1 | cut -d: -f1)
  [ -n "$update_line" ] && [ "$update_line" -lt "${install_line:-0}" ] || fail "no apt-get update before the install"
  ! grep -qv "^noninteractive " "$state/log" || fail "an apt-get call without DEBIAN_FRONTEND=noninteractive"
  [ -x "$bin/mpicxx" ] && [ -x "$bin/mpirun" ] || fail "mpicxx/mpirun not installed"
  grep -q "OpenMPI" "$tmp/err" && fail "a note about OpenMPI although it was installed"
  rm -f "$state/works" "$bin/mpicxx" "$bin/mpirun"
  run
  [ "$rc" -eq 0 ] || fail "setup with OpenMPI uninstallable: exit $rc, expected 0 (it is test.sh that stops)"
  has "setup: note: OpenMPI (mpicxx, mpirun: Debian's libopenmpi-dev, openmpi-bin) unavailable" "$tmp/err"
  has "XS_ALLOW_NO_MPI=1" "$tmp/err"
  has "apt-get could not install libopenmpi-dev openmpi-bin; its last lines:" "$tmp/err"
  has "no installation candidate (stand-in)" "$tmp/err"
  # Issue 31: the plots' matplotlib goes to the python3 first on PATH. One outside /usr/bin (a venv) without it gets
  # it through its own pip, not apt's python3-matplotlib (which serves only the system interpreter).
  rm -f "$bin/python3"
  cat >"$bin/python3" <<EOF
#!/bin/sh
echo "\$*" >>"$state/python"
case "\$*" in
*"import matplotlib"*) [ -e "$state/mpl" ] ;;
*"-m pip --version"*) exit 0 ;;
*"-m pip install"*) touch "$state/mpl" ;;
*) exit 0 ;;
esac
EOF
  chmod +x "$bin/python3"
  run
  [ "$rc" -eq 0 ] || fail "setup with a venv python3 first on PATH: exit $rc, expected 0"
  has "^-m pip install --quiet matplotlib$" "$state/python"
  grep -q "python3-matplotlib" "$state/log" && fail "apt asked for python3-matplotlib for a python3 outside /usr/bin"
  grep -q "matplotlib missing" "$tmp/err" && fail "a note about matplotlib although the venv's pip installed it"
  ;;
*) echo "usage: $0 <test|setup> <source dir>"; exit 2 ;;
esac
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all mpi_setup $mode checks passed"

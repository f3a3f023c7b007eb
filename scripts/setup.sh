#!/usr/bin/env bash
# Checks what xstage needs to build and test, the way the build finds it (tools on PATH, libraries through
# CMake's find_package), and installs only what is truly missing, with apt-get, only where apt works.
# On machines without network (the GPU node) every dependency must already be present: then nothing is
# installed, and a missing one is named. XS_WITH_FUZZ=1 also wants clang++ with libFuzzer (for
# scripts/fuzz.sh); it is optional: where it cannot be installed the fuzz run is skipped. XS_WITH_MPI=1 also
# wants OpenMPI (mpicxx, mpirun: Debian's libopenmpi-dev and openmpi-bin) for the -DXS_WITH_MPI=ON build and the
# mpirun tests: scripts/test.sh stops without it unless XS_ALLOW_NO_MPI=1; setup.sh itself only says so.
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }

# Libraries, as CMakeLists.txt asks for them: "<find_package name>:<Debian package>".
cmake_packages=("fmt:libfmt-dev" "nlohmann_json 3.10:nlohmann-json3-dev" "CLI11:libcli11-dev" "GTest:libgtest-dev"
                "benchmark:libbenchmark-dev")

# Prints the Debian packages of the libraries CMake cannot find (all of them if the probe cannot run).
missing_cmake_packages() {
  local probe
  probe=$(mktemp -d)
  {
    echo 'cmake_minimum_required(VERSION 3.25)'
    echo 'project(xs_setup_probe LANGUAGES CXX)'
    local name
    for entry in "${cmake_packages[@]}"; do
      name=${entry%%:*}
      echo "find_package($name QUIET)"
      echo "if(NOT ${name%% *}_FOUND)"
      echo "  file(APPEND \"\${CMAKE_BINARY_DIR}/missing.txt\" \"${entry#*:}\\n\")"
      echo 'endif()'
    done
  } >"$probe/CMakeLists.txt"
  local gen=()
  if have ninja; then gen=(-G Ninja); elif have make; then gen=(-G "Unix Makefiles"); fi
  if cmake -S "$probe" -B "$probe/build" "${gen[@]}" >"$probe/log" 2>&1; then
    [[ -f "$probe/build/missing.txt" ]] && cat "$probe/build/missing.txt"
  else
    # No working C++ compiler or generator: the libraries cannot be judged; name them all.
    { echo "setup: the CMake probe of the libraries failed:"; tail -n 15 "$probe/log"; } >&2
    for entry in "${cmake_packages[@]}"; do echo "${entry#*:}"; done
  fi
  rm -rf "$probe"
}

# clang++ that can link a libFuzzer target with ASan + UBSan, as scripts/fuzz.sh builds them.
fuzzer_links() {
  have clang++ || return 1
  local dir rc=0
  dir=$(mktemp -d)
  printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' >"$dir/f.cpp"
  clang++ -fsanitize=fuzzer,address,undefined "$dir/f.cpp" -o "$dir/f" >/dev/null 2>&1 || rc=1
  rm -rf "$dir"
  return $rc
}

SUDO=""
if [[ $(id -u) -ne 0 ]] && have sudo; then SUDO="sudo -n"; fi
# apt-get that never asks (CI has no terminal and no stdin): DEBIAN_FRONTEND goes through env, since sudo drops
# the caller's environment.
apt_get() { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -y -q "$@" </dev/null; }
apt_install() {  # true if apt-get installed every package given; on failure apt's last lines go to stderr
  have apt-get || return 1
  [[ $(id -u) -eq 0 || -n "$SUDO" ]] || return 1
  echo "setup: installing $*"
  local log
  log=$(mktemp)
  # The package lists first where there are none yet (a fresh machine); otherwise try the ones there, then
  # update and try again. Without network apt-get update can hang on DNS; bound it.
  if ! apt_get install --no-install-recommends "$@" >"$log" 2>&1 &&
     ! { timeout 300 $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -q update </dev/null &&
         apt_get install --no-install-recommends "$@"; } >"$log" 2>&1; then
    { echo "setup: apt-get could not install $*; its last lines:"; tail -n 5 "$log" | sed 's/^/  /'; } >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# 1. Tools: cmake, a C++ compiler (what CMake will pick: $CXX, else c++/g++/clang++), a build tool.
missing=()
have cmake || missing+=(cmake)
if [[ -n "${CXX:-}" ]]; then
  have "${CXX%% *}" || missing+=(g++)
elif ! have c++ && ! have g++ && ! have clang++; then
  missing+=(g++)
fi
have ninja || have make || missing+=(make)
if [[ ${#missing[@]} -gt 0 ]] && ! apt_install "${missing[@]}"; then
  echo "setup: missing ${missing[*]} (not on PATH=$PATH) and apt-get could not install them" >&2
  exit 1
fi

# 2. Libraries, found (or not) by CMake itself.
mapfile -t missing < <(missing_cmake_packages)
if [[ ${#missing[@]} -gt 0 ]]; then
  if ! apt_install "${missing[@]}"; then
    echo "setup: CMake cannot find the packages of ${missing[*]} and apt-get could not install them" >&2
    echo "setup: (on a machine without network, install them or point CMAKE_PREFIX_PATH at them)" >&2
    exit 1
  fi
  mapfile -t missing < <(missing_cmake_packages)
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "setup: installed, yet CMake still cannot find ${missing[*]}" >&2
    exit 1
  fi
fi

# 3. Optional: matplotlib for the plots (the python3 on PATH, as calibrate.sh uses), libFuzzer for fuzz.sh.
notes=()
python=$(command -v python3 || true)
if [[ -z "$python" ]] || ! "$python" -c 'import matplotlib' >/dev/null 2>&1; then
  # apt's python3-matplotlib serves only the system interpreter; another python3 first on PATH (a venv,
  # pyenv), the one the plot scripts run with, gets its own through its pip.
  if [[ -z "$python" || "$(readlink -f "$python")" == /usr/bin/python3* ]]; then
    apt_install python3-matplotlib || true
    python=$(command -v python3 || true)
  elif "$python" -m pip --version >/dev/null 2>&1; then
    "$python" -m pip install --quiet matplotlib || true
  fi
  if [[ -z "$python" ]]; then
    notes+=("no python3 on PATH: plots will be skipped")
  elif ! "$python" -c 'import matplotlib' >/dev/null 2>&1; then
    notes+=("matplotlib missing for $python: plots will be skipped ($python -m pip install matplotlib)")
  fi
fi
if [[ "${XS_WITH_FUZZ:-0}" == "1" ]] && ! fuzzer_links; then
  have clang++ || apt_install clang || true
  if have clang++ && ! fuzzer_links; then
    major=$(clang++ -dumpversion 2>/dev/null | cut -d. -f1)
    apt_install "libclang-rt-${major:-14}-dev" || true
  fi
  fuzzer_links || notes+=("clang++ with libFuzzer unavailable: the fuzz run will be skipped")
fi

if [[ "${XS_WITH_MPI:-0}" == "1" ]] && ! { have mpicxx && have mpirun; }; then
  apt_install libopenmpi-dev openmpi-bin || true
  { have mpicxx && have mpirun; } ||
    notes+=("OpenMPI (mpicxx, mpirun: Debian's libopenmpi-dev, openmpi-bin) unavailable: scripts/test.sh stops \
unless XS_ALLOW_NO_MPI=1, which builds without -DXS_WITH_MPI=ON")
fi

if [[ ${#notes[@]} -eq 0 ]]; then
  echo "setup: all dependencies present"
else
  echo "setup: required dependencies present"
  for n in "${notes[@]}"; do echo "setup: note: $n" >&2; done
fi

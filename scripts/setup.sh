#!/usr/bin/env bash
# Installs what xstage needs to build and test (Debian/Ubuntu packages), only what is missing; idempotent.
# On machines without network (the GPU node) every dependency must already be present: then nothing is
# installed and a missing one is named.
set -euo pipefail

# package : a file that proves it is present (headers may come from another install than dpkg's)
deps=(
  "cmake:/usr/bin/cmake"
  "g++:/usr/bin/g++"
  "make:/usr/bin/make"
  "libcli11-dev:/usr/include/CLI/CLI.hpp"
  "nlohmann-json3-dev:/usr/include/nlohmann/json.hpp"
  "libfmt-dev:/usr/include/fmt/format.h"
  "libbenchmark-dev:/usr/include/benchmark/benchmark.h"
  "libgtest-dev:/usr/include/gtest/gtest.h"
  "python3-matplotlib:python3-matplotlib"
)
if [[ "${XS_WITH_FUZZ:-0}" == "1" ]]; then
  deps+=("clang:/usr/bin/clang++" "libclang-rt-14-dev:libclang-rt-14-dev")
fi

missing=()
for entry in "${deps[@]}"; do
  pkg="${entry%%:*}"
  probe="${entry#*:}"
  if [[ "$probe" == /* ]]; then
    [[ -e "$probe" ]] && continue
  elif [[ "$probe" == python3-matplotlib ]]; then
    python3 -c 'import matplotlib' 2>/dev/null && continue
  else
    dpkg -s "$probe" >/dev/null 2>&1 && continue
  fi
  missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all dependencies present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
       { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"; }; }; then
  # matplotlib only serves the plots; everything else is required.
  required=()
  for m in "${missing[@]}"; do [[ "$m" == python3-matplotlib ]] || required+=("$m"); done
  if [[ ${#required[@]} -gt 0 ]]; then
    echo "setup: could not install ${required[*]} (no network or no apt?)" >&2
    exit 1
  fi
  echo "setup: python3-matplotlib unavailable: plots will be skipped" >&2
fi
echo "setup: done"

#!/bin/sh
# The tracked tree must fit what a device call carries (64 MiB of the working tree: docs/device-scripts.md). The
# device tool's own count is not documented beyond that: on 2026-12-07 a tree of 62.79 MiB (the sum of the tracked
# files' sizes) travelled and one of 62.92 MiB was refused. Limit here: 60 MiB of tracked file sizes, leaving room for
# a call's carried paths. A commit that crosses it locks every later session out of the GPU: pack or compact first
# (results/h200/archive/INDEX.md says how that was done before).
# Usage: device_carry_size_test.sh REPO_ROOT
set -eu
cd "$1"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "device_carry_size: not a git work tree (nothing to measure): skipped"; exit 77
fi
limit=$((60 * 1024 * 1024))
total=$(git ls-files -z | xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
mib=$(awk -v t="$total" 'BEGIN { printf "%.2f", t / 1048576 }')
if [ "$total" -gt "$limit" ]; then
  echo "device_carry_size: the tracked tree takes $mib MiB, over the 60 MiB limit (a device call carries 64 MiB);"
  echo "device_carry_size: the largest tracked files:"
  git ls-files -z | xargs -0 stat -c '%s %n' | sort -n | tail -10
  exit 1
fi
echo "device_carry_size: $mib MiB of 60 MiB"

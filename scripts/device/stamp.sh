#!/usr/bin/env bash
# Run here before a device call: records the commit and dirty flag for the copy that travels without .git
# (cmake/xstage_version.cmake reads it; pass carry=[".xs-git-sha"] to the device tool).
cd "$(dirname "$0")/../.." || exit 1
dirty=false
[[ -n "$(git status --porcelain --untracked-files=no -- . ":(exclude)results")" ]] && dirty=true
echo "$(git rev-parse HEAD) $dirty" > .xs-git-sha
cat .xs-git-sha

#!/usr/bin/env bash
# Installs the coding tools' real CLIs (pinned) into a cache outside the repository, for the
# adapters' end-to-end tests. They are 200-400 MB each, so they are not devDependencies; a second
# run with the same versions does nothing. Prints the cache's bin folder.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${CODING_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/signal-engine/coding-tools}"
mkdir -p "$dir"
if ! cmp -s "$here/package.json" "$dir/package.json" || [ ! -d "$dir/node_modules" ]; then
  cp "$here/package.json" "$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --no-package-lock --loglevel=error >&2)
fi
echo "$dir/node_modules/.bin"

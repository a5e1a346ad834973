#!/usr/bin/env bash
# Installs Schemathesis (PyPI, the version in requirements.txt) into a virtualenv in a cache
# outside the clone, once, and prints the path of its `st` command.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${SIGNAL_ENGINE_CACHE:-$HOME/.cache/signal-engine}/schemathesis"
want="$(cat "$here/requirements.txt")"
if [ ! -x "$cache/venv/bin/st" ] || [ "$(cat "$cache/installed" 2>/dev/null)" != "$want" ]; then
  rm -rf "$cache"
  mkdir -p "$cache"
  python3 -m venv "$cache/venv" >&2
  "$cache/venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
  echo "$want" > "$cache/installed"
fi
echo "$cache/venv/bin/st"

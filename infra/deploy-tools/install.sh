#!/usr/bin/env bash
# The tools that validate the deployment files (Dockerfile, docker-compose.yml, the Helm chart)
# without a container engine, installed once into a cache outside the clone; prints the folder
# that holds their commands:
#   docker-compose    Debian's docker-compose (1.29), for `docker-compose config`; apt-get installs
#                     it when missing (.ci/run does it with its other system packages)
#   helm              built from the Go module proxy (HELM_VERSION below)
#   dockerfile-check  BuildKit's Dockerfile checks (those of `docker build --check`), built from
#                     ./dockerfile-check (its go.mod pins BuildKit)
# Needs Go (the machines have it in /usr/local/go; Debian's golang-go is too old for Helm).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${SIGNAL_ENGINE_CACHE:-$HOME/.cache/signal-engine}/deploy-tools"
HELM_VERSION=v3.19.0

go="$(command -v go || true)"
[ -n "$go" ] || go=/usr/local/go/bin/go
if [ ! -x "$go" ]; then
  echo "deploy-tools: Go is needed to build helm and dockerfile-check (none on PATH nor in /usr/local/go)" >&2
  exit 1
fi

if ! command -v docker-compose >/dev/null; then
  echo "deploy-tools: installing Debian's docker-compose" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq docker-compose >&2
fi

want="helm $HELM_VERSION; dockerfile-check $(cat "$here/dockerfile-check/go.mod" "$here/dockerfile-check/go.sum" "$here/dockerfile-check/main.go" | sha256sum | cut -c1-16); $("$go" env GOVERSION)"
if [ ! -x "$cache/bin/helm" ] || [ ! -x "$cache/bin/dockerfile-check" ] || [ "$(cat "$cache/installed" 2>/dev/null)" != "$want" ]; then
  rm -rf "$cache"
  mkdir -p "$cache/bin"
  GOBIN="$cache/bin" GOFLAGS=-trimpath "$go" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
  (cd "$here/dockerfile-check" && GOFLAGS=-trimpath "$go" build -o "$cache/bin/dockerfile-check" .) >&2
  echo "$want" > "$cache/installed"
fi
ln -sf "$(command -v docker-compose)" "$cache/bin/docker-compose"
echo "$cache/bin"

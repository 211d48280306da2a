#!/usr/bin/env bash
# Installs every Debian package april needs (core, tests, benches, and the
# optional libtorch backend). Idempotent: packages already present are skipped,
# and apt-get update runs only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libboost-graph-dev libboost-program-options-dev
  libboost-mpi-dev openmpi-bin
  nlohmann-json3-dev libfmt-dev libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev libbenchmark-dev strace
  clang libclang-rt-14-dev clang-format
  libtorch-dev libopenblas0-pthread libcpp-httplib-dev
  python3-matplotlib python3-pandas jupyter-nbconvert python3-nbformat python3-ipykernel
  nodejs
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's nodejs comes without npm, which is its own package; a Node.js
# from elsewhere (NodeSource's) ships npm inside and conflicts with it.
if ! command -v npm >/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing npm"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
fi

# The openai SDK for Node.js that tests/clients/openai-node/check.mjs drives
# april serve with, from the npm registry at the version its lock file pins.
clients="$(cd "$(dirname "$0")/.." && pwd)/tests/clients/openai-node"
installed=$(node -p "try { require('$clients/node_modules/openai/package.json').version } catch { '' }")
pinned=$(node -p "require('$clients/package-lock.json').packages['node_modules/openai'].version")
if [ "$installed" != "$pinned" ]; then
  echo "setup: npm ci in tests/clients/openai-node"
  (cd "$clients" && npm ci --no-audit --no-fund --loglevel=error)
fi

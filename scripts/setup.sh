#!/usr/bin/env bash
# Installs what zero needs on a Debian 12 machine, and only what is missing.
# Idempotent: when everything is present it prints one line and changes nothing.
# Fails with a clear message when a package cannot be had.
set -euo pipefail

packages=(
  # Compiler side: LLVM/MLIR 22, as Debian ships them.
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # Build (lld-22: LLVM's linker, several times faster than GNU ld here).
  cmake ninja-build ccache g++ git lld-22
  # Tests.
  libgtest-dev python3
  # The mpi backend.
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get update -qq; then
  echo "setup: 'apt-get update' failed; cannot install ${missing[*]}" >&2
  exit 1
fi
for p in "${missing[@]}"; do
  if ! apt-cache show "$p" >/dev/null 2>&1; then
    echo "setup: package '$p' is not available from this machine's apt sources" >&2
    exit 1
  fi
done
if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/zero-setup-apt.log 2>&1; then
  tail -20 /tmp/zero-setup-apt.log >&2
  echo "setup: 'apt-get install ${missing[*]}' failed (log: /tmp/zero-setup-apt.log)" >&2
  exit 1
fi
echo "setup: installed ${#missing[@]} packages"

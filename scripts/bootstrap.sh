#!/usr/bin/env bash
# Installs the Debian 12 packages scalecast needs, only those missing, with apt (as root or via
# sudo). Safe to run repeatedly: with everything present it does nothing and needs no network.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libsimgrid-dev libyaml-cpp-dev libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libeigen3-dev libboost-graph-dev doctest-dev libprotobuf-dev protobuf-compiler
  libbenchmark-dev libsqlite3-dev python3 python3-matplotlib
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if (( ${#missing[@]} == 0 )); then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "bootstrap: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

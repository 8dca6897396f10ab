#!/usr/bin/env bash
# Installs the Debian packages stepscope needs. Idempotent; quiet when everything is present.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libopenmpi-dev openmpi-bin libopenblas-dev
  libsimdjson-dev nlohmann-json3-dev libcli11-dev libfmt-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  dataset-fashion-mnist fortunes-min fortunes
  python3 python3-torch iproute2
  clang-14 libclang-rt-14-dev
  munge slurmd slurmctld slurm-client
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

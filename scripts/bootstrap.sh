#!/usr/bin/env bash
# Installs every Debian package normlab needs; skips packages already installed.
# Run as root, or as a user with sudo.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git clang-format
  clang libfuzzer-14-dev libomp-14-dev
  libgtest-dev libgmock-dev
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libfmt-dev
  libsqlite3-dev sqlite3 libopenblas-dev zlib1g-dev
  libopenmpi-dev openmpi-bin
  gnuplot-nox
  python3 python3-dev python3-numpy python3-torch
  pybind11-dev python3-pytest python3-pandas python3-matplotlib
  fortunes
  chromium  # used only by the report test (tests/report/report_chromium_test.cpp)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "bootstrap: installing ${missing[*]}"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Installs what is missing (Debian packages, through sudo when not root), builds normlab in
# Release, and runs the main job: experiments/quick.toml (about 15 seconds on 2 cores), which
# prints its summary table, writes results/quick/ (results.csv, summary.md) and last prints the
# path of results/quick/report.html, the whole study on one page (docs/report.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
jobs=$(getconf _NPROCESSORS_ONLN)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs" --target normlab normlab_python
build/normlab run experiments/quick.toml

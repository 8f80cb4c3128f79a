#!/usr/bin/env bash
# Wall time of the README's quick sweep (experiments/quick.toml, 9 runs) with one run at a time,
# with two (--jobs 2), and over two MPI ranks (mpirun -n 2: rank 0 and rank 1 train one run
# each), each into a fresh folder; prints the times and the speed-ups against one job. The
# issue-13 target on 2 cores: --jobs 2 and 2 ranks each at least 1.8x one job.
#
# Usage: bench/sweep_parallel.sh [ROUNDS]      (default 1). Needs build/normlab and mpirun.
# Other work on the machine distorts the figures: run it on idle cores.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-1}
BIN=$PWD/build/normlab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(getconf _NPROCESSORS_ONLN) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
seconds() {  # seconds NAME COMMAND...: wall time of COMMAND into $tmp/NAME
  local start end
  rm -rf "$tmp/$1"
  start=$(date +%s.%N)
  "${@:2}" --out "$tmp/$1" >"$tmp/$1.log" 2>&1 || { cat "$tmp/$1.log" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.2f}')"
}
for ((r = 1; r <= ROUNDS; r++)); do
  one=$(seconds one "$BIN" run experiments/quick.toml --jobs 1)
  two=$(seconds two "$BIN" run experiments/quick.toml --jobs 2)
  mpi=$(seconds mpi mpirun --allow-run-as-root -n 2 "$BIN" run experiments/quick.toml --jobs 1)
  python3 -c "print(f'round $r: 1 job {$one} s; --jobs 2 {$two} s ({$one / $two:.2f}x); mpirun -n 2 {$mpi} s ({$one / $mpi:.2f}x)')"
done

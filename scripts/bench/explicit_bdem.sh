#!/usr/bin/env bash
# Explicit bonded-DEM throughput: a ~20K-particle bonded block (inputs/bench/block_20k.json) for a fixed
# number of steps on 1 and 2 ranks. Prints particle-steps per second, the 2-rank parallel efficiency and
# the ratio to LAMMPS's granular reference, all measured in this one run, and appends a record of the run to
# docs/benchmarks/explicit_bdem.jsonl (scripts/bench/record.py; BENCH_RECORD=0 skips it).
# Usage: scripts/bench/explicit_bdem.sh [STEPS]     (default 400)
# Environment: SCENE (default inputs/bench/block_20k.json); BUILD_DIR (default build), built first unless
# PERCUSSION_BENCH_NO_BUILD=1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

steps="${1:-400}"
scene="${SCENE:-inputs/bench/block_20k.json}"
build_dir="${BUILD_DIR:-build}"
# LAMMPS granular/bonded-sphere reference throughput, particle-steps per second per core.
lammps_per_core=0.75e6

python="$(percussion_python)"
work="$(mktemp -d /tmp/percussion-bench.XXXXXX)"

if [[ "${PERCUSSION_BENCH_NO_BUILD:-0}" != 1 ]]; then
  echo "bench: building Release in $build_dir/ (log: $work/build.log)" >&2
  if ! percussion_build "$build_dir" Release >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log" >&2
    exit 1
  fi
fi

load_before="$(cat /proc/loadavg)"

for np in 1 2; do
  out="$work/np$np"
  echo "bench: $np rank(s), $steps steps -> $out" >&2
  status=0
  percussion_mpirun -np "$np" "$build_dir/percussion" run "$scene" --out "$out" --steps "$steps" --overwrite \
    >"$work/np$np.stdout" 2>&1 || status=$?
  if (( status != 0 )); then
    echo "bench: percussion failed on $np rank(s) with exit code $status:" >&2
    tail -n 30 "$work/np$np.stdout" >&2
    exit "$status"
  fi
done

"$python" - "$work/np1/summary.json" "$work/np2/summary.json" "$lammps_per_core" "$load_before" "$(nproc)" \
  "$work/figures.json" <<'EOF'
import json
import sys

paths, reference, load, cores = sys.argv[1:3], float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
figures_path = sys.argv[6]
runs = []
for path in paths:
    with open(path) as f:
        runs.append(json.load(f))

print(f"machine: {cores} cores, /proc/loadavg before the runs: {load}")
if float(load.split()[0]) > 0.5:
    print("warning: the machine was busy before the runs; rates below are pessimistic")
print(f"scene: {runs[0]['scene']}  ({runs[0]['method']}, {runs[0]['integrator']})")
print()
header = f"{'ranks':>5} {'particles':>9} {'bonds':>8} {'steps':>6} {'wall s':>8} {'M particle-steps/s':>18} " \
         f"{'per core':>10} {'efficiency':>10} {'vs LAMMPS':>9}"
print(header)
print("-" * len(header))
rate1 = runs[0]["particle_steps_per_second"]
for run in runs:
    rate = run["particle_steps_per_second"]
    per_core = run["particle_steps_per_second_per_core"]
    efficiency = rate / (run["ranks"] * rate1)
    print(f"{run['ranks']:>5} {run['particles']:>9} {run['bonds']:>8} {run['steps']:>6} {run['wall_seconds']:>8.2f} "
          f"{rate / 1e6:>18.3f} {per_core / 1e6:>10.3f} {efficiency:>10.2f} {per_core / reference:>9.3f}")
print()
for run in runs:
    phases = sorted(run["phases"].items(), key=lambda kv: -kv[1]["percent"])
    text = ", ".join(f"{name} {p['percent']:.0f}%" for name, p in phases[:5])
    print(f"{run['ranks']} rank(s), largest phases: {text}")
print()
rate2 = runs[1]["particle_steps_per_second"]
print(f"parallel efficiency 2 ranks vs 1: {rate2 / (2 * rate1):.2f}   (rate2 / (2 rate1))")
print(f"per-core throughput vs LAMMPS ({reference / 1e6:.2f} M particle-steps/s/core): "
      f"{runs[0]['particle_steps_per_second_per_core'] / reference:.3f} on 1 rank, "
      f"{runs[1]['particle_steps_per_second_per_core'] / reference:.3f} on 2 ranks")
for run in runs:
    print(f"{run['ranks']} rank(s): exit '{run['exit']}', {run['final']['bonds_broken']} bonds broken, "
          f"{run['final']['contacts']} contacts, total energy {run['final']['total']:.6g} J")
    if run["final"]["bonds_broken"] != 0:
        print("warning: bonds broke; the block is meant to stay intact, so this is not the intended workload")
figures = {"scene": runs[0]["scene"], "particles": runs[0]["particles"], "bonds": runs[0]["bonds"],
           "steps": runs[0]["steps"], "lammps_reference_per_core": reference, "runs": [
               {"ranks": run["ranks"], "wall_seconds": run["wall_seconds"], "loop_seconds": run.get("loop_seconds"),
                "particle_steps_per_second": run["particle_steps_per_second"],
                "particle_steps_per_second_per_core": run["particle_steps_per_second_per_core"],
                "efficiency": run["particle_steps_per_second"] / (run["ranks"] * rate1),
                "vs_lammps": run["particle_steps_per_second_per_core"] / reference,
                "bonds_broken": run["final"]["bonds_broken"]} for run in runs]}
with open(figures_path, "w") as f:
    json.dump(figures, f)
EOF
"$python" "$root/scripts/bench/record.py" explicit_bdem "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" --env SCENE -- scripts/bench/explicit_bdem.sh "$steps"
echo "bench: outputs kept in $work" >&2

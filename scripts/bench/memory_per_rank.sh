#!/usr/bin/env bash
# Peak resident memory per rank: a bonded block of about 10^6 particles (generated here, not shipped) set up, 10
# explicit steps, a checkpoint, a restart and 10 more steps, at 1, 2 and 4 ranks (oversubscribed: this measures
# memory, not time); then a weak series of about 250K particles per rank at 1, 2, 4 ranks. Prints every rank's peak
# (the larger of the run and its restart, from /usr/bin/time) and the set-up time (wall minus time loop).
#   scripts/bench/memory_per_rank.sh [BINARY] [OLD_BINARY]
# With OLD_BINARY, the strong series also runs it at 1 and 4 ranks, for the figures beside. Environment: PARTICLES
# (default 1000000), PER_RANK (default 250000), RANKS (default "1 2 4"). Writes docs/benchmarks/memory_per_rank.jsonl.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PERCUSSION_SKIP_INSTALL=${PERCUSSION_SKIP_INSTALL:-0} source "$root/scripts/setup.sh"
binary="$(realpath "${1:-$root/build/percussion}")"
old="${2:+$(realpath "$2")}"
particles=${PARTICLES:-1000000} per_rank=${PER_RANK:-250000} ranks=${RANKS:-"1 2 4"}
python="$(percussion_python)"
work="$(mktemp -d /tmp/percussion-memory-bench.XXXXXX)"
[[ "${KEEP:-0}" == 1 ]] || trap 'rm -rf "$work"' EXIT
load_before="$(cat /proc/loadavg)"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {print $2 / 1048576 " GiB"}' /proc/meminfo), load before: $load_before"

# scene NAME N: a bonded HCP box of about N particles of radius 5 mm (HCP holds 1/(4 sqrt2 r^3) per m^3), falling.
scene() {
  "$python" - "$work/$1.json" "$2" <<'PY'
import json, math, sys
path, n = sys.argv[1], int(sys.argv[2])
r = 0.005
volume = n * 4 * math.sqrt(2) * r ** 3
side = (volume / 0.5) ** (1 / 3)  # a slab 1 x 1 x 0.5 in proportion
json.dump({
    "method": "bdem", "integrator": "explicit", "gravity": [0, 0, -9.81],
    "materials": [{"name": "rock", "density": 2500, "youngs_modulus": 1e8, "poisson_ratio": 0.25,
                   "tensile_strength": 1e6, "shear_strength": 1e6}],
    "bodies": [{"material": "rock", "particle_radius": r,
                "shape": {"type": "box", "min": [0, 0, 0.1], "max": [side, side, 0.1 + 0.5 * side]}}],
    "obstacles": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1]}],
    "time": {"end": 1.0, "step_factor": 0.2}, "output": {"frame_interval": 1.0},
}, open(path, "w"))
PY
}

# measure LABEL BINARY NP SCENE: run 10 steps, restart to 20; one line per rank "LABEL NP rank peak_kb" into peaks.
measure() {
  local label=$1 bin=$2 np=$3 sc=$4 out="$work/$1.$3"
  for phase in run restart; do
    local extra=(--steps 10)
    [[ $phase == restart ]] && extra=(--restart "$out" --steps 20)
    # Each rank under /usr/bin/time, writing its own file (Open MPI tells a rank its number in the environment).
    percussion_mpirun -np "$np" bash -c '/usr/bin/time -f "peak_kb %M" -o "$0.$OMPI_COMM_WORLD_RANK.time" "$@"' \
      "$out.$phase" "$bin" run "$sc" --out "$out" "${extra[@]}" > "$out.$phase.log" 2>&1 ||
      { echo "bench: $label on $np ranks failed ($phase; log $out.$phase.log)" >&2; trap - EXIT; exit 1; }
    cp "$out/summary.json" "$out.$phase.summary.json"
  done
  echo "$label $np $sc" >> "$work/runs"
}

scene strong "$particles"
for np in $ranks; do measure strong "$binary" "$np" "$work/strong.json"; done
if [[ -n "$old" ]]; then
  for np in 1 4; do measure old "$old" "$np" "$work/strong.json"; done
fi
for np in $ranks; do
  scene "weak$np" $((per_rank * np))
  measure "weak" "$binary" "$np" "$work/weak$np.json"
done

"$python" - "$work" "$work/figures.json" <<'PY'
import json, os, re, sys
work, figures_path = sys.argv[1], sys.argv[2]
rows = []
for line in open(f"{work}/runs"):
    label, np, sc = line.split()
    np = int(np)
    peaks = []
    for rank in range(np):
        kb = 0
        for phase in ("run", "restart"):
            path = f"{work}/{label}.{np}.{phase}.{rank}.time"
            text = open(path).read() if os.path.exists(path) else ""
            m = re.search(r"peak_kb (\d+)", text)
            kb = max(kb, int(m.group(1)) if m else 0)
        peaks.append(kb * 1024)
    s = json.load(open(f"{work}/{label}.{np}.run.summary.json"))
    n = s.get("particles", 0)
    setup = s["wall_seconds"] - s["loop_seconds"]
    rows.append({"series": label, "ranks": np, "particles": n, "peak_bytes": peaks, "setup_seconds": setup})
one = {r["series"]: max(r["peak_bytes"]) for r in rows if r["ranks"] == 1}
print(f"{'series':8s} {'ranks':>5s} {'particles':>10s} {'set-up s':>9s}  peak MiB per rank (share of the 1-rank peak)")
for r in rows:
    base = one.get(r["series"], 0)
    shares = " ".join(f"{p / 2**20:8.0f} ({p / base:4.0%})" if base else f"{p / 2**20:8.0f}" for p in r["peak_bytes"])
    print(f"{r['series']:8s} {r['ranks']:5d} {r['particles']:10d} {r['setup_seconds']:9.2f}  {shares}")
json.dump({"rows": rows}, open(figures_path, "w"))
PY
"$python" "$root/scripts/bench/record.py" memory_per_rank "$work/figures.json" --load "$load_before" \
  --build-dir "$(dirname "$binary")" --env PARTICLES PER_RANK RANKS -- scripts/bench/memory_per_rank.sh "$@"

#!/usr/bin/env bash
# The implicit solver's single-precision kernels against PETSc's double-precision ones, in one run: the same
# scene and steps six times (1 rank) with
#   default        the scene's preconditioner (IC(0), or D-ILU where its petsc_options say so), single-precision
#                  blocks and product, through the AVX2 kernels where the CPU has them
#   portable       the same through the portable Eigen kernels                 (PERCUSSION_AVX2=0)
#   icc            IC(0) blocks (the factor read as halves) and single-precision product, PETSc's CG
#                                                                  (-bdem_pc_type percussion_icc_sp -bdem_ksp_type cg)
#   float_factor   the same with the factor read as floats         (... -bdem_half_precision_factor 0)
#   double_product single-precision IC(0), PETSc's product        (-bdem_pc_type percussion_icc_sp
#                                                                   -bdem_single_precision_product 0)
#   petsc          PETSc's ICC(0) and product                      (-bdem_pc_type bjacobi ...)
# and prints, from -log_view, the seconds per matrix product and per preconditioner application (D-ILU's split
# operator counts as a product and has no application), the time loop, their ratios to "petsc", and the CG
# iterations and final energy of each (the kernels must not change them beyond float rounding).
# Usage: scripts/bench/single_precision_kernels.sh [SCENE.json [STEPS]]   (default: inputs/bdem/beam_twist.json 8)
# Environment: BUILD_DIR (default build), built first unless PERCUSSION_BENCH_NO_BUILD=1; KEEP=1 keeps the runs.
# Each run appends a record to docs/benchmarks/single_precision_kernels.jsonl (scripts/bench/record.py;
# BENCH_RECORD=0 skips it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

scene="${1:-inputs/bdem/beam_twist.json}"
steps="${2:-8}"
build_dir="${BUILD_DIR:-build}"
percussion="$build_dir/percussion"
python="$(percussion_python)"
if [[ ! -f "$scene" ]]; then
  echo "bench: scene $scene does not exist" >&2
  exit 2
fi
percussion_bench_start kernels "$build_dir"

# The implicit copy of the scene (a scene may default to explicit).
"$python" - "$scene" "$work/scene.json" <<'EOF'
import json, sys
with open(sys.argv[1]) as f:
    scene = json.load(f)
scene["integrator"] = "implicit"
with open(sys.argv[2], "w") as f:
    json.dump(scene, f)
EOF

load_before="$(cat /proc/loadavg)"
echo "machine: $(nproc) cores, /proc/loadavg before the runs: $load_before"
declare -A options=(
  [default]=""
  [portable]=""
  [icc]="-bdem_pc_type percussion_icc_sp -bdem_ksp_type cg"
  [float_factor]="-bdem_pc_type percussion_icc_sp -bdem_ksp_type cg -bdem_half_precision_factor 0"
  [double_product]="-bdem_pc_type percussion_icc_sp -bdem_single_precision_product 0"
  [petsc]="-bdem_pc_type bjacobi -bdem_sub_pc_type icc -bdem_single_precision_product 0"
)
for variant in default portable icc float_factor double_product petsc; do
  echo "bench: $variant" >&2
  avx2=1
  [[ "$variant" == portable ]] && avx2=0
  # shellcheck disable=SC2086  # the options are words
  PERCUSSION_AVX2=$avx2 "$percussion" run "$work/scene.json" --out "$work/$variant" --steps "$steps" --overwrite \
    ${options[$variant]} -log_view ":$work/$variant.log_view" >"$work/$variant.log" 2>&1 || {
    echo "bench: the $variant run failed; last lines of $work/$variant.log:" >&2
    tail -n 20 "$work/$variant.log" >&2
    trap - EXIT
    exit 1
  }
done

"$python" - "$work" "$scene" "$steps" <<'EOF'
import json, os, sys
work, scene, steps = sys.argv[1], sys.argv[2], sys.argv[3]

def event(log, name):
    """(count, seconds) of a -log_view event line."""
    with open(log) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] == name:
                return int(parts[1]), float(parts[3])
    return 0, 0.0

rows = {}
for v in ("default", "portable", "icc", "float_factor", "double_product", "petsc"):
    with open(os.path.join(work, v, "summary.json")) as f:
        s = json.load(f)
    log = os.path.join(work, v + ".log_view")
    rows[v] = dict(product=event(log, "MatMult"), apply=event(log, "PCApply"), loop=s["loop_seconds"],
                   cg=s["counters"]["krylov_iterations"], energy=s["final"]["total"])
print(f"{scene}, {steps} implicit steps, 1 rank")
print(f"{'variant':16}{'ms/product':>12}{'ms/PC apply':>13}{'loop s':>9}{'product x':>11}{'apply x':>9}{'loop x':>8}"
      f"{'CG its':>8}{'final energy':>22}")
base = rows["petsc"]
def per(ev):
    return 1e3 * ev[1] / max(1, ev[0])
def ratio(a, b):
    return f"{a / b:.2f}" if a > 0 and b > 0 else "-"
with open(scene) as f:
    split = "dilu" in json.load(f).get("implicit", {}).get("petsc_options", "")
for v, r in rows.items():
    if split and v in ("default", "portable"):  # CG on the split system: no preconditioner to apply
        r["apply"] = (0, 0.0)
    print(f"{v:16}{per(r['product']):12.2f}{per(r['apply']) if r['apply'][0] else float('nan'):13.2f}{r['loop']:9.2f}"
          f"{ratio(per(base['product']), per(r['product'])):>11}{ratio(per(base['apply']), per(r['apply'])):>9}"
          f"{base['loop'] / r['loop']:8.2f}{int(r['cg']):8d}{r['energy']:22.12g}")
print("x = the petsc row's time / this row's (above 1: faster than PETSc's double-precision kernels)")
print(f"AVX2 kernels: time loop {rows['portable']['loop'] / rows['default']['loop']:.2f}x the portable ones'")
print(f"IC(0) factor read as halves: {per(rows['float_factor']['apply']) / max(1e-12, per(rows['icc']['apply'])):.2f}x "
      f"faster applications than as floats")
figures = {"scene": scene, "steps": int(steps), "ranks": 1, "variants": {
    v: {"ms_per_product": per(r["product"]), "ms_per_pc_apply": per(r["apply"]) if r["apply"][0] else None,
        "loop_seconds": r["loop"], "krylov_iterations": int(r["cg"]), "final_energy": r["energy"]}
    for v, r in rows.items()},
    "avx2_loop_speedup": rows["portable"]["loop"] / rows["default"]["loop"],
    "loop_speedup_vs_petsc": base["loop"] / rows["default"]["loop"]}
with open(os.path.join(work, "figures.json"), "w") as f:
    json.dump(figures, f)
EOF
"$python" "$root/scripts/bench/record.py" single_precision_kernels "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" -- scripts/bench/single_precision_kernels.sh "$scene" "$steps"

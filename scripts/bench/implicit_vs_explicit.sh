#!/usr/bin/env bash
# Implicit vs explicit bonded DEM on the small paper scenes (notes 001 §6, tests T6 and T9): every
# inputs/bdem/*_small.json runs once with each integrator on 1 rank (RANKS=N: on N). Prints the time steps, wall
# seconds per simulated frame, the speed-up beside the paper's (Table 1), Newton and Krylov iteration counts, broken
# bonds, whether the fracture matched, and whether the issue's goal (the paper's speed-up with the explicit pieces) is
# met; then compares the "gradient" and "newton" optimisers on beam_drape_small.
# Usage: scripts/bench/implicit_vs_explicit.sh [SCENE.json ...]     (default: inputs/bdem/*_small.json)
# Environment: BUILD_DIR (default build) is configured and built first unless PERCUSSION_BENCH_NO_BUILD=1;
# KEEP=1 keeps the run directories (they are printed either way); WINDOW_STEPS=K runs both integrators over
# only the first K implicit steps of each scene (the paper-size scenes: their explicit runs take hours), still
# reporting seconds per frame of the scene's frame interval, e.g.
#   WINDOW_STEPS=8 scripts/bench/implicit_vs_explicit.sh inputs/bdem/{beam_stretch,beam_twist,chocolate_drop}.json
# FORM=backward_euler|midpoint|bdf2 runs the implicit copies in that implicit.form (default: each scene's own
# form; the "form" column says which ran).
# FRACTURE_ROUNDS=N runs them with implicit.fracture_rounds = N (a step's bonds broken in up to N rounds, each
# followed by a minimisation).
# FRACTURE_CUT_RATIO=R runs them with implicit.fracture_cut_ratio = R (steps that leave a bond over R times its
# strength are halved, within implicit.step_cuts).
# FRACTURE_INTEGRATOR=explicit runs them with implicit.fracture_integrator = "explicit" (an interval in which bonds
# would break is taken with explicit steps, and the EXPLICIT_WINDOW=K intervals after one that broke bonds, K
# the scene's implicit.explicit_window unless set).
# FRACTURE_TRANSIENT=W runs them with implicit.fracture_transient = W (after a step's check breaks bonds, the release
# is followed with explicit steps until no bond has broken for W critical steps; the state goes back to the step's).
# FRACTURE_TRANSIENT_REACH=R moves only the particles within R largest radii of the transient's breaks in its steps.
# The stretch, chocolate and plate ship with W = 2 (R = 3, the stretches 7); FRACTURE_TRANSIENT=0 runs
# them with the paper's check alone.
# CHECK=1 (the default without WINDOW_STEPS) also runs each scene that sets the transient with the paper's check alone
# and prints its speed-up, pieces and goal beside: both fracture treatments from one run's explicit references.
# STEP_FACTOR=F runs them with implicit.step_factor = F (steps of F critical steps T instead of the scene's; the
# scenes with a fixed time.step refuse it). WINDOW_STEPS still counts the scene's own implicit steps, so every
# STEP_FACTOR covers the same simulated window.
# REPEAT=N (default 1) runs the explicit and the implicit copy N times each, alternating, and takes each one's
# shortest time loop: on a shared machine another tenant's load moves single runs by 20-30 %.
# REPORT=DIR prints the table again from the run directories a KEEP=1 run left in DIR, running nothing.
# PLOTS=1 also draws each scene's explicit and implicit observables into DIR/<scene>.png (with KEEP=1 or REPORT=DIR:
# the run directories are removed otherwise).
# RANKS=N (default 1) runs every copy on N MPI ranks (mpirun --oversubscribe beyond the cores): the speed-up
# on a cluster node, with each integrator's own parallel overheads (halo exchanges; the Gauss-Seidel and D-ILU
# sweeps cross the ranks, so the Krylov iterations stay the 1-rank ones, while IC(0) is one block per rank).
# REFERENCE=1 (the default without WINDOW_STEPS) also runs each scene explicitly at half the explicit step, and
# prints how far the explicit broken-bond set itself moves when the step is halved: the overlap that
# implicit-vs-explicit can be expected to reach on that scene.
# Each run (not REPORT=DIR) appends a record to docs/benchmarks/implicit_vs_explicit.jsonl (scripts/bench/record.py;
# BENCH_RECORD=0 skips it); the report also writes its figures to DIR/figures.json.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

build_dir="${BUILD_DIR:-build}"
percussion="$build_dir/percussion"
python="$(percussion_python)"
# report WORK [REFERENCE STEM...]: the table from the run directories in WORK (stems and reference found there
# when not given).
report() {
  local work="$1" reference="${2:-}" stems=("${@:3}") n_opt=0 f
  if [[ -z "$reference" ]]; then
    reference=0
    for f in "$work"/*.explicit.json; do
      [[ -e "$f" ]] && stems+=("$(basename "$f" .explicit.json)")
    done
    [[ -n "$(compgen -G "$work/*.explicit_half.json")" ]] && reference=1
  fi
  [[ -f "$work/drape.gradient/summary.json" && -f "$work/drape.newton/summary.json" ]] && n_opt=2
  "$python" - "$work" "$reference" "$n_opt" "${stems[@]}" <<'EOF'
import json, os, sys
import h5py
import numpy as np

work, reference, n_opt, stems = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3]), sys.argv[4:]

def load(name):
    with open(os.path.join(work, name, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(work, name + ".json")) as f:
        scene = json.load(f)
    return summary, scene

def loop_seconds(summary):
    # wall of the time loop alone, without generation, partitioning and bonding
    return summary["loop_seconds"]

def shortest_loop(name, summary):
    # the first run and its REPEAT copies (name.r2, name.r3, ...): the shortest time loop
    seconds, r = [loop_seconds(summary)], 2
    while os.path.exists(os.path.join(work, f"{name}.r{r}", "summary.json")):
        with open(os.path.join(work, f"{name}.r{r}", "summary.json")) as f:
            seconds.append(loop_seconds(json.load(f)))
        r += 1
    return min(seconds), max(seconds), len(seconds)

def seconds_per_frame(seconds, summary, frame_interval):
    frames = summary["simulated_time"] / frame_interval
    return seconds / frames if frames > 0 else float("nan")

def fracture(name, frame_interval):
    """(bonds intact at the start, intact at the end, first-fracture frame or None), bonds as sorted id pairs."""
    with open_h5(name) as f:
        frames = sorted(f["frames"].keys())
        def bonds(key):
            return {tuple(sorted(map(int, b))) for b in f["frames"][key]["bonds"][:]}
        first, last = bonds(frames[0]), bonds(frames[-1])
        broken = f["observables"]["bonds_broken"][:]
        time = f["observables"]["time"][:]
        hits = [t for t, b in zip(time, broken) if b > 0]
        onset = round(hits[0] / frame_interval) if hits else None
    return first, last, onset

def jaccard(a, b):
    union = a | b
    return len(a & b) / len(union) if union else 1.0

def open_h5(name):
    return h5py.File(os.path.join(work, name, "trajectory.h5"), "r")

def fragments(name):
    """Fragment label of each particle (ordered by id) at the last frame: the components of the intact bonds."""
    with open_h5(name) as f:
        last = f["frames"][sorted(f["frames"].keys())[-1]]
        ids = last["id"][:].astype(np.int64)
        bonds = last["bonds"][:].astype(np.int64).reshape(-1, 2)
    ids.sort()
    a, b = np.searchsorted(ids, bonds[:, 0]), np.searchsorted(ids, bonds[:, 1])
    label = np.arange(len(ids))
    while True:  # each particle takes its bonded neighbours' smallest label, then labels jump to their roots
        new = label.copy()
        smaller = np.minimum(label[a], label[b])
        np.minimum.at(new, a, smaller)
        np.minimum.at(new, b, smaller)
        while not np.array_equal(new, new[new]):
            new = new[new]
        if np.array_equal(new, label):
            return ids, label
        label = new

def largest(label, k=3):
    return sorted(np.bincount(label)[np.unique(label)], reverse=True)[:k]

def piece_overlap(la, lb):
    """Mean over the particles of |P_a ∩ P_b| / |P_a ∪ P_b|, P_a and P_b the particle's fragments in the two runs:
    1 = the same pieces; a beam that broke into 3 pieces against one that did not, 0.7."""
    _, ka = np.unique(la, return_inverse=True)
    _, kb = np.unique(lb, return_inverse=True)
    _, joint, both = np.unique(ka.astype(np.int64) * (kb.max() + 1) + kb, return_inverse=True, return_counts=True)
    common = both[joint]
    return float(np.mean(common / (np.bincount(ka)[ka] + np.bincount(kb)[kb] - common)))

def fragment_agreement(name_a, name_b):
    ids_a, la = fragments(name_a)
    ids_b, lb = fragments(name_b)
    if not np.array_equal(ids_a, ids_b):
        sys.exit(f"bench: {name_a} and {name_b} hold different particles")
    return piece_overlap(la, lb), largest(la), largest(lb)

rows, spreads, ranks, checks = [], [], set(), {}
for stem in stems:
    ex, ex_scene = load(stem + ".explicit")
    im, im_scene = load(stem + ".implicit")
    ranks |= {ex["ranks"], im["ranks"]}
    interval = ex_scene["output"]["frame_interval"]
    sidecar = os.path.join(work, stem + ".explicit.json.frame")
    if os.path.exists(sidecar):  # WINDOW_STEPS: the scene's own frame interval
        with open(sidecar) as f:
            interval = float(f.read())
    first_e, last_e, onset_e = fracture(stem + ".explicit", interval)
    first_i, last_i, onset_i = fracture(stem + ".implicit", interval)
    if first_e != first_i:
        sys.exit(f"bench: {stem}: the explicit and implicit runs start from different bonds")
    broken_e, broken_i = first_e - last_e, first_i - last_i
    overlap = jaccard(broken_e, broken_i)
    self_overlap = self_pieces = float("nan")
    pov, pieces_e, pieces_i = fragment_agreement(stem + ".explicit", stem + ".implicit")
    if reference:  # the explicit run against itself at half the step
        first_h, last_h, _ = fracture(stem + ".explicit_half", interval)
        self_overlap = jaccard(broken_e, first_h - last_h)
        self_pieces = fragment_agreement(stem + ".explicit", stem + ".explicit_half")[0]
    if onset_e is None and onset_i is None:
        onset_ok, onset_text = True, "-/-"
    elif onset_e is None or onset_i is None:
        onset_ok, onset_text = False, f"{onset_e if onset_e is not None else '-'}/{onset_i if onset_i is not None else '-'}"
    else:
        onset_ok, onset_text = abs(onset_e - onset_i) <= 2, f"{onset_e}/{onset_i}"
    best_e, worst_e, runs = shortest_loop(stem + ".explicit", ex)
    best_i, worst_i, _ = shortest_loop(stem + ".implicit", im)
    if runs > 1:
        spreads.append(f"{stem}: {runs} runs each, time loop explicit {best_e:.3g}-{worst_e:.3g} s, "
                       f"implicit {best_i:.3g}-{worst_i:.3g} s")
    spf_e, spf_i = seconds_per_frame(best_e, ex, interval), seconds_per_frame(best_i, im, interval)
    c = im.get("counters", {})
    form_i = {"backward_euler": "BE", "midpoint": "mid", "bdf2": "BDF2"}.get(
        im_scene.get("implicit", {}).get("form", "backward_euler"), "?")
    rows.append((stem, form_i, ex["particles"], ex["time_step"], im["time_step"], spf_e, spf_i, spf_e / spf_i,
                 c.get("newton_per_step", float("nan")), c.get("krylov_per_newton", float("nan")),
                 len(broken_e), len(broken_i), overlap, self_overlap, onset_text, pov, self_pieces, pieces_e, pieces_i,
                 "yes" if overlap >= 0.95 and onset_ok else "no", int(c.get("unconverged_steps", 0)),
                 int(c.get("step_cuts", 0)), int(c.get("fracture_cuts", 0)), int(c.get("fracture_rounds", 0)),
                 int(c.get("transient_steps", 0))))
    if os.path.exists(os.path.join(work, stem + ".implicit_check", "summary.json")):
        ch, _ = load(stem + ".implicit_check")
        best_c, _, _ = shortest_loop(stem + ".implicit_check", ch)
        spf_c = seconds_per_frame(best_c, ch, interval)
        pov_c, _, pieces_c = fragment_agreement(stem + ".explicit", stem + ".implicit_check")
        checks[stem] = (spf_c, spf_e / spf_c, ch.get("counters", {}).get("newton_per_step", float("nan")), pov_c,
                        pieces_c)

print()
print("s/frame = wall seconds of the time loop / simulated frames (output.frame_interval), "
      f"{'/'.join(map(str, sorted(ranks)))} rank(s) each"
      + (" (the shortest of REPEAT runs)." if spreads else "."))
print("overlap = |broken_expl ∩ broken_impl| / |broken_expl ∪ broken_impl| (intact bonds of the last frames);")
print("onset = frame of the first broken bond, explicit/implicit; fracture matches when overlap >= 95% and")
print("the onsets are within 2 frames. expl½ = the same overlap between the explicit run and the explicit run at")
print("half its step (REFERENCE=1): where it is far below 100%, the broken-bond set is not converged in the step,")
print("and no integrator at a larger step can be expected to reproduce it bond for bond.")
print("pieces = the three largest fragments (components of the intact bonds at the end), explicit | implicit;")
print("piece ov = the mean over the particles of |P_e ∩ P_i| / |P_e ∪ P_i|, P_e and P_i a particle's fragment in the two")
print("runs (1 = the same pieces); piece½ = the same for the explicit run at half its step.")
print("paper = the speed-up the paper reports for the scene (Table 1; - where it has none); goal = the issue's aim,")
print("a speed-up at least the paper's with the explicit run's pieces (piece ov >= 0.9, or at least piece½).")
print()
header = (f"{'scene':<22} {'form':>4} {'particles':>9} {'dt expl':>9} {'dt impl':>9} {'s/frame e':>10} {'s/frame i':>10} "
          f"{'speed-up':>8} {'paper':>5} {'goal':>4} {'Newton/step':>11} {'Krylov/Newton':>13} {'broken e':>8} "
          f"{'broken i':>8} {'overlap':>7} {'expl½':>6} {'onset':>7} {'match':>5} {'piece ov':>8} {'piece½':>6}  pieces")
print(header)
print("-" * len(header))
def pct(x):
    return "-" if x != x else format(x, ".0%")

# Table 1's speed-ups (notes 001 §6), by the scene's name without _small; the small drape is the 64K one's copy.
PAPER = {"beam_stretch": 9.8, "beam_twist": 2.3, "beam_drape": 3.1, "beam_drape_64k": 3.1, "beam_drape_124k": 2.1,
         "chocolate_drop": 2.5, "plate_drop": 2.4, "cloth_tear": 3.3}
def meets_goal(up, paper, pov, spov):
    # the paper's speed-up with the explicit pieces: piece overlap 0.9, or at least the explicit run's own (piece½)
    return up >= paper and (pov >= 0.9 or (spov == spov and pov >= spov))
goals = {}  # by stem, the paper scenes only
for (stem, form_i, n, dte, dti, spe, spi, up, nps, kpn, be, bi, ov, sov, onset, pov, spov, pe, pi, match,
     unconverged, cuts, fcuts, rounds, transient) in rows:
    paper = PAPER.get(stem.removesuffix("_small"))
    goal = "-"
    if paper is not None:
        goals[stem] = meets_goal(up, paper, pov, spov)
        goal = "yes" if goals[stem] else "no"
    print(f"{stem:<22} {form_i:>4} {n:>9} {dte:>9.3g} {dti:>9.3g} {spe:>10.3g} {spi:>10.3g} {up:>8.2f} "
          f"{'-' if paper is None else format(paper, '.1f'):>5} {goal:>4} {nps:>11.2f} "
          f"{kpn:>13.1f} {be:>8} {bi:>8} {ov:>7.0%} {pct(sov):>6} {onset:>7} {match:>5} {pov:>8.2f} "
          f"{'-' if spov != spov else format(spov, '.2f'):>6}  {'/'.join(map(str, pe))} | {'/'.join(map(str, pi))}"
          + (f"   ({cuts} step cuts)" if cuts else "")
          + (f"   ({fcuts} fracture cuts)" if fcuts else "")
          + (f"   ({rounds} fracture rounds)" if rounds else "")
          + (f"   ({transient} transient steps)" if transient else "")
          + (f"   ({unconverged} implicit steps unconverged)" if unconverged else ""))

for line in spreads:
    print(line)
if goals:
    print(f"goal met on {sum(goals.values())} of {len(goals)} paper scenes")
if checks:  # CHECK=1: the scenes that set implicit.fracture_transient, again with the paper's check alone
    print()
    print("the same implicit runs with the paper's fracture check alone (implicit.fracture_transient 0; CHECK=0 skips):")
    print(f"{'scene':<22} {'s/frame i':>10} {'speed-up':>8} {'paper':>5} {'goal':>4} {'Newton/step':>11} "
          f"{'piece ov':>8}  pieces (implicit)")
    check_goals = dict(goals)  # a scene without the transient counts with its row above
    for row in rows:
        stem, spov = row[0], row[16]
        if stem not in checks:
            continue
        paper = PAPER.get(stem.removesuffix("_small"))
        spf_c, up_c, nps_c, pov_c, pieces_c = checks[stem]
        goal = "-"
        if paper is not None:
            check_goals[stem] = meets_goal(up_c, paper, pov_c, spov)
            goal = "yes" if check_goals[stem] else "no"
        print(f"{stem:<22} {spf_c:>10.3g} {up_c:>8.2f} {'-' if paper is None else format(paper, '.1f'):>5} "
              f"{goal:>4} {nps_c:>11.2f} {pov_c:>8.2f}  {'/'.join(map(str, pieces_c))}")
    if check_goals:
        print(f"goal met on {sum(check_goals.values())} of {len(check_goals)} paper scenes with the paper's check")

if n_opt:
    print()
    print("optimiser on beam_drape_small (implicit, same step):")
    for optimizer in ("gradient", "newton"):
        s, scene = load("drape." + optimizer)
        c = s.get("counters", {})
        print(f"  {optimizer:<8}: {int(c.get('newton_iterations', 0)):>6} iterations "
              f"({c.get('newton_per_step', float('nan')):.1f}/step, {int(c.get('unconverged_steps', 0))} of "
              f"{s['steps_run']} steps unconverged at max_iterations "
              f"{scene['implicit']['max_iterations']}), {loop_seconds(s):.1f} s, "
              f"final bonds broken {s['final']['bonds_broken']}, kinetic {s['final']['kinetic']:.4g} J")

def number(x):  # JSON has no NaN
    return None if x != x else x
figures = {"ranks": sorted(ranks), "repeat": int(os.environ.get("REPEAT", "1") or 1),
           "window_steps": int(os.environ.get("WINDOW_STEPS", "0") or 0), "reference": reference, "scenes": []}
for (stem, form_i, n, dte, dti, spe, spi, up, nps, kpn, be, bi, ov, sov, onset, pov, spov, pe, pi, match,
     unconverged, cuts, fcuts, rounds, transient) in rows:
    paper = PAPER.get(stem.removesuffix("_small"))
    figures["scenes"].append({
        "scene": stem, "form": form_i, "particles": n, "dt_explicit": dte, "dt_implicit": dti,
        "s_per_frame_explicit": spe, "s_per_frame_implicit": spi, "speed_up": up, "paper": paper,
        "goal": goals.get(stem), "newton_per_step": number(nps), "krylov_per_newton": number(kpn),
        "broken_explicit": be, "broken_implicit": bi, "bond_overlap": ov, "bond_overlap_half": number(sov),
        "onset": onset, "piece_overlap": pov, "piece_overlap_half": number(spov), "pieces_explicit": pe,
        "pieces_implicit": pi, "step_cuts": cuts, "unconverged_steps": unconverged, "transient_steps": transient})
if checks:
    figures["paper_check"] = {stem: {"s_per_frame_implicit": c[0], "speed_up": c[1], "newton_per_step": number(c[2]),
                                     "piece_overlap": c[3]} for stem, c in checks.items()}
if n_opt:
    figures["optimisers"] = {}
    for optimizer in ("gradient", "newton"):
        s, _ = load("drape." + optimizer)
        c = s.get("counters", {})
        figures["optimisers"][optimizer] = {"iterations": int(c.get("newton_iterations", 0)),
                                            "loop_seconds": loop_seconds(s),
                                            "unconverged_steps": int(c.get("unconverged_steps", 0))}
with open(os.path.join(work, "figures.json"), "w") as f:
    json.dump(figures, f, default=int)
EOF
}

# plots WORK: one PNG per scene in WORK, WORK/<scene>.png, its explicit and implicit runs' observables on shared axes
# (scripts/plot_observables.py).
plots() {
  local work="$1" f stem
  for f in "$work"/*.explicit.json; do
    stem="$(basename "$f" .explicit.json)"
    [[ -f "$work/$stem.explicit/trajectory.h5" && -f "$work/$stem.implicit/trajectory.h5" ]] || continue
    "$python" "$root/scripts/plot_observables.py" "$work/$stem.explicit/trajectory.h5" \
      "$work/$stem.implicit/trajectory.h5" -l explicit -l implicit \
      -t "$stem: explicit and implicit" -o "$work/$stem.png" >&2
  done
}

if [[ -n "${REPORT:-}" ]]; then
  report "$REPORT"
  [[ "${PLOTS:-0}" == 1 ]] && plots "$REPORT"
  exit
fi
percussion_bench_start implicit "$build_dir"
load_before="$(cat /proc/loadavg)"

if (( $# > 0 )); then
  scenes=("$@")
else
  shopt -s nullglob
  scenes=(inputs/bdem/*_small.json)
  shopt -u nullglob
fi
if (( ${#scenes[@]} == 0 )); then
  echo "bench: no scenes (inputs/bdem/*_small.json matched nothing)" >&2
  exit 1
fi
for scene in "${scenes[@]}"; do
  if [[ ! -f "$scene" ]]; then
    echo "bench: scene $scene does not exist" >&2
    exit 2
  fi
done

# variant SCENE OUT.json INTEGRATOR [OPTIMIZER]: a copy of SCENE with "integrator" (and implicit.optimizer) set;
# INTEGRATOR "explicit_half" is the explicit copy at half its time step.
# The explicit copy drops a fixed time.step above the critical step T (a one-step-per-frame scene such as
# beam_drape_small), so it runs at its own stable step, time.step_factor x T.
variant() {
  "$python" - "$@" <<'EOF'
import json, math, os, sys
src, dst, integrator = sys.argv[1:4]
optimizer = sys.argv[4] if len(sys.argv) > 4 else None
with open(src) as f:
    scene = json.load(f)
half = integrator == "explicit_half"
check = integrator == "implicit_check"  # the implicit copy with the paper's fracture check alone
integrator = "explicit" if half else "implicit" if check else integrator
scene["integrator"] = integrator
if optimizer:  # both optimisers at the scene's step, 100 iterations per step and no step cuts
    scene.setdefault("implicit", {}).update(optimizer=optimizer, max_iterations=100, step_cuts=0)
# The implicit copy's keys the environment sets: (variable, key in "implicit", type).
for variable, key, kind in [("FORM", "form", str), ("FRACTURE_ROUNDS", "fracture_rounds", int),
                            ("FRACTURE_CUT_RATIO", "fracture_cut_ratio", float),
                            ("FRACTURE_INTEGRATOR", "fracture_integrator", str),
                            ("EXPLICIT_WINDOW", "explicit_window", int),
                            ("FRACTURE_TRANSIENT", "fracture_transient", float),
                            ("FRACTURE_TRANSIENT_REACH", "fracture_transient_reach", float)]:
    value = os.environ.get(variable, "")
    if integrator == "implicit" and value:
        scene.setdefault("implicit", {})[key] = kind(value)
if check:
    scene["implicit"]["fracture_transient"] = 0
materials = scene["materials"]
def material(ref):
    return materials[ref] if isinstance(ref, int) else next(m for m in materials if m["name"] == ref)
critical = min(b["particle_radius"] * math.sqrt(2 * material(b["material"])["density"] /
                                                (3 * material(b["material"])["youngs_modulus"]))
               for b in scene["bodies"])
step = scene["time"].get("step")
implicit_step = step or scene.get("implicit", {}).get("step_factor", 20) * critical  # before any change
step_factor = os.environ.get("STEP_FACTOR", "")
if integrator == "implicit" and step_factor and not optimizer:  # (not the optimisers' comparison)
    if step is not None:
        sys.exit(f"bench: {src} sets time.step; STEP_FACTOR applies to scenes that take implicit.step_factor")
    scene.setdefault("implicit", {})["step_factor"] = float(step_factor)
if integrator == "explicit" and step is not None and step > critical:
    del scene["time"]["step"]
    print(f"bench: {src}: explicit copy drops time.step = {step:g} s (> critical step {critical:.3g} s)",
          file=sys.stderr)
if half:
    if "step" in scene["time"]:
        scene["time"]["step"] *= 0.5
    else:
        scene["time"]["step_factor"] = 0.5 * scene["time"].get("step_factor", 0.2)
window = int(os.environ.get("WINDOW_STEPS", "0"))
if window > 0:
    # Paper-size scenes: both integrators cover the same first `window` implicit steps; seconds per frame
    # keep the scene's own frame interval (saved beside the copy), the trajectory gets two frames.
    end = window * implicit_step
    with open(dst + ".frame", "w") as f:
        f.write(repr(scene["output"]["frame_interval"]))
    scene["time"]["end"] = end
    scene["output"]["frame_interval"] = end / 2
with open(dst, "w") as f:
    json.dump(scene, f, indent=1)
EOF
}

# run NAME JSON: one run on $ranks ranks into $work/NAME; on failure, show the log and stop with its exit code.
run() {
  local name="$1" json="$2" status=0
  echo "bench: $name" >&2
  percussion_mpirun -np "$ranks" "$percussion" run "$json" --out "$work/$name" --overwrite >"$work/$name.log" 2>&1 ||
    status=$?
  if (( status != 0 )); then
    echo "bench: percussion failed on $json with exit code $status; last lines of $work/$name.log:" >&2
    tail -n 30 "$work/$name.log" >&2
    trap - EXIT
    exit "$status"
  fi
}

reference="${REFERENCE:-$([[ "${WINDOW_STEPS:-0}" == 0 ]] && echo 1 || echo 0)}"
check="${CHECK:-$([[ "${WINDOW_STEPS:-0}" == 0 ]] && echo 1 || echo 0)}"
integrators=(explicit implicit)
[[ "$reference" == 1 ]] && integrators+=(explicit_half)
stems=()
repeat="${REPEAT:-1}"
ranks="${RANKS:-1}"
for setting in "REPEAT=$repeat" "RANKS=$ranks"; do
  if ! [[ "${setting#*=}" =~ ^[1-9][0-9]*$ ]]; then
    echo "bench: ${setting%%=*} must be a positive integer, not '${setting#*=}'" >&2
    exit 2
  fi
done
for scene in "${scenes[@]}"; do
  stem="$(basename "$scene" .json)"
  stems+=("$stem")
  for integrator in "${integrators[@]}"; do
    variant "$scene" "$work/$stem.$integrator.json" "$integrator"
    run "$stem.$integrator" "$work/$stem.$integrator.json"
  done
  if [[ "$check" == 1 ]] && "$python" -c 'import json, sys
sys.exit(0 if json.load(open(sys.argv[1])).get("implicit", {}).get("fracture_transient", 0) > 0 else 1)' \
      "$work/$stem.implicit.json"; then
    variant "$scene" "$work/$stem.implicit_check.json" implicit_check
    run "$stem.implicit_check" "$work/$stem.implicit_check.json"
  fi
  for ((r = 2; r <= repeat; ++r)); do  # timing only: the first runs give the counts and the fracture
    for integrator in explicit implicit; do
      run "$stem.$integrator.r$r" "$work/$stem.$integrator.json"
    done
  done
done

drape=inputs/bdem/beam_drape_small.json
if [[ -f "$drape" && "${WINDOW_STEPS:-0}" == 0 ]]; then
  for optimizer in gradient newton; do
    variant "$drape" "$work/drape.$optimizer.json" implicit "$optimizer"
    run "drape.$optimizer" "$work/drape.$optimizer.json"
  done
fi

report "$work" "$reference" "${stems[@]}"
"$python" "$root/scripts/bench/record.py" implicit_vs_explicit "$work/figures.json" --load "$load_before" \
  --build-dir "$build_dir" --env REPEAT RANKS WINDOW_STEPS REFERENCE CHECK FORM FRACTURE_ROUNDS FRACTURE_CUT_RATIO \
  FRACTURE_INTEGRATOR EXPLICIT_WINDOW FRACTURE_TRANSIENT FRACTURE_TRANSIENT_REACH STEP_FACTOR \
  -- scripts/bench/implicit_vs_explicit.sh "$@"
[[ "${PLOTS:-0}" == 1 ]] && plots "$work"
echo "bench: run directories in $work$([[ "${KEEP:-0}" == 1 ]] || echo ' (removed on exit; KEEP=1 keeps them)')" >&2

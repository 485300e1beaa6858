#!/usr/bin/env python3
"""Write docs/benchmarks/README.md: one table of the latest benchmark records.

    scripts/bench/summarise.py [--check]

Reads docs/benchmarks/<bench>.jsonl (one record per line, appended by scripts/bench/record.py at the end of each
bench run) and keeps, for each bench, the latest record of each configuration (implicit_vs_explicit: each scene
at each rank count and window; scale_consistency: each integrator; the others: the latest record). --check exits 1
when the README is not what the records give (for CI). Standard library only.
"""
import argparse
import glob
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIRECTORY = os.path.join(ROOT, "docs", "benchmarks")


def load_records():
    records = {}
    for path in sorted(glob.glob(os.path.join(DIRECTORY, "*.jsonl"))):
        bench = os.path.basename(path)[: -len(".jsonl")]
        with open(path) as f:
            lines = [line for line in f if line.strip()]
        # The latest last: by date, then by the order they were appended.
        rows = [json.loads(line) for line in lines]
        records[bench] = [r for _, r in sorted(enumerate(rows), key=lambda ir: (ir[1].get("date") or "", ir[0]))]
    return records


def fmt(x, digits=3):
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def fixed(x):
    return "–" if x is None else f"{x:.2f}"


class Runs:
    """The records a table cites, as [1], [2], ... with their provenance listed under it."""

    def __init__(self):
        self.cited = []

    def ref(self, record):
        for i, r in enumerate(self.cited):
            if r is record:
                return f"[{i + 1}]"
        self.cited.append(record)
        return f"[{len(self.cited)}]"

    def lines(self):
        out = []
        for i, r in enumerate(self.cited):
            m = r.get("machine") or {}
            machine = f"{m.get('nproc', '?')} cores" + (f", {m['cpu']}" if m.get("cpu") else "")
            load = r.get("load")
            load_text = ("load average " + " / ".join(fmt(x, 2) for x in load if x is not None)) if load and any(
                x is not None for x in load) else "load not recorded"
            commit = r.get("commit") or "commit not recorded"
            text = f"{i + 1}. {r.get('date', '?')}, `{commit}`, {machine}, {load_text}: `{r.get('command', '')}`"
            if r.get("source"):
                text += f". Source: {r['source']}"
            out.append(text)
        return out


def implicit_vs_explicit(records, out):
    latest = {}
    for r in records:
        f = r["figures"]
        for s in f.get("scenes", []):
            key = (bool(f.get("paper_size")), tuple(f.get("ranks", [1])), f.get("window_steps", 0), s["scene"])
            latest[key] = (r, s)
    if not latest:
        return
    runs = Runs()
    out += ["## Implicit against explicit (`implicit_vs_explicit`)", "",
            "Wall seconds of the time loop per simulated frame with each integrator, in one run of the bench; the "
            "speed-up is explicit over implicit, beside the paper's (Table 1). Piece overlap: the mean over the "
            "particles of the Jaccard index of a particle's fragments in the two runs at the end (1 = the same "
            "pieces); in brackets the explicit run against itself at half its step, what a larger step can be "
            "expected to reach. Paper-size rows are whole runs.", "",
            "| scene | ranks | speed-up | paper | s/frame explicit | s/frame implicit | Newton/step | Krylov/Newton "
            "| piece overlap | run |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for key in sorted(latest, key=lambda k: (k[0], k[1], k[2], k[3])):
        r, s = latest[key]
        paper_size, ranks, window, scene = key
        name = scene + (" (paper size)" if paper_size and not scene.endswith("_small") else "")
        if window:
            name += f", first {window} implicit steps"
        piece = fixed(s.get("piece_overlap"))
        if s.get("piece_overlap_half") is not None:
            piece += f" ({fixed(s['piece_overlap_half'])})"
        speed = fixed(s.get("speed_up"))
        if s.get("note"):
            notes.append(f"{runs.ref(r)} {name}: {s['note']}.")
        out.append(f"| {name} | {'/'.join(map(str, ranks))} | **{speed}** | {fmt(s.get('paper'), 2)} | "
                   f"{fmt(s.get('s_per_frame_explicit'))} | {fmt(s.get('s_per_frame_implicit'))} | "
                   f"{fmt(s.get('newton_per_step'))} | {fmt(s.get('krylov_per_newton'))} | {piece} | {runs.ref(r)} |")
    out.append("")
    for r in runs.cited:
        f = r["figures"]
        extra = []
        if f.get("goals_met"):
            extra.append(f"goal met on {f['goals_met']}")
        if f.get("optimisers"):
            extra.append("optimisers on beam_drape_small: " + ", ".join(
                f"{k} {v['iterations']:,} iterations in {fmt(v['loop_seconds'], 2)} s" for k, v in f["optimisers"].items()))
        if extra:
            notes.append(f"{runs.ref(r)}: " + "; ".join(extra) + ".")
    if notes:
        out += ["Notes:", ""] + [f"- {n}" for n in notes] + [""]
    out += ["Runs:", ""] + runs.lines() + [""]


def explicit_bdem(records, out):
    if not records:
        return
    r = records[-1]
    f = r["figures"]
    runs = Runs()
    out += ["## Explicit throughput (`explicit_bdem`)", "",
            f"`{f.get('scene')}` ({fmt(f.get('particles'))} particles, {fmt(f.get('bonds'))} bonds), "
            f"{fmt(f.get('steps'))} steps, latest run {runs.ref(r)}. Efficiency = rate on N ranks / (N × rate on "
            f"1 rank); LAMMPS's reference for granular bonded spheres is "
            f"{fmt(f.get('lammps_reference_per_core', 0.75e6) / 1e6, 2)} M particle-steps/s/core.", "",
            "| ranks | wall s | M particle-steps/s | per core | efficiency | vs LAMMPS |", "|---|---|---|---|---|---|"]
    for run in f.get("runs", []):
        out.append(f"| {run['ranks']} | {fmt(run['wall_seconds'])} | {fmt(run['particle_steps_per_second'] / 1e6)} | "
                   f"{fmt(run['particle_steps_per_second_per_core'] / 1e6)} | {fixed(run['efficiency'])} | "
                   f"{fmt(run['vs_lammps'], 2)} |")
    out += ["", "Runs:", ""] + runs.lines() + [""]


def scale_consistency(records, out):
    latest = {}
    for r in records:
        latest[r["figures"].get("integrator", "implicit")] = r
    if not latest:
        return
    runs = Runs()
    out += ["## Scale consistency (`scale_consistency`)", "",
            "Three-point bending at three resolutions: the frame of the first broken bond (where the crack starts). "
            "The paper's Table 2: 23/25/25 (its FEM 6/13/29, MPM 26/23/11).", "",
            "| integrator | scene | particles | first fracture (frame) | bonds broken at the end | s/frame | "
            "Newton/step | run |", "|---|---|---|---|---|---|---|---|"]
    for integrator in sorted(latest):
        r = latest[integrator]
        for s in r["figures"].get("scenes", []):
            out.append(f"| {integrator} | {s['scene']} | {fmt(s.get('particles'))} | "
                       f"{fmt(s.get('first_fracture_frame'))} | {fmt(s.get('broken_at_end'))} | "
                       f"{fmt(s.get('seconds_per_frame'))} | {fmt(s.get('newton_per_step'))} | {runs.ref(r)} |")
    out += ["", "Runs:", ""] + runs.lines() + [""]


def single_precision_kernels(records, out):
    if not records:
        return
    r = records[-1]
    f = r["figures"]
    runs = Runs()
    out += ["## Reduced-precision and AVX2 kernels (`single_precision_kernels`)", "",
            f"`{f.get('scene')}`, {fmt(f.get('steps'))} implicit steps, 1 rank, latest run {runs.ref(r)}.", ""]
    if "variants" in f:
        out += ["| variant | ms/product | ms/PC apply | loop s | Krylov iterations |", "|---|---|---|---|---|"]
        for v, x in f["variants"].items():
            out.append(f"| {v} | {fmt(x.get('ms_per_product'))} | {fmt(x.get('ms_per_pc_apply'))} | "
                       f"{fmt(x.get('loop_seconds'))} | {fmt(x.get('krylov_iterations'))} |")
        out += ["", f"Time loop: {fmt(f.get('loop_speedup_vs_petsc'), 3)}× PETSc's double-precision kernels', "
                    f"AVX2 {fmt(f.get('avx2_loop_speedup'), 3)}× the portable kernels'.", ""]
    else:
        out += ["| figure | value |", "|---|---|"]
        for k, v in f.items():
            if k in ("scene", "steps", "ranks"):
                continue
            out.append(f"| {k} | {', '.join(fmt(x) for x in v) if isinstance(v, list) else fmt(v)} |")
        out.append("")
    # The latest record of a bench that measured other figures in earlier runs: those too.
    earlier = [e for e in records[:-1] if e["figures"].get("scene") == f.get("scene")
               and set(e["figures"]) - set(f) - {"scene", "steps", "ranks"}]
    if earlier:
        e = earlier[-1]
        out += [f"Earlier figures {runs.ref(e)}: " + ", ".join(
            f"{k} {fmt(v)}" for k, v in e["figures"].items() if k not in f and not isinstance(v, list)) + ".", ""]
    out += ["Runs:", ""] + runs.lines() + [""]


def ipc(records, out):
    if not records:
        return
    r = records[-1]
    f = r["figures"]
    runs = Runs()
    out += ["## IPC elastodynamics (`ipc`)", "",
            f"`{f.get('scene')}` at its element size (coarse) and {fmt(f.get('refine'))} of it (fine), "
            f"{fmt(f['rows'][0]['steps'] if f.get('rows') else None)} steps, latest run {runs.ref(r)}. Shares are of "
            "the time loop. Goals: 2-rank efficiency t1/(2 t2) >= 0.8 on the fine mesh; CCD under 10 us per query "
            "with 0 false negatives.", "",
            "| mesh | ranks | tetrahedra | Newton/step | s/step | assembly | contact | CCD | linear solve |",
            "|---|---|---|---|---|---|---|---|---|"]
    for x in f.get("rows", []):
        out.append(f"| {x['mesh']} | {x['ranks']} | {fmt(x['tetrahedra'])} | {fixed(x['newton_per_step'])} | "
                   f"{fmt(x['seconds_per_step'])} | {x['assembly']:.0%} | {x['contact']:.0%} | {x['ccd']:.0%} | "
                   f"{x['linear_solve']:.0%} |")
    e = f.get("efficiency_2_ranks", {})
    c = f.get("ccd", {})
    out += ["", f"2-rank efficiency: coarse {fixed(e.get('coarse'))}, fine **{fixed(e.get('fine'))}**. CCD: "
                f"{fmt(c.get('queries'))} queries, **{fmt(c.get('mean_us'))} us** per query "
                f"({fmt(c.get('mean_cpu_us'))} us CPU; random sets {fmt(c.get('random_mean_cpu_us'))} us CPU), "
                f"**{fmt(c.get('false_negatives'))}** false negatives, {fmt(c.get('false_positives'))} false "
                "positives.", ""]
    out += ["Runs:", ""] + runs.lines() + [""]


def generic(bench, records, out):
    r = records[-1]
    runs = Runs()
    out += [f"## `{bench}`", "", f"Latest run {runs.ref(r)}:", "", "```", json.dumps(r["figures"], indent=1), "```", ""]
    out += ["Runs:", ""] + runs.lines() + [""]


def render(records):
    out = ["# Benchmarks", "",
           "<!-- Generated by scripts/bench/summarise.py from docs/benchmarks/*.jsonl; do not edit by hand. -->", "",
           "The latest figures of each benchmark script in `scripts/bench/`. Every run of a bench appends one record "
           "to `docs/benchmarks/<bench>.jsonl`: one JSON object per line with `bench`, `commit` (of the binary; "
           "`-dirty` when the checkout had changes), `date` (UTC), `machine` (`nproc`, `cpu` model), `load` "
           "(`/proc/loadavg` before the runs), `command` (with the environment settings that were set), "
           "`build_dir` and the bench's `figures`; records seeded from earlier documentation also name their "
           "`source`, and where the binary's commit was not recorded give the commit that documented the run. "
           "Ratios are measured within one run on one machine; absolute times move with the machine and its "
           "load.", "",
           "Regenerate with `python3 scripts/bench/summarise.py` after a bench run.", ""]
    handlers = {"implicit_vs_explicit": implicit_vs_explicit, "explicit_bdem": explicit_bdem,
                "scale_consistency": scale_consistency, "single_precision_kernels": single_precision_kernels,
                "ipc": ipc}
    for bench in ["implicit_vs_explicit", "explicit_bdem", "scale_consistency", "single_precision_kernels", "ipc"]:
        if records.get(bench):
            handlers[bench](records[bench], out)
        else:
            out += [f"## `{bench}`", "", "No record yet: run `scripts/bench/" + bench + ".sh`.", ""]
    for bench in sorted(set(records) - set(handlers)):
        if records[bench]:
            generic(bench, records[bench], out)
    out += ["## Figures", "",
            "- [three_point_bending_small.png](../figures/three_point_bending_small.png): three-point bending with "
            "both integrators (`KEEP=1 PLOTS=1 scripts/bench/implicit_vs_explicit.sh "
            "inputs/bdem/three_point_bending_small.json`): the same energy and the crack starting in the same frame.",
            "- [plate_drop_small.png](../figures/plate_drop_small.png): the small plate with both integrators, an "
            "impact whose broken bonds agree only as pieces.", ""]
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md is out of date")
    a = parser.parse_args()
    text = render(load_records())
    path = os.path.join(DIRECTORY, "README.md")
    if a.check:
        try:
            with open(path) as f:
                current = f.read()
        except OSError:
            current = ""
        if current != text:
            print(f"{os.path.relpath(path)} is out of date: run scripts/bench/summarise.py", file=sys.stderr)
            return 1
        return 0
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(path)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Plot the observables of one or more Percussion trajectories against time.

    plot_observables.py TRAJ.h5 [-o out.png]
    plot_observables.py A.h5 B.h5 [-l explicit -l implicit] [-o out.png]

One trajectory: three panels from the /observables group that `percussion run` appends once per frame:
kinetic, potential and total energy; |linear momentum| and |angular momentum|; bonds broken.
A fourth where the trajectory has the effort rows (wall_seconds; newton_iterations and krylov_iterations for the
implicit integrator): wall seconds per step between frames, and Newton iterations per step and Krylov iterations
per Newton iteration. A frame whose effort rows cover no step (a run's first) is left out of it.
Several trajectories (e.g. one scene with both integrators): the same panels on shared axes, a colour per run,
with wall seconds per simulated second in the fourth so runs at different time steps compare.
Exit codes follow the `percussion` command: 2 for a file that cannot be read or lacks /observables.
"""
import argparse
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")  # files only; works without a display (clusters, CI)
import matplotlib.pyplot as plt  # noqa: E402  (backend must be chosen first)
import numpy as np  # noqa: E402

REQUIRED = ("time", "kinetic", "potential", "total", "momentum", "angular_momentum", "bonds_broken")
EFFORT = ("step", "wall_seconds", "newton_iterations", "krylov_iterations")  # optional


def fail(message):
    print(f"plot_observables: {message}", file=sys.stderr)
    sys.exit(2)


def read_observables(path):
    try:
        f = h5py.File(path, "r")
    except OSError as error:
        fail(f"{path}: cannot open as HDF5 ({error})")
    with f:
        if "observables" not in f or not isinstance(f["observables"], h5py.Group):
            fail(f"{path}: no /observables group (is it a trajectory.h5 written by `percussion run`?)")
        group = f["observables"]
        missing = [name for name in REQUIRED if name not in group]
        if missing:
            fail(f"{path}: /observables lacks {', '.join(missing)}")
        data = {name: np.asarray(group[name][()], dtype=float) for name in REQUIRED}
        data.update({name: np.asarray(group[name][()], dtype=float) for name in EFFORT if name in group})
    rows = len(data["time"])
    if rows == 0:
        fail(f"{path}: /observables is empty (no frame written yet)")
    for name in ("momentum", "angular_momentum"):
        if data[name].shape != (rows, 3):
            fail(f"{path}: /observables/{name} has shape {data[name].shape}, expected ({rows}, 3)")
    for name in ("kinetic", "potential", "total", "bonds_broken") + tuple(n for n in EFFORT if n in data):
        if data[name].shape != (rows,):
            fail(f"{path}: /observables/{name} has shape {data[name].shape}, expected ({rows},)")
    return data


def effort_rows(data):
    """The frames whose effort rows cover steps, and the steps each covers (None without effort rows)."""
    if "wall_seconds" not in data or "step" not in data:
        return None
    steps = np.diff(data["step"], prepend=data["step"][0])
    return steps > 0, np.maximum(steps, 1)


def plot_one(data, title, output):
    t = data["time"]
    effort = effort_rows(data)
    panels = 3 if effort is None else 4
    fig, axes = plt.subplots(panels, 1, sharex=True, figsize=(8, 3 * panels), constrained_layout=True)

    energy = axes[0]
    energy.plot(t, data["kinetic"], label="kinetic")
    energy.plot(t, data["potential"], label="potential")
    energy.plot(t, data["total"], label="total", color="black", linewidth=1.5)
    energy.set_ylabel("energy [J]")
    energy.legend(loc="best")

    # Linear and angular momentum have different units and scales: one y axis each.
    linear = axes[1]
    angular = linear.twinx()
    line_p = linear.plot(t, np.linalg.norm(data["momentum"], axis=1), color="tab:blue", label="|linear momentum|")
    line_l = angular.plot(t, np.linalg.norm(data["angular_momentum"], axis=1), color="tab:green",
                          label="|angular momentum|")
    linear.set_ylabel("|p| [kg m/s]", color="tab:blue")
    angular.set_ylabel("|L| [kg m²/s]", color="tab:green")
    linear.legend(line_p + line_l, [line.get_label() for line in line_p + line_l], loc="best")

    broken = axes[2]
    broken.step(t, data["bonds_broken"], where="post", color="tab:red")
    broken.set_ylabel("bonds broken")

    if effort is not None:
        covered, steps = effort
        wall = axes[3]
        lines = wall.step(t[covered], (data["wall_seconds"] / steps)[covered], where="pre", color="tab:gray",
                          label="wall s per step")
        wall.set_ylabel("wall s per step", color="tab:gray")
        if "newton_iterations" in data and "krylov_iterations" in data:
            newton = data["newton_iterations"]
            iterations = wall.twinx()
            lines += iterations.step(t[covered], (newton / steps)[covered], where="pre", color="tab:purple",
                                     label="Newton per step")
            lines += iterations.step(t[covered], (data["krylov_iterations"] / np.maximum(newton, 1))[covered],
                                     where="pre", color="tab:orange", label="Krylov per Newton")
            iterations.set_ylabel("iterations")
        wall.legend(lines, [line.get_label() for line in lines], loc="best")
    finish(fig, axes, title, output)


def plot_runs(runs, title, output):
    """Several runs on shared axes: a colour per run, a line style per quantity."""
    with_effort = [(label, data, effort_rows(data)) for label, data in runs]
    any_effort = any(effort is not None for _, _, effort in with_effort)
    panels = 4 if any_effort else 3
    fig, axes = plt.subplots(panels, 1, sharex=True, figsize=(8, 3 * panels), constrained_layout=True)
    for i, (label, data, effort) in enumerate(with_effort):
        colour = f"C{i}"
        t = data["time"]
        axes[0].plot(t, data["total"], color=colour, label=f"{label}: total")
        axes[0].plot(t, data["kinetic"], color=colour, linestyle="--", label=f"{label}: kinetic")
        axes[1].plot(t, np.linalg.norm(data["momentum"], axis=1), color=colour, label=label)
        axes[2].step(t, data["bonds_broken"], where="post", color=colour, label=label)
        if effort is not None:
            covered, steps = effort
            # Wall time per simulated second: runs at different time steps compare on one scale.
            per_time = data["wall_seconds"] / (steps * time_step(data))
            axes[3].step(t[covered], per_time[covered], where="pre", color=colour, label=label)
    axes[0].set_ylabel("energy [J]")
    axes[1].set_ylabel("|p| [kg m/s]")
    axes[2].set_ylabel("bonds broken")
    if any_effort:
        axes[3].set_ylabel("wall s per simulated s")
        axes[3].set_yscale("log")
    for axis in axes:
        axis.legend(loc="best", fontsize="small")
    finish(fig, axes, title, output)


def time_step(data):
    """The run's time step from consecutive frames (time and step both written per frame)."""
    dt = np.diff(data["time"])
    ds = np.diff(data["step"])
    valid = ds > 0
    return np.median(dt[valid] / ds[valid]) if valid.any() else 1.0


def finish(fig, axes, title, output):
    axes[-1].set_xlabel("time [s]")
    for axis in axes:
        axis.grid(True, alpha=0.3)
    fig.suptitle(title)
    fig.savefig(output, dpi=120)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description="Plot energies, momenta and broken bonds of one or more trajectories.")
    parser.add_argument("trajectories", nargs="+", metavar="TRAJ.h5", help="trajectory.h5 written by `percussion run`")
    parser.add_argument("-o", "--output", help="PNG to write (default: observables.png next to the first trajectory)")
    parser.add_argument("-l", "--label", action="append", default=[],
                        help="a run's name in the legend, once per trajectory (default: its directory's name)")
    parser.add_argument("-t", "--title", help="the figure's title (default: the trajectory, or the runs' names)")
    args = parser.parse_args()
    if args.label and len(args.label) != len(args.trajectories):
        fail(f"{len(args.label)} --label for {len(args.trajectories)} trajectories: give one per trajectory or none")

    first = os.path.abspath(args.trajectories[0])
    output = args.output or os.path.join(os.path.dirname(first), "observables.png")
    labels = args.label or [os.path.basename(os.path.dirname(os.path.abspath(p))) or p for p in args.trajectories]
    runs = [(label, read_observables(path)) for label, path in zip(labels, args.trajectories)]
    if len(runs) == 1:
        plot_one(runs[0][1], args.title or args.trajectories[0], output)
    else:
        plot_runs(runs, args.title or " vs ".join(labels), output)
    for label, data in runs:
        print(f"plot_observables: {label}: {len(data['time'])} frames, "
              f"t = {data['time'][0]:.6g} .. {data['time'][-1]:.6g} s")
    print(f"plot_observables: wrote {output}")


if __name__ == "__main__":
    main()

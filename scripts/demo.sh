#!/usr/bin/env bash
# Build Release, snap a small bonded beam by pulling one end fast on 2 MPI ranks, summarise the output
# and plot its energies, momenta and broken bonds; then resolve Newton's cradle and break a billiard rack with the
# rigid-impact method.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/setup.sh
source "$root/scripts/setup.sh"
cd "$root"

scene=inputs/bdem/beam_snap_small.json
out=out/beam_snap_small

percussion_build build Release

echo
echo "== running $scene on 2 ranks"
status=0
percussion_mpirun -np 2 build/percussion run "$scene" --out "$out" --overwrite || status=$?
if (( status != 0 )); then
  echo "demo: percussion exited with code $status (2 bad input, 3 numerical failure; see $out/log.txt)" >&2
  exit "$status"
fi

echo
echo "== build/percussion info $out/trajectory.h5"
# Captured first: `| head` would close the pipe early and, under pipefail, fail the script.
info="$(build/percussion info "$out/trajectory.h5")"
head -n 30 <<<"$info"

if [[ -f scripts/plot_observables.py ]]; then
  echo
  if python="$(percussion_python)"; then
    "$python" scripts/plot_observables.py "$out/trajectory.h5" -o "$out/observables.png"
  else
    echo "demo: skipping the plot (no python with h5py and matplotlib)" >&2
  fi
fi

echo
echo "== rigid impact: Newton's cradle, one resolution (inputs/rigid/newtons_cradle.json)"
build/percussion run inputs/rigid/newtons_cradle.json --out out/newtons_cradle --overwrite >/dev/null
if python="$(percussion_python)"; then
  "$python" - out/newtons_cradle/resolution.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"  terminated: {r['terminated']} after {r['reflections']} reflections; velocities after:",
      " ".join(f"{v[0]:.3f}" for v in r["velocities"]))
print(f"  kinetic energy {r['energy_before']:.6g} -> {r['energy_after']:.6g} J")
PY
fi
echo
echo "== rigid impact: a billiard break, 16 balls for 1 s (inputs/rigid/billiard_break.json)"
build/percussion run inputs/rigid/billiard_break.json --out out/billiard_break --overwrite | tail -n 4

plot_line=""
if [[ -f "$out/observables.png" ]]; then
  plot_line="  observables.png                   energies, momenta and broken bonds vs time"
fi

cat <<EOF

== output in $root/$out
  trajectory.h5 / trajectory.xdmf   particles and bonds, one frame per output interval
  checkpoints/                      a stopped run continues with --restart $out
  summary.json                      throughput, time per phase, final energies and momenta
  log.txt                           the run's log
${plot_line}
  $root/out/newtons_cradle/resolution.json and $root/out/billiard_break/: the rigid-impact runs

Open it in ParaView:
  1. File -> Open -> $root/$out/trajectory.xdmf
     (choose the "Xdmf3ReaderS" or "XDMF Reader" when asked), then Apply.
  2. Filters -> Extract Block -> tick "particles" (the "bonds" block draws the bonds as lines), Apply.
  3. On it, Filters -> Glyph: Glyph Type = Sphere, Scale Array = radius, Scale Factor = 2 (the sphere
     glyph has unit diameter), Glyph Mode = All Points (the default draws only a sample), Apply.
  4. Press Play to animate; colour by velocity to see the stress waves and the break.
EOF

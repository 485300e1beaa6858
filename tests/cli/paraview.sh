# ParaView opens a trajectory holding a tetrahedral mesh and rigid bodies written on 2 ranks: the time steps and
# the points and cells of each grid, and a picture. Skipped (exit 77) where pvbatch or xvfb-run is not installed.
source "$(dirname "$0")/../support/cli_common.sh"
: "${IO_DEMO:?set by ctest}"
if ! command -v pvbatch >/dev/null || ! command -v xvfb-run >/dev/null; then
  echo "SKIP: pvbatch or xvfb-run not installed (apt-get install paraview python3-paraview xvfb)"
  exit 77
fi
"$MPIEXEC" -n 2 "$IO_DEMO" "$SCRATCH/demo"
# 140 vertices and 432 tetrahedra; 3 bodies, one vertex cell each. A display number of its own (-n, then the next
# free one), and up to three tries: on a busy machine pvbatch now and then fails to connect to a fresh Xvfb.
for try in 1 2 3; do
  set +e
  OUT=$(xvfb-run -a -n $((100 + RANDOM % 800)) \
    pvbatch "$PERCUSSION_SOURCE_DIR/scripts/check_paraview.py" "$SCRATCH/demo/trajectory.xdmf" \
    --frames 4 --grid mesh:140:432 --grid bodies:3:3 --png "${PARAVIEW_PNG:-$SCRATCH/demo/last_frame.png}" 2>&1)
  code=$?
  set -e
  grep -q "bad X server connection" <<<"$OUT" || break
done
[ "$code" -eq 0 ] || fail "exit $code from pvbatch check_paraview.py: $OUT"
expect_output "saved"
echo "$OUT"

# Shared by the signal tests (source after cli_common.sh).

# wait_stepping DIR: return once the run writing DIR is stepping (its first frame exists, and half a second more).
wait_stepping() {
  for _ in $(seq 1 300); do
    [ -s "$1/trajectory.xdmf" ] && break
    sleep 0.1
  done
  [ -s "$1/trajectory.xdmf" ] || fail "no first frame in $1 after 30 s"
  sleep 0.5
}

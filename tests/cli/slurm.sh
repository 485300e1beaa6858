# scripts/slurm/run.sbatch under a real single-node SLURM (Debian's slurmctld, slurmd and munge, started here from a
# generated slurm.conf and stopped at exit): (a) the pre-limit USR1 checkpoints, requeues, and the run finishes
# equal bit for bit to an uninterrupted one; (b) scancel's TERM checkpoints and ends the job once, not requeued;
# (c) bad input and (d) a wrong SRUN_MPI give messages naming the job output file. Skipped (exit 77) where the
# daemons are missing or cannot start. A failed run keeps its scratch directory (the cluster's logs and the job outputs).
source "$(dirname "$0")/../support/cli_common.sh"
PATH=$PATH:/usr/sbin:/sbin
skip() { echo "skipped: $*"; exit 77; }
for tool in munged slurmctld slurmd sbatch scontrol scancel squeue; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip "$tool not found (Debian packages munge slurmctld slurmd slurm-client; scripts/setup.sh installs them)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd runs jobs as their owner, so it must run as root (SlurmUser=root here)"

# An outer SLURM job's variables would steer sbatch and srun to the wrong cluster or job.
while read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_' || true)

# munged insists that every directory above its socket is searchable by all.
chmod 755 "$SCRATCH"
cluster=$SCRATCH/cluster
mkdir -p "$cluster"/{munge,ctld,spool,log,tmp}
chmod 755 "$cluster" "$cluster/munge"
dd if=/dev/urandom of="$cluster/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$cluster/munge/munge.key"

free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}
ctld_port=$(free_port)
slurmd_port=$(free_port)
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))
node=$(hostname -s)

# cred_expire is also how long a requeued job waits before it may start again (120 s by default).
export SLURM_CONF=$cluster/slurm.conf
cat > "$SLURM_CONF" <<EOF
ClusterName=percussiontest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster/munge/munge.socket,cred_expire=10
StateSaveLocation=$cluster/ctld
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/log/slurmctld.log
SlurmdLogFile=$cluster/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
KillWait=20
MinJobAge=600
SchedulerParameters=bf_interval=1,sched_interval=1
TmpFS=$cluster/tmp
FirstJobId=$((1000 + RANDOM))
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

munged_pid=0
ctld_pid=0
slurmd_pid=0
# Cancel what is left (slurmd leaves running steps behind when it stops), then stop the daemons.
stop_cluster() {
  set +e
  if (( ctld_pid > 0 )); then
    scancel --user root >/dev/null 2>&1
    for _ in $(seq 1 50); do
      squeue -h -o %t 2>/dev/null | grep -q . || break
      sleep 0.2
    done
  fi
  for pid in $slurmd_pid $ctld_pid $munged_pid; do
    if (( pid > 0 )); then
      kill "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    fi
  done
}
cleanup_hooks+=(stop_cluster)

cluster_log() {
  tail -n 20 "$cluster"/log/*.log "$cluster"/log/*.out 2>/dev/null || true
}

munged --foreground --socket="$cluster/munge/munge.socket" --key-file="$cluster/munge/munge.key" \
  --pid-file="$cluster/munge/munged.pid" --seed-file="$cluster/munge/munged.seed" \
  --log-file="$cluster/log/munged.log" > "$cluster/log/munged.out" 2>&1 &
munged_pid=$!
for _ in $(seq 1 50); do [ -S "$cluster/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$cluster/munge/munge.socket" ] || skip "munged did not start: $(cluster_log)"
slurmctld -D -i -f "$SLURM_CONF" > "$cluster/log/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" > "$cluster/log/slurmd.out" 2>&1 &
slurmd_pid=$!
state=""
for _ in $(seq 1 100); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || skip "slurmctld and slurmd did not bring node $node up (state '$state'): $(cluster_log)"

# The shipped scene lengthened, so that a job on a quiet machine is still stepping when the signals come.
scene=$SCRATCH/beam_snap_long.json
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['time']['end']=0.2; json.dump(d, open(sys.argv[2],'w'))" \
  "$INPUTS/bdem/beam_snap_small.json" "$scene"
steps=$(steps 3000)  # frames every 77 steps
sbatch_script=$PERCUSSION_SOURCE_DIR/scripts/slurm/run.sbatch

# submit OUT [percussion args...]: submit run.sbatch on 2 tasks writing OUT; prints the job id. The limit is far
# enough that the script's own --signal=B:USR1@300 does not fire during the test. The variables go
# through sbatch's default --export=ALL: naming them in --export makes slurmd load root's login environment first.
submit() {
  local out=$1; shift
  SCENE=$scene OUT=$out PERCUSSION_BIN=$PERCUSSION \
    sbatch --parsable --ntasks=2 --time=30 --output="$cluster/log/job-%j.out" "$sbatch_script" "$@"
}
job_field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
# wait_done JOB: until the job has left the queue's active states (squeue's CG counts as active: the batch shell
# may still be running); prints the final state.
wait_done() {
  local t limit=120
  [ "${PERCUSSION_SANITIZE:-0}" = 1 ] && limit=600
  for _ in $(seq 1 $((limit * 5))); do
    t=$(squeue -h -t all -j "$1" -o %t 2>/dev/null || true)
    case "$t" in CD|CA|F|TO|NF|OOM|PR|BF|DL) job_field "$1" JobState; return 0 ;; esac
    sleep 0.2
  done
  fail "job $1 did not end within $limit s (squeue: $t): $(cat "$cluster/log/job-$1.out")"
}
# wait_stepping DIR: until the run writing DIR has written its first frame, i.e. it is past set-up.
wait_stepping() {
  for _ in $(seq 1 300); do
    [ -s "$1/trajectory.xdmf" ] && { sleep 0.5; return 0; }
    sleep 0.1
  done
  fail "no frame in $1 within 30 s: $(cat "$cluster"/log/job-*.out)"
}

# (a) The pre-limit warning. SLURM sends it as --signal=B:USR1@300 asks, 300 s before the limit; scancel sends
# the same signal to the same process (the batch shell) now, so the test does not wait for a limit.
ja=$(submit "$SCRATCH/a" --steps "$steps")
wait_stepping "$SCRATCH/a"
scancel --signal=USR1 --batch "$ja"
final=$(wait_done "$ja")
log=$(cat "$cluster/log/job-$ja.out")
[ "$final" = COMPLETED ] || fail "job $ja ended $final after USR1 (want COMPLETED): $log"
[ "$(job_field "$ja" Restarts)" = 1 ] || fail "job $ja restarted $(job_field "$ja" Restarts) times (want 1): $log"
grep -q "run.sbatch: requeueing job $ja" <<<"$log" || fail "no requeue after USR1: $log"
grep -q "restarted from" <<<"$log" || fail "the second start did not restart from the checkpoint: $log"
# An absolute OUT is printed as it is, not appended to the repository's path.
grep -qF "run.sbatch: done; output in $SCRATCH/a" <<<"$log" || fail "no 'done' line naming $SCRATCH/a: $log"
# The frame compared was computed after the restart: the signal came before it.
stopped=$(sed -n 's/^stopped at step \([0-9]*\),.*(signal)$/\1/p' <<<"$log")
expect_exit 0 "$PERCUSSION" info "$SCRATCH/a/trajectory.h5"
last=$(sed -n 's/^  frames: [0-9]* (steps 0 \.\. \([0-9]*\),.*/\1/p' <<<"$OUT")
{ [ -n "$stopped" ] && [ -n "$last" ] && [ "$stopped" -lt "$last" ]; } ||
  fail "the signal stopped the run at step '$stopped', not before its last frame (step '$last'): $log"
# One rank: the explicit integrator gives the same bits on any rank count, and needs no halo exchange here.
expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/straight" --steps "$steps"
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/straight/trajectory.h5" "$SCRATCH/a/trajectory.h5" --rtol 0

# (b) scancel: TERM to every process of the job. The run checkpoints and the job ends once, not requeued.
jb=$(submit "$SCRATCH/b" --steps "$steps")
wait_stepping "$SCRATCH/b"
scancel "$jb"
final=$(wait_done "$jb")
sleep 1  # settle: a requeue shows as PENDING with Restarts=1
log=$(cat "$cluster/log/job-$jb.out")
{ [ "$final" = CANCELLED ] && [ "$(job_field "$jb" JobState)" = CANCELLED ]; } ||  # once ended, still ended
  fail "job $jb is $(job_field "$jb" JobState) after scancel (want CANCELLED): $log"
[ "$(job_field "$jb" Restarts)" = 0 ] || fail "job $jb was requeued after scancel: $log"
grep -q "percussion exited with code 75" <<<"$log" || fail "the run did not exit 75 on scancel: $log"
grep -q "not requeueing" <<<"$log" || fail "the script did not say it stops: $log"
[ -L "$SCRATCH/b/checkpoints/latest" ] || fail "no checkpoint after scancel: $log"
grep -q '"exit": "signal"' "$SCRATCH/b/summary.json" || fail "summary.json does not record the signal"

# (c) A bad scene: exit 2, and the message names the job's output file, which holds percussion's message.
echo '{ "method": "bdem", ' > "$SCRATCH/broken.json"
scene=$SCRATCH/broken.json
jc=$(submit "$SCRATCH/c")
final=$(wait_done "$jc")
log=$(cat "$cluster/log/job-$jc.out")
[ "$final" = FAILED ] || fail "job $jc with a broken scene ended $final (want FAILED): $log"
[ "$(job_field "$jc" ExitCode)" = 2:0 ] || fail "job $jc exit code $(job_field "$jc" ExitCode) (want 2:0): $log"
named=$(sed -n 's/.*bad input.*the message is in \(.*\)$/\1/p' <<<"$log")
[ "$named" = "$cluster/log/job-$jc.out" ] || fail "the message names '$named', not the job output file: $log"
grep -qF "$scene" <<<"$log" || fail "percussion's own message is not in the job output: $log"

# (d) srun's MPI plugin is the script's SRUN_MPI (over the cluster's MpiDefault=pmix): with none, Debian's Open
# MPI cannot start, and the script names the job output, where Open MPI's message is, and SRUN_MPI.
scene=$INPUTS/bdem/beam_snap_small.json
jd=$(SRUN_MPI=none submit "$SCRATCH/d")
final=$(wait_done "$jd")
output=$cluster/log/job-$jd.out
log=$(cat "$output")
[ "$final" = FAILED ] || fail "job $jd with SRUN_MPI=none ended $final (want FAILED): $log"
grep -q "srun --mpi=none " <<<"$log" || fail "SRUN_MPI=none did not reach srun: $log"
grep -q "MPI_Init" <<<"$log" || fail "no MPI_Init failure in the job output: $log"
grep -qF "run.sbatch: failed; see $output" <<<"$log" || fail "the failure does not name $output: $log"
grep -qF "set SRUN_MPI (now 'none')" <<<"$log" || fail "the failure does not point to SRUN_MPI: $log"
echo "slurm: USR1 requeues and finishes bit-identically; scancel stops once with a checkpoint;" \
     "bad input and a wrong SRUN_MPI name the job output"

#!/usr/bin/env bash
# A sweep run as a Slurm job array on a single-node Slurm started here (the recipe of
# docs/architecture.md, "Sweeps and Slurm"): plan with --slurm, submit.sh submits the array
# and the merge after it (in a folder whose path holds a space); sweep.csv must be byte-identical
# to the same sweep run locally, and a
# resubmission after losing one result runs only that point. Exit 77 (skipped) when this machine
# cannot host Slurm: not root, or slurm-wlm/munge missing (scripts/bootstrap.sh installs them).
# usage: slurm_sweep.sh SCALECAST
set -uo pipefail
exe=$1
for b in sbatch slurmctld slurmd sinfo munge unmunge /usr/sbin/munged; do
  command -v "$b" >/dev/null || { echo "skip: $b not installed (scripts/bootstrap.sh)"; exit 77; }
done
[[ $(id -u) -eq 0 ]] || { echo "skip: starting munged and slurmd needs root"; exit 77; }

D=$(mktemp -d)
started_munge=0
cleanup() {
  [[ -f $D/run/slurmd.pid ]] && kill "$(cat "$D/run/slurmd.pid")" 2>/dev/null
  [[ -f $D/run/slurmctld.pid ]] && kill "$(cat "$D/run/slurmctld.pid")" 2>/dev/null
  if ((started_munge)) && [[ -f /run/munge/munged.pid ]]; then
    kill "$(cat /run/munge/munged.pid)" 2>/dev/null
  fi
  rm -rf "$D"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$D"/log/*.log "$SW"/slurm/*.out; do [[ -f $f ]] && { echo "== $f"; tail -20 "$f"; }; done; exit 1; }

mkdir -p "$D"/{state,spool,run,log}
SW="$D/my sweep"  # a space in the sweep folder: every path in the generated scripts is quoted
export SLURM_CONF=$D/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=scalecasttest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
NodeName=localhost CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /run/munge && chown munge:munge /run/munge
  runuser -u munge -- /usr/sbin/munged || fail "munged did not start"
  started_munge=1
  munge -n | unmunge >/dev/null || fail "munge does not authenticate"
fi
slurmctld -i || fail "slurmctld did not start"
slurmd -N localhost || fail "slurmd did not start"
for _ in $(seq 60); do [[ $(sinfo -h -o %t 2>/dev/null) == idle ]] && break; sleep 0.5; done
[[ $(sinfo -h -o %t) == idle ]] || fail "the Slurm node is not idle: $(sinfo -h -o %t)"

args=(scenarios/summit-resnet50.yaml --nodes 1,2 --axis allreduce.algorithm=ring,tree --set iterations=1)
"$exe" --quiet sweep "${args[@]}" --out "$D/local" >/dev/null || fail "local sweep"
"$exe" --quiet sweep "${args[@]}" --slurm --slurm-max-running 2 --out "$SW" || fail "sweep --slurm"
[[ -x $SW/slurm/submit.sh ]] || fail "no submit.sh"
SCALECAST_MERGE_WAIT=1 "$SW/slurm/submit.sh" 2>"$D/submit1.txt" >/dev/null || fail "submit: $(cat "$D/submit1.txt")"
cat "$D/submit1.txt"
grep -q "points 0-5" "$D/submit1.txt" || fail "expected the array of points 0-5"
cmp "$D/local/sweep.csv" "$SW/sweep.csv" || fail "Slurm sweep.csv differs from the local one"
echo "ok: Slurm job array sweep.csv == local sweep.csv ($(wc -l <"$SW/sweep.csv") lines)"

rm "$SW/results/point-4.json" "$SW/sweep.csv"
SCALECAST_MERGE_WAIT=1 "$SW/slurm/submit.sh" 2>"$D/submit2.txt" >/dev/null || fail "resubmit: $(cat "$D/submit2.txt")"
cat "$D/submit2.txt"
grep -q "points 4$" "$D/submit2.txt" || fail "expected a resubmission of point 4 only"
cmp "$D/local/sweep.csv" "$SW/sweep.csv" || fail "resumed sweep.csv differs"
echo "ok: a resubmission runs only the missing point and merges the same sweep.csv"

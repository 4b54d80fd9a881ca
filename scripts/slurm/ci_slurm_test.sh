#!/usr/bin/env bash
# Tests `weft batch` under a real Slurm on this machine (CI): starts munge,
# slurmctld and slurmd on localhost with a throw-away configuration,
# submits scripts/slurm/weft_batch.sbatch as an array of 3 tasks over
# data/batch/ci_manifest.json, waits, and checks every job's outputs and
# the merged index. Needs root and Debian's slurm-wlm and munge (installed
# here when missing; exit status 77 when they cannot be). Usage:
# scripts/slurm/ci_slurm_test.sh WEFT_BINARY
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
weft="$(realpath "$1")"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q slurm-wlm munge >/dev/null 2>&1; } \
        || { echo "SKIPPED: could not install slurm-wlm and munge (apt-get)" >&2; exit 77; }
fi
state="$(mktemp -d /tmp/weft-slurm.XXXXXX)"
host="$(hostname -s)"
mkdir -p "$state/ctld" "$state/d" "$state/munge"
cleanup() {
    [ -f "$state/slurmd.pid" ] && kill "$(cat "$state/slurmd.pid")" 2>/dev/null || true
    [ -f "$state/slurmctld.pid" ] && kill "$(cat "$state/slurmctld.pid")" 2>/dev/null || true
    [ -f "$state/munged.pid" ] && kill "$(cat "$state/munged.pid")" 2>/dev/null || true
}
trap cleanup EXIT
# munge: a fresh key and socket of our own.
dd if=/dev/urandom bs=1 count=1024 of="$state/munge/munge.key" 2>/dev/null
chmod 400 "$state/munge/munge.key"
munged --force --key-file="$state/munge/munge.key" --socket="$state/munge/socket" \
    --pid-file="$state/munged.pid" --log-file="$state/munged.log" --seed-file="$state/munge/seed"
cat > "$state/slurm.conf" <<CONF
ClusterName=weftci
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge/socket
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$state/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 1
done
sinfo
out="$state/batch"
manifest="$repo/data/batch/ci_manifest.json"
WEFT="$weft" sbatch --wait --array=0-2 --chdir="$state" \
    "$repo/scripts/slurm/weft_batch.sbatch" "$manifest" "$out"
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
index = json.load(open(os.path.join(out, "index.json")))
jobs = index["jobs"]
assert len(jobs) >= 3, jobs
for j in jobs:
    assert j["status"] == "done", j
    d = os.path.join(out, j["dir"])
    need = "final_state.json"
    assert os.path.isfile(os.path.join(d, need)), (j["name"], need)
print(f"slurm batch: {len(jobs)} jobs done over 3 array tasks; index merged")
PY

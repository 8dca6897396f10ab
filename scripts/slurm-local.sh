#!/usr/bin/env bash
# A one-node Slurm cluster on this host, for trying `stepscope diagnose --launcher 'srun ...'`
# end to end (Debian's munge, slurmctld and slurmd; scripts/setup.sh installs them).
#
#   scripts/slurm-local.sh start [--dir DIR] [--cpus N]
#       writes DIR/slurm.conf (one node, this host, N CPUs (default 32) whatever it has, so that
#       more ranks than cores fit: oversubscribed; PMIx as the MPI plugin, which Debian's OpenMPI
#       speaks), starts munged (when none runs), slurmctld and slurmd on ports 6917/6918, waits
#       for the node to be idle and prints the line to export: SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-local.sh stop [--dir DIR]
#       stops the daemons this script started (scontrol shutdown; munged only if it started
#       it) and removes DIR.
#
# Needs root. State in DIR (default /tmp/stepscope-slurm).
set -euo pipefail
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
cmd=${1:-}; shift || true
dir=/tmp/stepscope-slurm; cpus=32
while [[ $# -gt 0 ]]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; usage ;;
  esac
done
conf=$dir/slurm.conf

start() {
  for tool in munged slurmctld slurmd sinfo srun; do
    command -v "$tool" >/dev/null || { echo "$tool not found: run scripts/setup.sh" >&2; exit 1; }
  done
  if [[ -f $conf ]]; then
    echo "a cluster already runs from $dir; run: $0 stop --dir $dir" >&2; exit 1
  fi
  if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
    echo "slurmctld or slurmd already runs on this host: stop it first (this script starts its own)" >&2
    exit 1
  fi
  mkdir -p "$dir/state" "$dir/spool"
  local host; host=$(hostname -s)
  cat > "$conf" <<CONF
ClusterName=stepscope
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=pmix
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldPort=6917
SlurmdPort=6918
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:$cpus
CONF
  if ! pgrep -x munged >/dev/null; then
    install -d -o munge -g munge -m 755 /run/munge
    install -d -o munge -g munge /var/log/munge /var/lib/munge
    runuser -u munge -- /usr/sbin/munged
    touch "$dir/started-munged"
  fi
  SLURM_CONF=$conf slurmctld -f "$conf"
  SLURM_CONF=$conf slurmd -f "$conf"
  for _ in $(seq 60); do
    if SLURM_CONF=$conf sinfo -h -o %T 2>/dev/null | grep -qx idle; then
      echo "SLURM_CONF=$conf"
      return 0
    fi
    sleep 0.5
  done
  echo "the node did not become idle; logs: $dir/slurmctld.log $dir/slurmd.log" >&2
  SLURM_CONF=$conf sinfo -R >&2 || true
  exit 1
}

stop() {
  [[ -f $conf ]] || return 0
  SLURM_CONF=$conf scontrol shutdown 2>/dev/null || true
  for pidfile in "$dir/slurmctld.pid" "$dir/slurmd.pid"; do
    [[ -f $pidfile ]] || continue
    local pid; pid=$(cat "$pidfile")
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [[ -f $dir/started-munged ]]; then
    local pid; pid=$(pgrep -x -u munge munged || true)
    [[ -n $pid ]] && kill "$pid" || true
  fi
  rm -rf "$dir"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac

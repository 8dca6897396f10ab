#!/usr/bin/env bash
# Emulated hosts: K network namespaces joined through a bridge, each link shaped with tc, so that
# OpenMPI runs over real TCP between real processes as if they were on K machines.
#
#   scripts/emulated-hosts.sh create K [--rate MBIT] [--burst KB] [--delay MS] [--dir DIR]
#       creates namespaces stepscope-h0..h(K-1) (and stepscope-hbr holding the bridge), gives
#       them 10.213.X.1..K/24 (X chosen free on this machine), shapes each host's link with
#       tc (tbf at MBIT with a bucket of KB, default 64; netem when --delay MS is given), and
#       prints the launcher template for `stepscope diagnose --launcher` (mpirun inside
#       stepscope-h0, TCP across the hosts). tbf lets a full bucket through at once after an
#       idle gap: a link faster than MBIT for a message's first KB, more often the faster the
#       link refills it; a small bucket (8) keeps every rate close to a wire's.
#   scripts/emulated-hosts.sh destroy [--dir DIR]
#       removes exactly the namespaces listed in DIR/namespaces, then DIR.
#
# Needs root (ip netns add). Touches only the namespaces and addresses it created; the state
# lives in DIR (default /tmp/stepscope-emulated-hosts).
set -euo pipefail

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

cmd=${1:-}; shift || true
count=0; rate=1000; burst=64; delay=0; dir=/tmp/stepscope-emulated-hosts
if [[ $cmd == create ]]; then
  count=${1:-}; shift || true
  [[ $count =~ ^[0-9]+$ && $count -ge 1 && $count -le 200 ]] || { echo "create: K must be 1..200" >&2; usage; }
fi
while [[ $# -gt 0 ]]; do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; usage ;;
  esac
done

destroy() {
  [[ -f $dir/namespaces ]] || return 0
  # Processes still inside a namespace (an orted whose mpirun lost it when a link went down)
  # would keep it alive unnamed after `ip netns del`: they go first.
  while read -r ns; do
    [[ $ns == stepscope-h* ]] || continue
    local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -n $pids ]] && kill -9 $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done < "$dir/namespaces"
  rm -rf "$dir"
}

create() {
  if [[ -f $dir/namespaces ]]; then
    echo "emulated hosts already exist (state in $dir); run: $0 destroy --dir $dir" >&2
    exit 1
  fi
  for ((i = 0; i < count; ++i)); do
    if ip netns list | grep -qw "stepscope-h$i"; then
      echo "namespace stepscope-h$i exists but is not in $dir: remove it first" >&2; exit 1
    fi
  done
  # A /24 of 10.213.0.0/16 that no interface of this machine uses.
  local x
  for x in $(seq 77 254) $(seq 1 76); do
    ip -o addr show | grep -q " 10\.213\.$x\." || break
  done
  mkdir -p "$dir"
  : > "$dir/namespaces"
  trap 'echo "create failed; removing what was made" >&2; destroy' ERR
  local bridge=stepscope-hbr
  ip netns add "$bridge"; echo "$bridge" >> "$dir/namespaces"
  ip -n "$bridge" link add br0 type bridge
  ip -n "$bridge" link set br0 up
  : > "$dir/hostfile"
  : > "$dir/hosts"
  for ((i = 0; i < count; ++i)); do
    local ns=stepscope-h$i addr=10.213.$x.$((i + 1))
    ip netns add "$ns"; echo "$ns" >> "$dir/namespaces"
    ip link add "sh$i" netns "$ns" type veth peer name "p$i" netns "$bridge"
    ip -n "$ns" link set "sh$i" name veth0
    ip -n "$ns" addr add "$addr/24" dev veth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set veth0 up
    ip -n "$bridge" link set "p$i" master br0
    ip -n "$bridge" link set "p$i" up
    # Shape what leaves each host: every byte between two hosts crosses one shaped link.
    # netem when a delay is asked for (it needs the sch_netem kernel module), tbf otherwise.
    if [[ $delay != 0 ]]; then
      ip netns exec "$ns" tc qdisc add dev veth0 root netem rate "${rate}mbit" delay "${delay}ms" ||
        { echo "tc netem is not available here (sch_netem); drop --delay" >&2; false; }
    else
      ip netns exec "$ns" tc qdisc add dev veth0 root tbf rate "${rate}mbit" burst "${burst}kb" latency 1s
    fi
    echo "$addr slots=64" >> "$dir/hostfile"
    echo "$addr $ns" >> "$dir/hosts"
  done
  # OpenMPI's remote-shell agent: "agent HOST COMMAND..." runs COMMAND in HOST's namespace the
  # way ssh would (one shell command line).
  cat > "$dir/agent" <<AGENT
#!/bin/sh
host=\$1; shift
while [ "\${host#-}" != "\$host" ]; do host=\$1; shift; done  # skip ssh-style options
ns=\$(awk -v h="\$host" '\$1 == h { print \$2 }' "$dir/hosts")
[ -n "\$ns" ] || { echo "emulated-hosts agent: unknown host \$host" >&2; exit 1; }
exec ip netns exec "\$ns" /bin/sh -c "\$*"
AGENT
  chmod +x "$dir/agent"
  trap - ERR
  # rtc_hwloc_vmhole none: no daemon maps the host's topology into a hole of its address space
  # (hwloc_shmem_topology_write segfaulted an orted in 2 of about 100 runs of the TCP bench
  # here, a run lost each time; with it, 99 of 100 short launches of 4 ranks ran).
  echo "ip netns exec stepscope-h0 mpirun -np {n} --hostfile $dir/hostfile --map-by node" \
       "--oversubscribe --bind-to none --mca plm_rsh_agent $dir/agent" \
       "--mca btl tcp,self --mca btl_tcp_if_include veth0 --mca oob_tcp_if_include veth0" \
       "--mca mpi_yield_when_idle 1 --mca rtc_hwloc_vmhole none"
}

case $cmd in
  create) create ;;
  destroy) destroy ;;
  *) usage ;;
esac

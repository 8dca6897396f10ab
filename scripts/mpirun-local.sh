#!/usr/bin/env bash
# Run a program under OpenMPI on this one host: mpirun-local.sh NP PROGRAM [ARGS...]
# Allows root, oversubscribes when NP exceeds the cores, and makes waiting ranks yield the CPU.
set -euo pipefail
np=$1; shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec mpirun -np "$np" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
  --mca btl self,vader "$@"

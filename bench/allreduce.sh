#!/usr/bin/env bash
# All-reduce benchmark at 2 ranks: our algorithms against OpenMPI's default MPI_Allreduce
# (same run, with memcpy bandwidth per size), then OpenMPI's ring allreduce (coll_tuned
# algorithm 4), and the 25 MiB ratio of our best fp32 algorithm against both.
#   bench/allreduce.sh [BUILD_DIR] [extra bench_allreduce options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; shift || true
bin=$build/bench/bench_allreduce
np=${NP:-2}
[[ -x $bin ]] || { echo "missing $bin: cmake --build $build --target bench_allreduce" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "== OpenMPI default MPI_Allreduce and ours =="
scripts/mpirun-local.sh "$np" "$bin" --label default --memcpy "$@" | tee -a "$out" | grep -v '^RESULT'
echo
echo "== OpenMPI ring (coll_tuned_allreduce_algorithm 4) =="
scripts/mpirun-local.sh "$np" --mca coll_tuned_use_dynamic_rules 1 \
  --mca coll_tuned_allreduce_algorithm 4 "$bin" --label ompi-ring --algorithms mpi \
  --dtypes fp32 "$@" | tee -a "$out" | grep -v '^RESULT'
echo
# RESULT label algo dtype bytes median_seconds busbw
awk -v size=$((25 << 20)) '
  $1 == "RESULT" && $5 == size {
    if ($2 == "default" && $3 == "mpi" && $4 == "fp32") ompi = $6
    if ($2 == "ompi-ring" && $3 == "mpi" && $4 == "fp32") ring = $6
    if ($2 == "default" && $3 != "mpi" && $4 == "fp32" && (best == "" || $6 < best)) {
      best = $6; name = $3
    }
  }
  END {
    if (best == "") { print "no 25 MiB results"; exit }
    printf "25 MiB fp32: ours (%s) %.2f ms; %.2fx OpenMPI default (%.2f ms), %.2fx OpenMPI ring (%.2f ms)\n",
      name, best * 1e3, ompi / best, ompi * 1e3, ring / best, ring * 1e3
  }' "$out"

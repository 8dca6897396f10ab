#!/usr/bin/env bash
# Soak: the same diagnose sweep again and again for a given time, watching what a long campaign
# on one host would leak. Not part of CI.
#   bench/soak.sh SECONDS [BUILD_DIR] [OUT_CSV] [-- diagnose options]
# Each iteration runs `stepscope diagnose --fresh` into one folder and records, one CSV line:
#   iteration, wall seconds, peak RSS of the diagnose process (VmHWM, KiB), most open files of
#   it seen (sampled every 0.2 s), failed runs (diagnosis.json failed_runs[]), exit code,
#   entries in /dev/shm and in /tmp that look like OpenMPI session files, and stepscope or
#   orted processes left running after it (all three must stay flat).
# Default workload: a small mlp at 1, 2, 4 replicas with the ablations at 4 (6 runs, about
# 20 s on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:?usage: bench/soak.sh SECONDS [BUILD_DIR] [OUT_CSV] [-- diagnose options]}
build=${2:-build}
csv=${3:-bench/results/soak.csv}
shift $(( $# >= 3 ? 3 : $# ))
[[ ${1:-} == -- ]] && shift
workload=("$@")
if ((${#workload[@]} == 0)); then
  workload=(--model mlp --hidden 64 --batch 16 --steps 20 --warmup-steps 5
            --replicas 1,2,4 --ablate-at 4 --wire-check-steps 0)
fi
bin=$(realpath "$build/apps/stepscope/stepscope")
dir=$(mktemp -d /tmp/stepscope-soak-XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$(dirname "$csv")"
echo "iteration,seconds,peak_rss_kib,max_open_files,failed_runs,exit_code,shm_entries,ompi_tmp_entries,stray_processes" > "$csv"
count_shm() { find /dev/shm -maxdepth 1 -mindepth 1 2>/dev/null | wc -l; }
count_ompi_tmp() { find /tmp -maxdepth 1 -name 'ompi.*' 2>/dev/null | wc -l; }
count_stray() { { pgrep -f "$bin train" || true; pgrep -x orted || true; } | wc -l; }
end=$((SECONDS + duration))
i=0
while ((SECONDS < end)); do
  i=$((i + 1))
  start=$(date +%s.%N)
  "$bin" diagnose "${workload[@]}" --fresh --quiet --out "$dir/sweep" >"$dir/out.txt" 2>&1 &
  pid=$!
  rss=0; fds=0
  while kill -0 "$pid" 2>/dev/null; do
    r=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    f=$({ ls "/proc/$pid/fd" 2>/dev/null || true; } | wc -l)  # 0 once the process is gone
    ((${r:-0} > rss)) && rss=$r
    ((${f:-0} > fds)) && fds=$f
    sleep 0.2
  done
  code=0; wait "$pid" || code=$?
  seconds=$(echo "$(date +%s.%N) - $start" | bc)
  failed=$(python3 -c 'import json,sys
try: print(len(json.load(open(sys.argv[1]))["failed_runs"]))
except Exception: print(-1)' "$dir/sweep/diagnosis.json")
  sleep 1  # let OpenMPI's session cleanup finish before counting what is left
  line="$i,$seconds,$rss,$fds,$failed,$code,$(count_shm),$(count_ompi_tmp),$(count_stray)"
  echo "$line" >> "$csv"
  echo "soak: $line" >&2
  if ((code != 0)); then tail -20 "$dir/out.txt" >&2; fi
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if not rows:
    sys.exit("soak: no iteration finished")
def col(k): return [float(r[k]) for r in rows]
half = max(1, len(rows) // 2)
for k in ("peak_rss_kib", "max_open_files", "shm_entries", "ompi_tmp_entries", "stray_processes"):
    v = col(k)
    print(f"{k}: first half max {max(v[:half]):g}, second half max {max(v[half:] or v):g}")
print(f"iterations {len(rows)}, failed runs {int(sum(max(0, x) for x in col('failed_runs')))}, "
      f"non-zero exits {sum(1 for x in col('exit_code') if x != 0)}, "
      f"seconds per iteration median {sorted(col('seconds'))[len(rows) // 2]:.1f}")
PY

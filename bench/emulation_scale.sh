#!/usr/bin/env bash
# How many emulated replicas this host honours: one small gpt training run per replica count at
# a fixed emulated device speed, with how many paced compute segments and link reductions the
# host could not stretch enough (run.json emulation.*). Not part of CI.
#   bench/emulation_scale.sh [BUILD_DIR] [SPEED] [COUNTS...]     (default: build 0.01 32 64 96 128 161)
# A count is honoured when under 5 % of its segments and links are unhonoured (the share above
# which diagnose names no cause: verdict max_unhonoured_share); train refuses outright a speed
# above 0.8 x cores / replicas per replica (161 replicas at 0.01 on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; speed=${2:-0.01}; shift $(( $# >= 2 ? 2 : $# ))
counts=("$@"); ((${#counts[@]})) || counts=(32 64 96 128 161)
bin=$build/apps/stepscope/stepscope
echo "replicas,exit,wall_s,samples_per_s,paced_segments,unhonoured_segments,link_reductions,unhonoured_links,verdict"
for n in "${counts[@]}"; do
  out=$(mktemp -d /tmp/stepscope-scale-XXXXXX)
  start=$(date +%s.%N)
  code=0
  scripts/mpirun-local.sh "$n" "$bin" train --model gpt --layers 1 --width 64 --heads 2 \
    --context 64 --batch 2 --steps 12 --warmup-steps 3 --emulate-device-speed "$speed" \
    --no-eval --quiet --out "$out" >"$out.log" 2>&1 || code=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  python3 - "$out/run.json" "$n" "$code" "$wall" "$out.log" <<'PY'
import json, sys
path, n, code, wall, log = sys.argv[1:]
try:
    r = json.load(open(path)); e = r["emulation"]
    seg = e["unhonoured_segments"] / max(1, e["paced_segments"])
    links = r["buckets_per_step"] * e.get("counted_steps", r["steps"])
    link = e["unhonoured_links"] / max(1, links)
    verdict = "honoured" if seg <= 0.05 and link <= 0.05 else (
        f"NOT honoured ({seg:.0%} of segments, {link:.0%} of links): diagnose names no cause")
    print(f"{n},{code},{float(wall):.1f},{r['samples_per_s']:.1f},{e['paced_segments']},"
          f"{e['unhonoured_segments']},{links},{e['unhonoured_links']},{verdict}")
except (OSError, KeyError, ValueError):
    refusal = [l.strip() for l in open(log) if "stepscope" in l and "cannot honour" in l]
    print(f"{n},{code},{float(wall):.1f},,,,,,refused: " +
          (refusal[0] if refusal else open(log).read().strip().splitlines()[-1:][0] if open(log).read().strip() else "no output"))
PY
  rm -rf "$out" "$out.log"
done

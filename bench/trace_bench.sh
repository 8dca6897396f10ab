#!/bin/sh
# Generates a ~200 MB Kineto-like trace in a temporary directory, then measures, in one run,
# stepscope's reader + importer (bench_trace_read) and python3 json.loads on the same file.
# usage: bench/trace_bench.sh BUILD_DIR [MB]
set -eu
build=${1:-build}
mb=${2:-200}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../shared/data/traces/pytorch-kineto-gpu/trace_diff__control.json.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/trace_gen.py" "$src" "$tmp/big.json" "$mb"
# Timings on a loaded machine mean little: say how loaded it was.
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$build/bench/bench_trace_read" --repeats 3 "$tmp/big.json" | tee "$tmp/ours.txt"
py=$(python3 -c '
import json, sys, time
data = open(sys.argv[1], "rb").read()
best = 1e9
for _ in range(2):
    t = time.perf_counter(); json.loads(data); best = min(best, time.perf_counter() - t)
print("%.1f" % (len(data) / 1e6 / best))
' "$tmp/big.json")
ours=$(sed -n 's/^RESULT import_mb_per_s=//p' "$tmp/ours.txt")
echo "python3 json.loads: $py MB/s (best of 2, file already in memory)"
echo "stepscope reader+importer: $ours MB/s; ratio $(python3 -c "print('%.1f' % ($ours / $py))")x"

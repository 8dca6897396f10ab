#!/bin/sh
# Generates a ~200 MB Kineto-like trace in a temporary directory, then measures, in one run:
# stepscope's reader + importer (bench_trace_read) against python3 json.loads on the same file;
# the whole `stepscope analyze` of it; and the gzip'd file against inflating it alone (the
# reader's byte source without parsing), the bound for compressed input.
# usage: bench/trace_bench.sh BUILD_DIR [MB]
set -eu
build=${1:-build}
mb=${2:-200}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../tests/data/traces/pytorch-kineto-gpu/trace_diff__control.json.gz
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
best=$(sed -n 's/^RESULT import_best_mb_per_s=//p' "$tmp/ours.txt")
echo "python3 json.loads: $py MB/s (best of 2, file already in memory)"
echo "stepscope reader+importer: $ours MB/s median, $best MB/s best of 3;" \
  "ratio $(python3 -c "print('%.1f' % ($ours / $py))")x (median) $(python3 -c "print('%.1f' % ($best / $py))")x (best)"
# Best-of-3 wall time of a command, as MB/s of the uncompressed trace.
rate() {
  python3 -c '
import subprocess, sys, time
size, cmd = float(sys.argv[1]), sys.argv[2:]
best = 1e9
for _ in range(3):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    best = min(best, time.perf_counter() - t)
print("%.1f" % (size / 1e6 / best))
' "$(stat -c %s "$tmp/big.json")" "$@"
}
if [ -x "$build/apps/stepscope/stepscope" ]; then
  echo "stepscope analyze (whole analysis, best of 3): $(rate "$build/apps/stepscope/stepscope" analyze "$tmp/big.json") MB/s"
fi
gzip -1 -c "$tmp/big.json" > "$tmp/big.json.gz"
"$build/bench/bench_trace_read" --repeats 3 "$tmp/big.json.gz" > "$tmp/gz.txt"
gz=$(sed -n 's/^RESULT import_best_mb_per_s=//p' "$tmp/gz.txt")
inflate=$(sed -n 's/^RESULT bytes_best_mb_per_s=//p' "$tmp/gz.txt")
echo "gzip input: reader+importer $gz MB/s against inflating alone $inflate MB/s (best of 3);" \
  "ratio $(python3 -c "print('%.2f' % ($gz / $inflate))")"

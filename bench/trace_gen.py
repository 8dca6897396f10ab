#!/usr/bin/env python3
"""Writes a large Kineto-like trace by repeating a real trace's events with shifted timestamps.

usage: trace_gen.py SOURCE.json[.gz] OUT.json TARGET_MB
"""
import gzip
import json
import sys


def main():
    src, out, target_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        doc = json.load(f)
    events = [e for e in doc["traceEvents"] if "ts" in e]
    ts = [e["ts"] for e in events]
    span = max(ts) - min(ts) + 1000.0
    meta = {k: v for k, v in doc.items() if k != "traceEvents"}
    target = int(target_mb * 1e6)
    written = 0
    with open(out, "w") as f:
        head = json.dumps(meta)[:-1] + ', "traceEvents": [\n'
        f.write(head)
        written += len(head)
        rep = 0
        first = True
        while written < target:
            shift = rep * span
            parts = []
            for e in events:
                e2 = dict(e)
                e2["ts"] = e["ts"] + shift
                parts.append(json.dumps(e2))
            chunk = ("" if first else ",\n") + ",\n".join(parts)
            f.write(chunk)
            written += len(chunk)
            first = False
            rep += 1
        f.write("\n]}\n")
    print(f"wrote {out}: {written / 1e6:.1f} MB, {rep} repeats of {len(events)} events")


if __name__ == "__main__":
    main()

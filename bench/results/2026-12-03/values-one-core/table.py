#!/usr/bin/env python3
"""Prints the median-latency ranges over the rounds and Needle's ratio to the
faster peer (the peer's best median over Needle's best), for each request
kind, on one core and on two: python3 table.py DIR."""
import json
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
rows = {}
for run in sorted(root.glob("r*-*")):
    cores = run.name.split("-")[1]
    for engine in ["needle", "tantivy", "lucene"]:
        for r in json.loads((run / f"{engine}.json").read_text()):
            rows.setdefault((cores, r["request"]), {}).setdefault(engine, []).append(r["p50_us"])
print("| cores | request | Needle | tantivy | Lucene | Needle / faster peer |")
print("|---|---|---:|---:|---:|---:|")
for (cores, request), m in rows.items():
    span = lambda v: f"{min(v):,}-{max(v):,}" if min(v) != max(v) else f"{v[0]:,}"
    best = min(min(m["tantivy"]), min(m["lucene"]))
    print(f"| {cores} | {request} | {span(m['needle'])} | {span(m['tantivy'])} | {span(m['lucene'])} | {best / min(m['needle']):.2f}x |")

#!/usr/bin/env python3
"""Tables of a folder of HTTP benchmark results (bench/README.md, section 7b):
capacity and latencies of each `capacity` run (`*-*.N.json`, N the round),
the servers' CPU per query over the first steps (from `server_cpu_seconds` in
the bridge's STATS; offered rate x 13 s of warm-up and timing per step), each
`bulk` run, and the validation comparisons of round 1.

    python3 bench/http/capacity_table.py bench/results/2026-11-24/http
"""
import json, sys, glob, os
d = sys.argv[1]
def load(p):
    return json.load(open(p))
rows = []
for p in sorted(glob.glob(os.path.join(d, '*-*.[12].json'))):
    r = load(p)
    if r.get('kind') != 'capacity':
        continue
    cats = r['categories']
    prev = None
    cpu = []
    for c in cats:
        s = c['engine_stats'].get('server_cpu_seconds')
        if s is not None and prev is not None:
            cpu.append((s - prev) / (c['load']['offered_rate'] * 13.0) * 1000)
        prev = s
    first = cats[0]['load']
    held = r['capacity_qps']
    at = [c['load'] for c in cats if abs(c['load']['offered_rate'] - (held or 0)) < 1e-6]
    rows.append((r['label'], os.path.basename(p).split('.')[1], held, first['latency']['p50_ms'], first['latency']['p99_ms'],
                 at[0]['latency']['p50_ms'] if at else None, at[0]['latency']['p99_ms'] if at else None,
                 (sum(cpu[:3]) / len(cpu[:3])) if cpu else None))
print("| configuration | round | capacity (q/s, p99 <= 50 ms) | p50 / p99 at 400/s (ms) | p50 / p99 at capacity (ms) | server CPU ms/query (low rates) |")
print("|---|---|---|---|---|---|")
for l, rnd, held, p50, p99, p50c, p99c, cpu in rows:
    cpu_s = f"{cpu:.3f}" if cpu is not None else "-"
    print(f"| {l} | {rnd} | {held:,.0f} | {p50:.3f} / {p99:.3f} | {p50c:.3f} / {p99c:.3f} | {cpu_s} |")
for p in sorted(glob.glob(os.path.join(d, 'bulk-*.json'))):
    b = load(p); m = b['measured']
    print(f"bulk {os.path.basename(p)}: {b['docs_per_second']:.0f} docs/s, ingest {m['ingest_seconds']:.2f} s, server CPU {m['server_cpu_seconds_ingest']:.1f} s, refresh {m['refresh_seconds']:.2f} s, forcemerge {m['forcemerge_seconds']:.2f} s, store {m['store_bytes']/1e6:.1f} MB")
for p in sorted(glob.glob(os.path.join(d, '*.1.json'))):
    r = load(p)
    for v in r.get('validation', []):
        print(f"validation {v['engine']} vs {v['other']}: {v['queries']} queries, counts differ {v['count_differs']}, top-10 differ {v['top_ids_differ']} (compared: {v['top_ids_compared']}), errors {v['errors']}")

#!/usr/bin/env python3
"""Field-value searches over HTTP, Needle's server beside OpenSearch: the same
documents (the real corpus with derived keyword, long, double and date
fields), the same requests, one client sending them one after another after a
warm-up, latencies per request kind. Checks the two agree on totals and
aggregations before timing.

    python3 bench/http/values.py --needle http://127.0.0.1:9202 --opensearch http://127.0.0.1:9201 \\
        --corpus ../shared/data/corpus.jsonl.gz [--docs 138000] [--runs 200] > report.md

Both servers must be running (`needle serve --data DIR --bind 127.0.0.1:9202`;
../shared/opensearch/start.sh with OS_PORT=9201); the index `values-bench` is
created on each (replaced if present).
"""

import argparse
import gzip
import json
import statistics
import time
import urllib.request
import zlib

INDEX = "values-bench"
MAPPING = {"properties": {
    "title": {"type": "text"}, "body": {"type": "text"}, "source": {"type": "keyword"},
    "words": {"type": "long"}, "rating": {"type": "double"}, "stamp": {"type": "date"},
}}
DAY = 86_400_000
EPOCH_2000 = 946_684_800_000

REQUESTS = {
    # What a request costs this client and each server before any search work.
    "match_none (floor)": {"size": 0, "query": {"match_none": {}}},
    "sort by long, match_all": {"size": 10, "sort": [{"words": "desc"}], "_source": False},
    "match + date range filter": {"size": 10, "_source": False, "query": {"bool": {
        "must": {"match": {"body": "government"}},
        "filter": {"range": {"stamp": {"gte": "2010-01-01", "lt": "2015-01-01"}}}}}},
    "count a long range": {"size": 0, "track_total_hits": True,
                           "query": {"range": {"words": {"gte": 100, "lte": 200}}}},
    "terms on keyword": {"size": 0, "aggs": {"s": {"terms": {"field": "source", "size": 10}}}},
    "date_histogram + avg": {"size": 0, "aggs": {"y": {"date_histogram": {"field": "stamp", "calendar_interval": "year"},
                                                       "aggs": {"r": {"avg": {"field": "rating"}}}}}},
    "stats + histogram": {"size": 0, "aggs": {"w": {"stats": {"field": "words"}},
                                              "h": {"histogram": {"field": "rating", "interval": 10}}}},
    "match, sort by date": {"size": 10, "_source": False, "sort": [{"stamp": "desc"}],
                            "query": {"match": {"body": "war"}}},
}


def call(base, method, path, body=None, ndjson=False):
    data, headers = None, {}
    if body is not None:
        data = body.encode() if ndjson else json.dumps(body).encode()
        headers["content-type"] = "application/x-ndjson" if ndjson else "application/json"
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())


def documents(path, limit):
    with gzip.open(path, "rt") as f:
        for n, line in enumerate(f):
            if n >= limit:
                return
            d = json.loads(line)
            h = zlib.crc32(d["id"].encode())
            d["words"] = len(d.get("body", "").split())
            d["rating"] = (h % 10_000) / 100
            d["stamp"] = EPOCH_2000 + (h % (25 * 365)) * DAY + h % DAY
            yield d


def load(base, docs, extra_settings):
    call(base, "DELETE", f"/{INDEX}")
    body = {"mappings": MAPPING}
    if extra_settings:
        body["settings"] = extra_settings
    created = call(base, "PUT", f"/{INDEX}", body)
    assert created.get("acknowledged"), created
    started = time.time()
    for i in range(0, len(docs), 5000):
        lines = []
        for d in docs[i:i + 5000]:
            lines.append(json.dumps({"index": {"_index": INDEX, "_id": d["id"]}}))
            lines.append(json.dumps({k: v for k, v in d.items() if k != "id"}))
        r = call(base, "POST", "/_bulk", "\n".join(lines) + "\n", ndjson=True)
        assert not r.get("errors"), json.dumps(r)[:500]
    call(base, "POST", f"/{INDEX}/_refresh")
    return time.time() - started


def comparable(answer):
    return {"total": answer["hits"].get("total"), "aggregations": answer.get("aggregations"),
            "ids": [h["_id"] for h in answer["hits"]["hits"]]}


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= 1e-6 * max(1, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    return a == b


def timed(base, body, runs):
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        answer = call(base, "POST", f"/{INDEX}/_search?request_cache=false", body)
        out.append((time.perf_counter() - t) * 1e3)
        assert "error" not in answer, answer
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--needle", default="http://127.0.0.1:9202")
    ap.add_argument("--opensearch", default="http://127.0.0.1:9201")
    ap.add_argument("--corpus", default="../shared/data/corpus.jsonl.gz")
    ap.add_argument("--docs", type=int, default=138_000)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--reuse", action="store_true", help="search the indexes a previous run loaded")
    args = ap.parse_args()
    docs = list(documents(args.corpus, args.docs))
    if args.reuse:
        load_needle = load_os = float("nan")
    else:
        load_needle = load(args.needle, docs, None)
        load_os = load(args.opensearch, docs, {"index": {"number_of_shards": 1, "number_of_replicas": 0}})
    print(f"# Field-value searches over HTTP: Needle beside OpenSearch\n")
    print(f"{len(docs)} documents of `{args.corpus}` (title, body; derived `source` keyword, `words` long, "
          f"`rating` double, `stamp` date); one client, requests one after another; {args.warmup} warm-up "
          f"runs then {args.runs} timed runs per request, the two servers interleaved by request kind; "
          f"`request_cache=false` (OpenSearch would otherwise answer repeated `size: 0` requests from its cache).\n")
    print(f"Load (`_bulk` of 5,000 documents, then `_refresh`): Needle {load_needle:.1f} s, "
          f"OpenSearch {load_os:.1f} s.\n")
    print("| request | agree | Needle p50 ms | Needle p99 ms | OpenSearch p50 ms | OpenSearch p99 ms | p50 ratio (OpenSearch / Needle) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, body in REQUESTS.items():
        a = comparable(call(args.needle, "POST", f"/{INDEX}/_search", body))
        b = comparable(call(args.opensearch, "POST", f"/{INDEX}/_search", body))
        agree = "yes" if close(a, b) else "NO"
        timed(args.needle, body, args.warmup)
        timed(args.opensearch, body, args.warmup)
        n = timed(args.needle, body, args.runs)
        o = timed(args.opensearch, body, args.runs)
        print(f"| {name} | {agree} | {pct(n, 50):.2f} | {pct(n, 99):.2f} | {pct(o, 50):.2f} | {pct(o, 99):.2f} | "
              f"{pct(o, 50) / pct(n, 50):.2f} |")
        if agree == "NO":
            print(f"\n<!-- {name}: Needle {json.dumps(a)[:400]} / OpenSearch {json.dumps(b)[:400]} -->\n")


if __name__ == "__main__":
    main()

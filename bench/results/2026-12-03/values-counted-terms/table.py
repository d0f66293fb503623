import json, glob, sys
def med(pattern):
    out = {}
    for f in sorted(glob.glob(pattern)):
        for row in json.load(open(f)):
            out.setdefault(row["request"], []).append(row["p50_us"])
    return out
base = sys.argv[1]
cols = {
  "needle": med(f"{base}/r*/needle.json"), "tantivy": med(f"{base}/r*/tantivy.json"), "lucene": med(f"{base}/r*/lucene.json"),
  "nh": med(f"{base}/r*/needle-http.json"), "oh": med(f"{base}/r*/opensearch-http.json"),
  "nn": med(f"{base}/nocache/r*/needle-nocache-http.json"), "on": med(f"{base}/nocache/r*/opensearch-nocache-http.json"),
}
def rng(v): return f"{min(v):,}-{max(v):,}" if min(v) != max(v) else f"{min(v):,}"
names = {"floor": "floor (`match_none`)", "sort_long": "sort all by a long", "match_sort_date": "a match sorted by a date",
 "match_range_filter": "a match with a date range filter", "count_range": "count a long range", "terms_all": "`terms` on the keyword, all",
 "terms_10pct": "`terms`, a tenth", "date_histogram_all": "30-day `date_histogram` + `avg`, all", "date_histogram_10pct": "the same over a tenth",
 "stats_histogram": "`stats` + `histogram`"}
print("| request | Needle | tantivy | Lucene | in-process: Needle / best peer | Needle HTTP, cache on | OpenSearch, cache on | on: Needle / OpenSearch | Needle HTTP, cache off | OpenSearch, cache off | off: Needle / OpenSearch |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for k, name in names.items():
    n, t, l = cols["needle"][k], cols["tantivy"][k], cols["lucene"][k]
    best = min(min(t), min(l))
    r = lambda a, b: f"{min(b)/min(a):.2f}x"
    print(f"| {name} | {rng(n)} | {rng(t)} | {rng(l)} | {best/min(n):.2f}x | {rng(cols['nh'][k])} | {rng(cols['oh'][k])} | {r(cols['nh'][k], cols['oh'][k])} | {rng(cols['nn'][k])} | {rng(cols['on'][k])} | {r(cols['nn'][k], cols['on'][k])} |")

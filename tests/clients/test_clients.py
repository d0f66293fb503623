"""The official Python clients, unchanged, against `needle serve`.

    python test_clients.py NEEDLE_BINARY es9|es8|opensearch

Starts the server on a free loopback port over a temporary data folder,
creates an index with a mapping, bulk-loads 10,000 documents with the
client's `helpers.bulk`, searches (match, bool, phrase, highlight, paging,
sorts, search_after, ranges, aggregations, scan), updates, deletes, counts, checks that each error arrives as the client's
exception class, and stops the server with SIGTERM (it must exit cleanly).
Expected counts come from the documents themselves, computed here.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
N = 10_000


def document(i):
    words = [WORDS[i % 7], WORDS[(i // 7) % 7], WORDS[(i // 49) % 7]]
    return {"title": f"item {i}", "body": " ".join(words), "tag": "even" if i % 2 == 0 else "odd", "n": i}


def expected(pred):
    return sum(1 for i in range(N) if pred(document(i)))


def start(binary, data, api_key=None):
    args = [binary, "serve", "--data", data, "--bind", "127.0.0.1:0"]
    env = dict(os.environ)
    if api_key:
        env["NEEDLE_API_KEY"] = api_key
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)
    for line in proc.stderr:
        m = re.search(r"on (http://[0-9.:]+)", line)
        if m:
            return proc, m.group(1)
    raise SystemExit(f"needle serve did not start (exit {proc.wait()})")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=60)
    assert code == 0, f"needle serve exited {code} on SIGTERM"


class Elastic:
    """elasticsearch 8.x and 9.x: keyword arguments, `from_`."""

    def __init__(self, url, api_key=None):
        import elasticsearch

        self.m = elasticsearch
        self.c = elasticsearch.Elasticsearch(url, api_key=api_key, request_timeout=60)
        self.bad_request = elasticsearch.BadRequestError
        self.auth_error = elasticsearch.AuthenticationException

    def create(self, index, mappings):
        return self.c.indices.create(index=index, mappings=mappings, settings={"number_of_shards": 1})

    def search(self, index, **body):
        if "from" in body:
            body["from_"] = body.pop("from")
        return self.c.search(index=index, **body)

    def count(self, index, query):
        return self.c.count(index=index, query=query)["count"]

    def update(self, index, id, doc):
        return self.c.update(index=index, id=id, doc=doc)

    def put(self, index, id, doc, **conditions):
        return self.c.index(index=index, id=id, document=doc, **conditions)

    def bulk(self, actions):
        from elasticsearch import helpers

        return helpers.bulk(self.c, actions)

    def msearch(self, searches):
        return self.c.msearch(searches=searches)

    def scan(self, index, query, size):
        from elasticsearch import helpers

        return helpers.scan(self.c, index=index, query={"query": query}, size=size)


class OpenSearch:
    """opensearch-py 3.x: request bodies as `body`."""

    def __init__(self, url, api_key=None):
        import opensearchpy

        self.m = opensearchpy
        headers = {"Authorization": f"ApiKey {api_key}"} if api_key else None
        self.c = opensearchpy.OpenSearch(hosts=[url], headers=headers, timeout=60)
        self.bad_request = opensearchpy.RequestError
        self.auth_error = opensearchpy.AuthenticationException

    def create(self, index, mappings):
        return self.c.indices.create(index=index, body={"mappings": mappings, "settings": {"number_of_shards": 1}})

    def search(self, index, **body):
        return self.c.search(index=index, body=body)

    def count(self, index, query):
        return self.c.count(index=index, body={"query": query})["count"]

    def update(self, index, id, doc):
        return self.c.update(index=index, id=id, body={"doc": doc})

    def put(self, index, id, doc, **conditions):
        return self.c.index(index=index, id=id, body=doc, params=conditions)

    def bulk(self, actions):
        from opensearchpy import helpers

        return helpers.bulk(self.c, actions)

    def msearch(self, searches):
        return self.c.msearch(body=searches)

    def scan(self, index, query, size):
        from opensearchpy import helpers

        return helpers.scan(self.c, index=index, query={"query": query}, size=size)


def raises(kind, call, words=None):
    try:
        call()
    except kind as e:
        if words:
            assert words in str(e), f"{kind.__name__} without {words!r}: {e}"
        return e
    raise AssertionError(f"expected {kind.__name__}")


def exercise(client):
    c = client.c
    assert c.info()["version"]["number"].startswith("9")
    mappings = {"properties": {"title": {"type": "text"}, "body": {"type": "text"}, "tag": {"type": "keyword"}, "n": {"type": "long"}}}
    assert client.create("docs", mappings)["acknowledged"]
    assert c.indices.exists(index="docs")
    ok, errors = client.bulk({"_index": "docs", "_id": str(i), "_source": document(i)} for i in range(N))
    assert (ok, errors) == (N, []), (ok, errors)
    c.indices.refresh(index="docs")
    assert client.count("docs", {"match_all": {}}) == N

    # Queries: counts against the documents themselves.
    alpha = expected(lambda d: "alpha" in d["body"].split())
    r = client.search("docs", query={"match": {"body": "alpha"}}, track_total_hits=True)
    assert r["hits"]["total"]["value"] == alpha, (r["hits"]["total"], alpha)
    both = expected(lambda d: {"alpha", "beta"} <= set(d["body"].split()) and d["tag"] == "even")
    query = {"bool": {"must": [{"match": {"body": "alpha"}}, {"match": {"body": "beta"}}], "filter": [{"term": {"tag": "even"}}]}}
    assert client.count("docs", query) == both
    phrase = expected(lambda d: "gamma delta" in d["body"])
    assert client.count("docs", {"match_phrase": {"body": "gamma delta"}}) == phrase
    r = client.search("docs", query={"match_phrase": {"body": "gamma delta"}}, highlight={"fields": {"body": {}}}, size=3)
    for hit in r["hits"]["hits"]:
        fragment = hit["highlight"]["body"][0]
        assert "<em>gamma" in fragment and "gamma delta" in re.sub("</?em>", "", fragment), hit

    # Paging with from/size gives every hit once, in score order.
    seen = []
    for start_at in range(0, 40, 10):
        page = client.search("docs", query={"match": {"body": "eta zeta"}}, **{"from": start_at}, size=10)
        seen += [h["_id"] for h in page["hits"]["hits"]]
    whole = client.search("docs", query={"match": {"body": "eta zeta"}}, size=40)
    assert seen == [h["_id"] for h in whole["hits"]["hits"]]

    # Field values: sort, search_after, range, aggregations.
    r = client.search("docs", sort=[{"n": "desc"}], size=3)
    assert [h["_id"] for h in r["hits"]["hits"]] == [str(N - 1), str(N - 2), str(N - 3)], r["hits"]["hits"]
    assert r["hits"]["hits"][0]["sort"] == [N - 1]
    after = client.search("docs", sort=[{"n": "desc"}], size=2, search_after=[N - 3])
    assert [h["_id"] for h in after["hits"]["hits"]] == [str(N - 4), str(N - 5)]
    assert client.count("docs", {"range": {"n": {"gte": 100, "lt": 250}}}) == 150
    aggs = {"tags": {"terms": {"field": "tag"}, "aggs": {"top": {"max": {"field": "n"}}}}, "n": {"stats": {"field": "n"}}}
    r = client.search("docs", size=0, aggs=aggs)
    buckets = {b["key"]: (b["doc_count"], b["top"]["value"]) for b in r["aggregations"]["tags"]["buckets"]}
    assert buckets == {"even": (N // 2, N - 2), "odd": (N // 2, N - 1)}, buckets
    assert r["aggregations"]["n"]["sum"] == sum(range(N))
    r = client.search("docs", size=0, aggs={"tags": {"cardinality": {"field": "tag"}}, "ns": {"cardinality": {"field": "n"}}})
    assert r["aggregations"]["tags"]["value"] == 2, r["aggregations"]
    assert abs(r["aggregations"]["ns"]["value"] - N) <= N * 0.02, r["aggregations"]
    top = {"tags": {"terms": {"field": "tag"}, "aggs": {"last": {"top_hits": {"size": 2, "sort": [{"n": "desc"}], "_source": ["n"]}}}}}
    r = client.search("docs", size=0, aggs=top)
    last = {b["key"]: [h["_source"]["n"] for h in b["last"]["hits"]["hits"]] for b in r["aggregations"]["tags"]["buckets"]}
    assert last == {"even": [N - 2, N - 4], "odd": [N - 1, N - 3]}, last

    # Several searches in one request, each answered or failed alone; ranges in the query string.
    r = client.msearch([{"index": "docs"}, {"query": {"match": {"body": "alpha"}}, "track_total_hits": True},
                        {"index": "nope"}, {"query": {"match_all": {}}}])
    assert r["responses"][0]["hits"]["total"]["value"] == alpha, r["responses"][0]
    assert r["responses"][1]["status"] == 404, r["responses"][1]
    assert client.count("docs", {"query_string": {"query": "n:[100 TO 250}"}}) == 150

    # Scrolling: helpers.scan reads every match once, page by page.
    scanned = sorted((h["_id"] for h in client.scan("docs", {"match": {"body": "alpha"}}, size=7)), key=int)
    assert scanned == [str(i) for i in range(N) if "alpha" in document(i)["body"].split()], scanned
    assert len({h["_id"] for h in client.scan("docs", {"match_all": {}}, size=100)}) == N
    # Over several indexes (a pattern), the scan reads each in turn.
    assert client.bulk({"_index": "docs-extra", "_id": f"x{i}", "_source": document(i)} for i in range(5))[0] == 5
    c.indices.refresh(index="docs-extra")
    assert len({(h["_index"], h["_id"]) for h in client.scan("docs*", {"match_all": {}}, size=7)}) == N + 5
    assert c.indices.delete(index="docs-extra")["acknowledged"]

    # Prefix, wildcard and fuzzy queries.
    assert client.count("docs", {"prefix": {"body": "alp"}}) == alpha
    assert client.count("docs", {"fuzzy": {"body": "alpah"}}) == alpha
    assert client.count("docs", {"query_string": {"query": "al?ha OR bet*"}}) == expected(
        lambda d: {"alpha", "beta"} & set(d["body"].split())
    )

    # Update, conditional writes, delete.
    r = client.update("docs", "7", {"n": -7, "extra": "yes"})
    assert r["result"] == "updated"
    got = c.get(index="docs", id="7")
    assert got["_source"]["n"] == -7 and got["_source"]["extra"] == "yes" and got["_source"]["title"] == "item 7"
    stale = got["_seq_no"] + 1000
    raises(client.m.ConflictError, lambda: client.put("docs", "7", {"title": "x"}, if_seq_no=stale, if_primary_term=1))
    r = client.put("docs", "7", {"title": "replaced"}, if_seq_no=got["_seq_no"], if_primary_term=got["_primary_term"])
    assert r["result"] == "updated"
    assert c.delete(index="docs", id="7")["result"] == "deleted"
    raises(client.m.NotFoundError, lambda: c.get(index="docs", id="7"))
    assert client.count("docs", {"match_all": {}}) == N - 1

    # Errors arrive as the client's exception classes.
    raises(client.m.NotFoundError, lambda: client.search("nope", query={"match_all": {}}), "index_not_found_exception")
    raises(client.bad_request, lambda: client.search("docs", query={"bogus": {}}), "unknown query [bogus]")
    raises(client.bad_request, lambda: client.search("docs", aggs={"t": {"percentiles": {"field": "n"}}}), "Unknown aggregation type")
    raises(client.bad_request, lambda: client.create("docs", mappings), "resource_already_exists_exception")
    stats = c.indices.stats(index="docs")["indices"]["docs"]["primaries"]
    assert stats["docs"]["count"] == N - 1 and stats["indexing"]["delete_total"] == 1, stats
    rows = c.cat.indices(format="json")
    assert [(r["index"], r["docs.count"]) for r in rows] == [("docs", str(N - 1))], rows
    assert c.cluster.health()["status"] == "green"
    assert c.indices.delete(index="docs")["acknowledged"]


def main():
    binary, which = sys.argv[1], sys.argv[2]
    kind = {"es9": Elastic, "es8": Elastic, "opensearch": OpenSearch}[which]
    with tempfile.TemporaryDirectory() as data:
        proc, url = start(binary, data)
        try:
            exercise(kind(url))
        finally:
            stop(proc)
        # With an API key, a client without it is refused, one with it is served.
        proc, url = start(binary, data, api_key="k3y")
        try:
            raises(kind(url).auth_error, lambda: kind(url).c.info())
            assert kind(url, api_key="k3y").c.info()["tagline"] == "You Know, for Search"
        finally:
            stop(proc)
    print(f"{which}: all checks passed")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to field-value searches (sorts,
ranges, exists, aggregations, docvalue_fields) on a generated set of documents, for
`crates/needle-server/tests/api/opensearch_parity.rs` to compare Needle's
answers with, field for field.

    python3 tests/golden/opensearch/record.py http://127.0.0.1:9201 > tests/golden/opensearch/values.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard). The documents are
made from a fixed seed, so a rerun writes the same requests.
"""

import base64
import gzip
import json
import os
import random
import sys
import urllib.request

INDEX = "needle-values"
MAPPING = {
    "properties": {
        "title": {"type": "text"},
        "year": {"type": "long"},
        "rating": {"type": "double"},
        "when": {"type": "date"},
        "ok": {"type": "boolean"},
        "tag": {"type": "keyword"},
        "blob": {"type": "binary", "doc_values": True},
    }
}
DOUBLES = [-0.0, 0.0, -1.5, 2.25, 1e300, -1e300, 7.0, 0.1, -7.0, 2.5, 5.0, 4.999]
DATES = [
    "1969-12-31T23:59:59.999Z", "1970-01-01", "1999-12-31T23:59:59Z", "2000-01-01T00:00:00+01:00",
    "2020-02-29", "2020-03-01T00:00:00Z", "2020-03-15T08:30:00-05:00", "2020-03-31T23:59:59.999Z",
    "2020-04-01", "2024-06-30T12:00", "1850-07-04",
]
WORDS = ["red", "green", "blue"]
TAGS = ["alpha", "beta", "Gamma", "delta", "épsilon", "z", "beta-2"]


def documents():
    rng = random.Random(16)
    # Its own generator, so the other fields are as they were before binary values came.
    blobs = random.Random(17)
    docs = []
    for i in range(120):
        doc = {"title": f"{rng.choice(WORDS)} {rng.choice(WORDS)}"}
        if rng.random() < 0.8:
            years = [rng.randrange(1990, 2030) for _ in range(rng.randrange(1, 3))]
            doc["year"] = years[0] if len(years) == 1 else years
        if rng.random() < 0.75:
            doc["rating"] = rng.choice(DOUBLES)
        if rng.random() < 0.75:
            when = rng.choice(DATES)
            doc["when"] = when if rng.random() < 0.8 else int(rng.randrange(-10**12, 2 * 10**12))
        if rng.random() < 0.7:
            doc["ok"] = rng.random() < 0.5
        if rng.random() < 0.8:
            tags = [rng.choice(TAGS) for _ in range(rng.randrange(1, 4))]
            doc["tag"] = tags[0] if len(tags) == 1 else tags
        if blobs.random() < 0.6:
            raw = bytes(blobs.randrange(256) for _ in range(blobs.randrange(0, 7)))
            doc["blob"] = base64.b64encode(raw).decode()
        docs.append({"id": str(i), "source": doc})
    return docs


def searches():
    out = []
    sorts = [
        [{"year": "asc"}, {"_doc": "asc"}],
        [{"year": "desc"}, {"_doc": "asc"}],
        [{"rating": "asc"}, {"_doc": "asc"}],
        [{"rating": {"order": "desc", "missing": "_first"}}, {"_doc": "asc"}],
        [{"when": "desc"}, {"_doc": "asc"}],
        [{"when": {"order": "asc", "missing": "_first"}}, {"_doc": "asc"}],
        [{"ok": "asc"}, {"year": "desc"}, {"_doc": "asc"}],
        [{"tag": "asc"}, {"_doc": "asc"}],
        [{"tag": {"order": "desc", "missing": "_first"}}, {"_doc": "asc"}],
    ]
    for sort in sorts:
        out.append({"size": 30, "sort": sort, "_source": False})
    out.append({"size": 10, "sort": [{"year": "asc"}, {"_doc": "asc"}], "search_after": [2005, 40], "_source": False})
    out.append({"size": 10, "sort": [{"tag": "asc"}, {"_doc": "asc"}], "search_after": ["beta", 50], "_source": False})
    out.append({"size": 10, "query": {"match": {"title": "red"}}, "sort": ["_score", {"rating": "asc"}, {"_doc": "asc"}],
                "_source": False})
    ranges = [
        {"year": {"gte": 2000, "lt": 2010}},
        {"year": {"gt": 1999.5, "lte": 2003.7}},
        {"year": {"gt": 2029}},
        {"rating": {"gte": 0}},
        {"rating": {"gt": -0.0, "lt": 5}},
        {"rating": {"gte": -1.5, "lte": 2.25}},
        {"when": {"gte": "2020-03", "lte": "2020-03"}},
        {"when": {"gt": "2020-03-15", "lt": "2020-04-01"}},
        {"when": {"lt": "1970"}},
        {"when": {"gte": "2000-01-01T00:00:00Z", "lte": "2020"}},
        {"when": {"gte": 0, "lte": 946684800000}},
        {"ok": {"gte": True}},
        # Date formats, time zones and date math in the bounds.
        {"when": {"gte": "01/03/2020", "lte": "31/03/2020", "format": "dd/MM/yyyy"}},
        {"when": {"gte": "2020-03-01T00:00:00", "lt": "2020-04-01T00:00:00", "time_zone": "-05:00"}},
        {"when": {"gte": "2020-02-29||+1d/d", "lte": "2020-03-31||/M"}},
        {"when": {"gt": "2020-03-15||/d", "time_zone": "Europe/Paris"}},
        {"when": {"gte": "2020", "lte": "2020", "format": "yyyy"}},
        {"when": {"gte": 1577836800, "format": "epoch_second"}},
        {"when": {"gte": 1990, "lte": 2020}},
        {"when": {"lt": "2000-01-01 00:00||-1y", "format": "yyyy-MM-dd HH:mm||strict_date_optional_time"}},
    ]
    for r in ranges:
        out.append({"size": 200, "query": {"range": r}, "sort": [{"_doc": "asc"}], "_source": False})
    out.append({"size": 200, "query": {"exists": {"field": "when"}}, "sort": [{"_doc": "asc"}], "_source": False})
    out.append({"size": 200, "query": {"exists": {"field": "tag"}}, "sort": [{"_doc": "asc"}], "_source": False})
    out.append({"size": 200, "query": {"bool": {"must": {"match": {"title": "blue"}},
                                                "filter": {"range": {"year": {"lte": 2015}}}}},
                "_source": False})
    # Term queries on numeric, date and boolean fields: constant scores (point queries).
    terms = [
        {"term": {"year": 2005}},
        {"term": {"rating": 2.25}},
        {"terms": {"year": [1999, 2001, 2020]}},
        {"term": {"ok": True}},
        {"term": {"when": "2020-02-29"}},
        {"term": {"when": "2020-03-31T23:59:59.999Z"}},
        {"bool": {"must": {"match": {"title": "red"}},
                  "should": [{"term": {"year": {"value": 2010, "boost": 2}}}, {"term": {"ok": False}}]}},
        {"query_string": {"query": "year:2012 OR title:green"}},
    ]
    # Ranges in the query string (bracketed and one-sided), and ranges of terms.
    for q in ["year:[2000 TO 2010}", "year:>2020", "year:<=1995 OR year:>=2028", "when:[2020-03-01 TO 2020-03-31]",
              "when:>=2020-03-15", "when:{* TO 1970-01-01]", "tag:[alpha TO delta]", "tag:{beta TO z}",
              "title:[green TO red]", "rating:[0 TO *]", "rating:>2.25", "year:[2000 TO 2010] AND when:>=2020-01-01",
              "when:[2020-03-01||/M TO 2020-03-01||+1M/M]", "tag:>=delta", "year:[\"2000\" TO \"2005\"]",
              "title:{blue TO green}^2", "tag:[Gamma TO beta] OR title:red",
              "_exists_:when", "_exists_:tag AND title:red", "title:blue AND NOT _exists_:year", "_exists_:nope"]:
        terms.append({"query_string": {"query": q}})
    terms.append({"range": {"tag": {"gte": "beta", "lt": "delta"}}})
    terms.append({"range": {"tag": {"gt": "alpha", "boost": 3}}})
    terms.append({"bool": {"must": {"match": {"title": "red"}}, "filter": {"range": {"tag": {"lte": "beta-2"}}}}})
    for q in terms:
        out.append({"size": 200, "query": q, "_source": False})
    aggs = {
        "year_stats": {"stats": {"field": "year"}},
        "rating_avg": {"avg": {"field": "rating"}},
        "rating_min": {"min": {"field": "rating"}},
        "when_max": {"max": {"field": "when"}},
        "year_count": {"value_count": {"field": "year"}},
        "years": {"terms": {"field": "year", "size": 5}},
        "years_by_key": {"terms": {"field": "year", "size": 4, "order": {"_key": "desc"}}},
        "flags": {"terms": {"field": "ok"}, "aggs": {"rating_sum": {"sum": {"field": "rating"}}}},
        "rating_hist": {"histogram": {"field": "rating", "interval": 2.5, "min_doc_count": 1}},
        "year_hist": {"histogram": {"field": "year", "interval": 5}},
        "by_year": {"date_histogram": {"field": "when", "calendar_interval": "year", "min_doc_count": 1}},
        "by_month_2020": {"date_histogram": {"field": "when", "calendar_interval": "month", "min_doc_count": 1},
                          "aggs": {"years": {"max": {"field": "year"}}}},
        "by_30d": {"date_histogram": {"field": "when", "fixed_interval": "30d", "min_doc_count": 1}},
        "rating_ranges": {"range": {"field": "rating", "ranges": [{"to": 0}, {"from": 0, "to": 5}, {"from": 5, "key": "high"}]}},
        "tags": {"terms": {"field": "tag", "size": 4}, "aggs": {"years": {"stats": {"field": "year"}}}},
        "tags_by_key": {"terms": {"field": "tag", "order": {"_key": "asc"}}},
        "distinct_tags": {"cardinality": {"field": "tag"}},
        "distinct_years": {"cardinality": {"field": "year"}},
        "distinct_ratings": {"cardinality": {"field": "rating", "precision_threshold": 100}},
        "distinct_when": {"cardinality": {"field": "when"}},
        "tag_values": {"value_count": {"field": "tag"}},
        "years_by_tag": {"terms": {"field": "tag"}, "aggs": {"distinct": {"cardinality": {"field": "year"}}}},
        "red_docs": {"filter": {"match": {"title": "red"}}, "aggs": {"years": {"stats": {"field": "year"}}}},
        "by_filters": {"filters": {"filters": {"old": {"range": {"year": {"lt": 2000}}},
                                               "tagged": {"exists": {"field": "tag"}}}},
                       "aggs": {"rating": {"avg": {"field": "rating"}}}},
        "listed": {"filters": {"filters": [{"term": {"ok": True}}, {"prefix": {"tag": "be"}}]}},
        "tags_filtered": {"terms": {"field": "tag"}, "aggs": {"blue": {"filter": {"match": {"title": "blue"}}}}},
        "by_month_ny": {"date_histogram": {"field": "when", "calendar_interval": "month",
                                           "time_zone": "America/New_York", "min_doc_count": 1}},
        "by_day_paris": {"date_histogram": {"field": "when", "calendar_interval": "day",
                                            "time_zone": "Europe/Paris", "min_doc_count": 1}},
        "by_year_kolkata": {"date_histogram": {"field": "when", "calendar_interval": "year",
                                               "time_zone": "Asia/Kolkata", "min_doc_count": 1}},
        "by_12h_offset": {"date_histogram": {"field": "when", "fixed_interval": "12h",
                                             "time_zone": "+05:30", "min_doc_count": 1}},
        "by_7d_ny": {"date_histogram": {"field": "when", "fixed_interval": "7d",
                                        "time_zone": "America/New_York", "min_doc_count": 1}},
        "by_month_shown": {"date_histogram": {"field": "when", "calendar_interval": "month", "format": "yyyy-MM",
                                              "min_doc_count": 1}},
        "by_day_shown_paris": {"date_histogram": {"field": "when", "calendar_interval": "day",
                                                  "format": "dd/MM/yyyy HH:mm XXX", "time_zone": "Europe/Paris",
                                                  "min_doc_count": 1}},
        "when_min_shown": {"min": {"field": "when", "format": "yyyy-MM-dd"}},
        "when_ranges": {"date_range": {"field": "when", "ranges": [
            {"to": "2000-01-01"}, {"from": "2000-01-01", "to": "2020-03-01||+1M"}, {"from": "2020-04"}]}},
        "when_ranges_shown": {"date_range": {"field": "when", "format": "yyyy", "ranges": [
            {"to": "2000"}, {"from": "2000", "key": "recent"}]}},
        "when_terms_shown": {"terms": {"field": "when", "size": 3, "format": "epoch_second"}},
        # extended_bounds: empty buckets out to the bounds (min_doc_count 0), as dashboards ask.
        "year_hist_extended": {"histogram": {"field": "year", "interval": 5, "extended_bounds": {"min": 1972, "max": 2042}}},
        "by_year_extended": {"date_histogram": {"field": "when", "calendar_interval": "year", "min_doc_count": 0,
                                                "extended_bounds": {"min": "1840", "max": "2040-06"}}},
        "by_decade_millis": {"date_histogram": {"field": "when", "fixed_interval": "3650d", "min_doc_count": 0,
                                                "format": "epoch_millis",
                                                "extended_bounds": {"min": -5000000000000, "max": 2500000000000}}},
        "by_month_narrow": {"date_histogram": {"field": "when", "calendar_interval": "month", "min_doc_count": 0,
                                               "time_zone": "Europe/Paris",
                                               "extended_bounds": {"min": "2020-01-01", "max": "2020-02-01"}}},
    }
    out.append({"size": 0, "aggs": aggs})
    out.append({"size": 0, "query": {"match": {"title": "green"}}, "aggs": aggs})
    # Doc values of every kind in the hits, and exists on a binary field.
    every = ["year", "rating", "when", "ok", "tag", "blob", "_id", "nope"]
    out.append({"size": 40, "sort": [{"_doc": "asc"}], "_source": False, "docvalue_fields": every})
    out.append({"size": 20, "query": {"range": {"year": {"gte": 2010}}}, "sort": [{"year": "desc"}, {"_doc": "asc"}],
                "_source": False, "docvalue_fields": [{"field": "when", "format": "epoch_millis"}, "r*", "ta*"]})
    out.append({"size": 20, "sort": [{"_doc": "asc"}], "_source": False,
                "docvalue_fields": [{"field": "when", "format": "EEE, d MMM yyyy HH:mm:ss.SSS XX"}]})
    out.append({"size": 200, "query": {"exists": {"field": "blob"}}, "sort": [{"_doc": "asc"}], "_source": False})
    # top_hits: by score, by fields, with from, sources, doc values, versions, highlights, in buckets.
    tops = {
        "best_by_tag": {"terms": {"field": "tag", "size": 3}, "aggs": {"best": {"top_hits": {"size": 2}}}},
        "newest_by_year": {"histogram": {"field": "year", "interval": 10},
                           "aggs": {"newest": {"top_hits": {"size": 2, "sort": [{"when": "desc"}],
                                                            "_source": {"includes": ["year", "tag"]}}}}},
        "lowest_rated": {"top_hits": {"from": 2, "size": 4, "sort": [{"rating": "asc"}, {"_doc": "desc"}],
                                      "docvalue_fields": ["when"], "version": True, "_source": False}},
        "scored_by_flag": {"terms": {"field": "ok"}, "aggs": {"top": {"top_hits": {
            "size": 3, "sort": [{"tag": "desc"}, "_score"], "track_scores": True, "_source": ["title"]}}}},
        "marked": {"filter": {"range": {"year": {"gte": 2010}}}, "aggs": {"top": {"top_hits": {
            "size": 2, "highlight": {"fields": {"title": {}}}, "_source": False}}}},
    }
    out.append({"size": 0, "query": {"match": {"title": "red"}}, "aggs": tops})
    out.append({"size": 0, "aggs": tops})
    # filters' other bucket: the documents matching none of the filters.
    others = {
        "keyed": {"filters": {"filters": {"old": {"range": {"year": {"lt": 2000}}}, "blue": {"match": {"title": "blue"}}},
                              "other_bucket": True}, "aggs": {"years": {"stats": {"field": "year"}}}},
        "listed": {"filters": {"filters": [{"term": {"ok": True}}], "other_bucket_key": "rest"}},
        "named": {"filters": {"filters": {"tagged": {"exists": {"field": "tag"}}}, "other_bucket_key": "untagged"}},
        "not_asked": {"filters": {"filters": {"z": {"term": {"tag": "z"}}}, "other_bucket": False}},
    }
    out.append({"size": 0, "aggs": others})
    out.append({"size": 0, "query": {"match": {"title": "red"}}, "aggs": others})
    # Date histograms' offset (buckets start that long after the interval's start) and
    # histograms' hard_bounds (no bucket outside them, not even an extended bound's).
    shifted = {
        "by_12h_plus_6h": {"date_histogram": {"field": "when", "fixed_interval": "12h", "offset": "+6h",
                                              "min_doc_count": 1}},
        "by_day_minus_3h_paris": {"date_histogram": {"field": "when", "calendar_interval": "day", "offset": "-3h",
                                                     "time_zone": "Europe/Paris", "min_doc_count": 1}},
        "by_month_plus_1d": {"date_histogram": {"field": "when", "calendar_interval": "month", "offset": "1d",
                                                "min_doc_count": 1}},
        "by_year_offset_gaps": {"date_histogram": {"field": "when", "calendar_interval": "year", "offset": "+31d",
                                                   "extended_bounds": {"min": "1995", "max": "2026"}}},
        "year_hard": {"histogram": {"field": "year", "interval": 5, "hard_bounds": {"min": 2000, "max": 2015}}},
        "year_hard_extended": {"histogram": {"field": "year", "interval": 4, "offset": 1,
                                             "hard_bounds": {"min": 1995.5, "max": 2021},
                                             "extended_bounds": {"min": 1996, "max": 2020}}},
        "rating_hard_open": {"histogram": {"field": "rating", "interval": 2.5, "hard_bounds": {"min": 0},
                                           "min_doc_count": 1}},
        "when_hard": {"date_histogram": {"field": "when", "calendar_interval": "year",
                                         "hard_bounds": {"min": "2000-01-01", "max": "2020-03-15"}},
                      "aggs": {"years": {"max": {"field": "year"}}}},
        "when_hard_month_offset": {"date_histogram": {"field": "when", "calendar_interval": "month", "offset": "+2d",
                                                      "hard_bounds": {"min": "2020-02-01", "max": "2020-04-01"},
                                                      "min_doc_count": 0}},
    }
    out.append({"size": 0, "aggs": shifted})
    out.append({"size": 0, "query": {"match": {"title": "blue"}}, "aggs": shifted})
    # terms' include and exclude: a regular expression or a list of values.
    filtered = {
        "tags_regexp": {"terms": {"field": "tag", "include": "[a-d].*", "exclude": "beta-.*"}},
        "tags_listed": {"terms": {"field": "tag", "include": ["alpha", "z", "nope"], "size": 1}},
        "tags_not": {"terms": {"field": "tag", "exclude": ["beta", "Gamma"]},
                     "aggs": {"years": {"terms": {"field": "year", "include": [2000, 2004, 2020, 2021]}}}},
        "years_not": {"terms": {"field": "year", "exclude": [2004, 2028], "size": 5}},
        "ratings_in": {"terms": {"field": "rating", "include": [2.25, -1.5, 0]}},
    }
    out.append({"size": 0, "aggs": filtered})
    out.append({"size": 0, "query": {"match": {"title": "red"}}, "aggs": filtered})
    # no_match_size: a highlighted field where nothing matched shows its start.
    out.append({"size": 12, "query": {"term": {"tag": "beta"}}, "sort": [{"_doc": "asc"}], "_source": False,
                "highlight": {"fields": {"title": {"no_match_size": 4}, "tag": {}}}})
    out.append({"size": 12, "query": {"bool": {"should": [{"match": {"title": "red"}}, {"term": {"tag": "z"}}]}},
                "sort": [{"_doc": "asc"}], "_source": False,
                "highlight": {"no_match_size": 7, "fields": {"t*": {}, "year": {}}}})
    # missing: what a document without a value counts as, in buckets and metrics.
    missing = {
        "tags_or_none": {"terms": {"field": "tag", "missing": "none", "size": 20}},
        "tags_or_beta": {"terms": {"field": "tag", "missing": "beta"},
                         "aggs": {"avg_year": {"avg": {"field": "year", "missing": 1000}}}},
        "years_or_0": {"terms": {"field": "year", "missing": 0, "size": 3, "order": {"_key": "asc"}}},
        "ratings_or": {"histogram": {"field": "rating", "interval": 5, "missing": -3.5,
                                     "hard_bounds": {"min": -10, "max": 10}}},
        "when_or": {"date_histogram": {"field": "when", "calendar_interval": "year", "missing": "2021-07-01",
                                       "min_doc_count": 1}},
        "ok_or": {"terms": {"field": "ok", "missing": True}},
        "year_stats": {"stats": {"field": "year", "missing": 1990}},
        "distinct_tags": {"cardinality": {"field": "tag", "missing": "zz"}},
        "counted": {"value_count": {"field": "rating", "missing": 1}},
        "year_ranges": {"range": {"field": "year", "missing": 2000, "ranges": [{"to": 2001}, {"from": 2001}]}},
        "unmapped_or": {"terms": {"field": "nowhere", "missing": "gone"}},
    }
    out.append({"size": 0, "aggs": missing})
    out.append({"size": 0, "query": {"match": {"title": "green"}}, "aggs": missing})
    # include by partition: the terms whose hash falls in one of n partitions.
    partitions = {
        f"{field}_{p}_of_{n}": {"terms": {"field": field, "size": 50, "include": {"partition": p, "num_partitions": n}}}
        for field, n in [("tag", 3), ("year", 4), ("rating", 3), ("when", 2), ("ok", 2)]
        for p in range(n)
    }
    partitions["tags_or_none_1_of_2"] = {"terms": {"field": "tag", "missing": "none",
                                                    "include": {"partition": 1, "num_partitions": 2}}}
    out.append({"size": 0, "aggs": partitions})
    # format on numeric fields: DecimalFormat patterns in every place a number is shown.
    shown = {
        "year_min": {"min": {"field": "year", "format": "#,##0.00"}},
        "rating_max": {"max": {"field": "rating", "format": "0.###"}},
        "rating_avg": {"avg": {"field": "rating", "format": "#.#"}},
        "year_sum": {"sum": {"field": "year", "format": "'Y'#,###;('Y'#)"}},
        "rating_stats": {"stats": {"field": "rating", "format": ".##"}},
        "rating_count": {"value_count": {"field": "rating", "format": "0.0"}},
        "rating_hist": {"histogram": {"field": "rating", "interval": 2.5, "format": "0.00",
                                      "hard_bounds": {"min": -10, "max": 10}}},
        "year_terms": {"terms": {"field": "year", "format": "0000 AD", "size": 4}},
        "rating_terms": {"terms": {"field": "rating", "format": "#%", "size": 20}},
        "year_ranges": {"range": {"field": "year", "format": "#,##0", "ranges": [{"to": 2000}, {"from": 2000, "to": 2010.5}, {"from": 2010.5}]}},
    }
    out.append({"size": 0, "aggs": shown})
    out.append({"size": 0, "query": {"term": {"tag": "nowhere"}}, "aggs": shown})
    return out


def call(base, method, path, body=None, ndjson=False):
    data = None
    headers = {}
    if body is not None:
        data = body.encode() if ndjson else json.dumps(body).encode()
        headers["content-type"] = "application/x-ndjson" if ndjson else "application/json"
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return json.loads(e.read())


def call_with_status(base, method, path, body=None):
    """A JSON request's status and JSON answer (a body that is a string is
    sent as it is, as NDJSON: a `_bulk` request's)."""
    if isinstance(body, str):
        data, headers = body.encode(), {"content-type": "application/x-ndjson"}
    else:
        data = None if body is None else json.dumps(body).encode()
        headers = {"content-type": "application/json"} if body is not None else {}
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    # A HEAD request's answer has no body: None.
    def answer(raw):
        return json.loads(raw) if raw else None
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, answer(r.read())
    except urllib.error.HTTPError as e:
        return e.code, answer(e.read())


def record_steps(base, steps, shaped):
    """Sends each (method, path, body) of `steps` in turn; returns the node's
    name and a case for each: the request, its status and `shaped` answer."""
    _, node = call_with_status(base, "GET", "/")
    cases = []
    for method, path, body in steps:
        status, answer = call_with_status(base, method, path, body)
        cases.append({"method": method, "path": path, "body": body, "status": status, "answer": shaped(answer)})
    return node["version"]["distribution"] + " " + node["version"]["number"], cases


def fresh_index(base, index, mapping):
    """Creates `index` (one shard, no replica) with `mapping`, dropping any earlier one."""
    call(base, "DELETE", f"/{index}")
    settings = {"index": {"number_of_shards": 1, "number_of_replicas": 0}}
    created = call(base, "PUT", f"/{index}", {"settings": settings, "mappings": mapping})
    assert created.get("acknowledged"), created


def load_merged(base, index, mapping, docs):
    """Creates `index` (see `fresh_index`), sends it `docs`, each under its
    `id`, and force-merges it to one segment."""
    fresh_index(base, index, mapping)
    lines = []
    for d in docs:
        lines.append(json.dumps({"index": {"_index": index, "_id": d["id"]}}))
        lines.append(json.dumps(d))
    bulk = call(base, "POST", "/_bulk?refresh=true", "\n".join(lines) + "\n", ndjson=True)
    assert not bulk["errors"], bulk
    call(base, "POST", f"/{index}/_forcemerge?max_num_segments=1")
    call(base, "POST", f"/{index}/_refresh")


def load_corpus_split(base, parts, mapping):
    """Loads the bundled State of the Union corpus into the indexes `parts`
    (see `load_merged`), the document on line i into part i % len(parts)."""
    corpus = os.path.join(os.path.dirname(__file__), "../../../examples/data/sotu.jsonl.gz")
    with gzip.open(corpus, "rt") as f:
        docs = [json.loads(line) for line in f]
    for n, part in enumerate(parts):
        load_merged(base, part, mapping, docs[n::len(parts)])


def print_golden(fields, cases):
    """Prints `fields` (name, value pairs) and `cases` as one JSON object,
    one case a line: the file stays readable and diffs stay small."""
    print("{")
    for name, value in fields:
        print(f' "{name}": {json.dumps(value, sort_keys=True)},')
    print(' "cases": [')
    print(",\n".join("  " + json.dumps(c, sort_keys=True) for c in cases))
    print(" ]")
    print("}")


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    fresh_index(base, INDEX, MAPPING)
    docs = documents()
    lines = []
    for d in docs:
        lines.append(json.dumps({"index": {"_index": INDEX, "_id": d["id"]}}))
        lines.append(json.dumps(d["source"]))
    bulk = call(base, "POST", "/_bulk?refresh=true", "\n".join(lines) + "\n", ndjson=True)
    assert not bulk["errors"], bulk
    node = call(base, "GET", "/")
    cases = []
    for body in searches():
        answer = call(base, "POST", f"/{INDEX}/_search", body)
        answer.pop("took", None)
        cases.append({"body": body, "answer": answer})
    out = {"node": node["version"]["distribution"] + " " + node["version"]["number"],
           "mapping": MAPPING, "docs": docs, "cases": cases}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()

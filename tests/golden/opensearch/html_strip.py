#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to requests over analyzers with
the `html_strip` char filter (Lucene's HTMLStripCharFilter: tags out, a
newline for a block element's, entities decoded, comments, scripts and
styles gone, CDATA kept, `escaped_tags` left as they are): `_analyze`
tokens, whose offsets point into the original markup, the settings as
shown, searches through such fields (words in attributes and entity names
are not found, phrases run across tags), and a normalizer naming it,
which both refuse; for
`crates/needle-server/tests/api/opensearch_multi_fields.rs` to replay on
Needle and compare step by step, shaped as `multi_fields.py` shapes them.
(Needle's filter is also checked against Lucene's own on thousands of
generated cases, offsets and all: `tests/golden/lucene/html_strip.jsonl`.)

    python3 tests/golden/opensearch/html_strip.py http://127.0.0.1:9201 > tests/golden/opensearch/html_strip.json

The node: ../shared/opensearch (OpenSearch 3.8, one shard an index).
"""

from multi_fields import analyze_step, bulk_step, record_main, search_step

INDEX = "needle-hs"
SETTINGS = {"analysis": {
    "char_filter": {
        "keep_b": {"type": "html_strip", "escaped_tags": ["b"]},
        "keep_listed": {"type": "html_strip", "escaped_tags": "i, SPAN"},
        "amp_word": {"type": "mapping", "mappings": ["& => \\u0020and\\u0020"]},
    },
    "analyzer": {
        "web": {"tokenizer": "standard", "char_filter": ["html_strip"], "filter": ["lowercase"]},
        "bold_kept": {"tokenizer": "whitespace", "char_filter": ["keep_b"]},
        "decoded_then_mapped": {"tokenizer": "standard", "char_filter": ["html_strip", "amp_word"],
                                "filter": ["lowercase"]},
    },
}}
MAPPING = {"properties": {
    "body": {"type": "text", "analyzer": "web"},
    "raw": {"type": "text", "analyzer": "bold_kept"},
    "mixed": {"type": "text", "analyzer": "decoded_then_mapped"},
}}
DOCS = [
    {"body": "<p class=\"lead\">The <b>quick</b> <i>brown</i> fox</p>", "raw": "<b>bold</b> <i>it</i>",
     "mixed": "salt &amp; pepper"},
    {"body": "<div>one</div><div>two</div><!-- hidden words -->", "raw": "plain <b>x</b>",
     "mixed": "fish &#38; chips"},
    {"body": "Caf&eacute; &lt;open&gt; <script>var secret = 1;</script>daily", "raw": "<br/>line",
     "mixed": "<p>rock</p><p>&amp;</p><p>roll</p>"},
    {"body": "<![CDATA[x < y]]> &#x41;&#66;C <a href='x>y'>link</a>", "raw": "<b class='k'>k</b>", "mixed": "none"},
]
TEXTS = [
    "<p>I&apos;m so <b>happy</b>!</p>", "a < b > c", "x<br>y", "x<div class='q'>y</div>z",
    "one &amp; two &lt;3 &gt; &nbsp;x &#65;&#x42; &copy; &bogus; &amp", "<!-- c -->a<!--x-->b",
    "a<script>var x=1;</script>b", "a<style>p{}</style>b", "<![CDATA[a<b]]>c", "a<?php echo 1 ?>b",
    "<!DOCTYPE html>a", "a <span>b</span>c", "<a href=\"x>y\">t</a>", "a</b c>d", "a<1>b", "<B>UP</B>",
    "x<li>y<li>z", "<h1>T</h1><h2>U</h2>", "a<!--unterminated", "&Eacute;t&eacute; caf&eacute;",
    "<td>a</td><td>b</td>", "a\u00e9<b>c</b> \U0001F600<p>d</p>", "tab<\tp>x", "x &copy", "word<xé",
]


def search(body, index=INDEX):
    return search_step(body, index)


def analyze(body, index=INDEX):
    return analyze_step(body, index)


def steps():
    out = [
        ("PUT", f"/{INDEX}", {"settings": SETTINGS, "mappings": MAPPING}),
        ("GET", f"/{INDEX}/_settings?filter_path=*.settings.index.analysis", None),
        bulk_step(INDEX, DOCS),
        analyze({"field": "body", "text": DOCS[0]["body"]}),
        analyze({"field": "raw", "text": "<b>bold</b> <i>it</i> <B>up</B>"}),
        analyze({"field": "mixed", "text": "salt &amp; pepper"}),
        analyze({"tokenizer": "keyword", "char_filter": ["keep_listed"], "text": "<i>a</i><span>b</span><b>c</b>"}),
        analyze({"tokenizer": "keyword", "char_filter": [{"type": "html_strip", "escaped_tags": ["script"]}],
                 "text": "a<script>x</script>b"}, None),
    ]
    out += [analyze({"tokenizer": "standard", "char_filter": ["html_strip"], "text": t}, None) for t in TEXTS]
    out += [analyze({"tokenizer": "keyword", "char_filter": ["html_strip"], "text": t}, None) for t in TEXTS]
    out += [
        search({"query": {"match": {"body": "quick"}}}),
        search({"query": {"match": {"body": "lead"}}}),
        search({"query": {"match": {"body": "class"}}}),
        search({"query": {"match": {"body": "eacute"}}}),
        search({"query": {"match": {"body": "café"}}}),
        search({"query": {"match": {"body": "secret"}}}),
        search({"query": {"match": {"body": "hidden"}}}),
        search({"query": {"match_phrase": {"body": "quick brown fox"}}}),
        search({"query": {"match_phrase": {"body": "one two"}}}),
        search({"query": {"match": {"body": "abc"}}}),
        search({"query": {"match": {"body": "link"}}}),
        search({"query": {"match": {"raw": "<b>bold</b>"}}}),
        search({"query": {"match": {"raw": "it"}}}),
        search({"query": {"match": {"mixed": "and"}}}),
        search({"query": {"match_phrase": {"mixed": "rock and roll"}}}),
        ("PUT", "/needle-hs-bad", {"settings": {"analysis": {
            "normalizer": {"n": {"type": "custom", "char_filter": ["html_strip"]}}}}}),
    ]
    return out


def main():
    record_main([INDEX, "needle-hs-bad"], steps)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to `_field_caps` requests over
two indexes whose mappings agree on some fields and not on others, for
`crates/needle-server/tests/api/opensearch_field_caps.rs` to send Needle and
compare: the status, the indexes and every mapped field's entry (metadata
fields, whose set is each engine's own, are left out), or the error's type.

    python3 tests/golden/opensearch/field_caps.py http://127.0.0.1:9201 > tests/golden/opensearch/field_caps.json

The node: ../shared/opensearch (OpenSearch 3.8).
"""

import sys

from record import call_with_status as call, fresh_index, print_golden, record_steps

MAPPINGS = {
    "needle-caps-a": {"properties": {
        "title": {"type": "text"}, "tag": {"type": "keyword"}, "n": {"type": "long"},
        "rating": {"type": "double"}, "when": {"type": "date"}, "ok": {"type": "boolean"},
        "blob": {"type": "binary"}, "raw": {"type": "text", "index": False}}},
    "needle-caps-b": {"properties": {
        "title": {"type": "text", "index": False}, "tag": {"type": "long"}, "n": {"type": "long"}}},
}


def requests():
    both = "needle-caps-a,needle-caps-b"
    return [
        ("GET", f"/{both}/_field_caps?fields=title,tag,n,raw,blob", None),
        ("GET", f"/{both}/_field_caps?fields=*", None),
        ("GET", f"/{both}/_field_caps?fields=r*,ok&include_unmapped=true", None),
        ("GET", "/needle-caps-a/_field_caps?fields=*", None),
        ("POST", "/needle-caps-b/_field_caps?fields=tag,nothing", None),
        ("GET", "/needle-caps-a/_field_caps?fields=nothing", None),
        ("GET", "/needle-caps-a/_field_caps", None),
        ("GET", "/needle-caps-*/_field_caps?fields=when,tag", None),
        ("GET", "/needle-no-such-index/_field_caps?fields=*", None),
    ]


def shaped(answer):
    if isinstance(answer.get("error"), dict):
        return {"error": answer["error"]["type"]}
    fields = {k: v for k, v in answer["fields"].items() if not k.startswith("_")}
    return {"indices": answer["indices"], "fields": fields}


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    for index, mapping in MAPPINGS.items():
        fresh_index(base, index, mapping)
    name, cases = record_steps(base, requests(), shaped)
    for index in MAPPINGS:
        call(base, "DELETE", f"/{index}")
    print_golden([("node", name), ("mappings", MAPPINGS)], cases)


if __name__ == "__main__":
    main()

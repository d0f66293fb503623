#!/usr/bin/env python3
"""Records a real OpenSearch node's answers to a sequence of index and
component template requests (put, get, delete; indexes made by `PUT` and by
a first write from the template matching their name, the request's own
mappings over the template's, priorities, simulations of what an index of a
name or a template would get, legacy `_template`s, the errors), for
`crates/needle-server/tests/api/opensearch_templates.rs` to replay on Needle
and compare, step by step: the status, then the whole answer of a template
`GET` (its templates by name) or a `_mapping` or `_alias` `GET`, the settings Needle keeps of a
`_settings` `GET`, an acknowledgement, a write's index and result, or the error's type.

    python3 tests/golden/opensearch/templates.py http://127.0.0.1:9201 > tests/golden/opensearch/templates.json

The node: ../shared/opensearch (OpenSearch 3.8).
"""

import sys

from record import call_with_status as call, print_golden, record_steps

LOGS = {
    "index_patterns": ["needle-logs-*"],
    "composed_of": ["needle-ct-settings", "needle-ct-map"],
    "template": {"mappings": {"properties": {"n": {"type": "long"}, "tag": {"type": "text"}}},
                 "aliases": {"needle-all-logs": {}}},
    "priority": 10,
    "version": 1,
}
INDEXES = ["needle-logs-a", "needle-logs-b", "needle-logs-c", "needle-logs-x1", "needle-logs-d", "needle-leg-x1",
           "needle-leg-b", "needle-leg-y1"]
INDEX_TEMPLATES = ["needle-it-logs", "needle-it-clash"]
COMPONENTS = ["needle-ct-settings", "needle-ct-map"]


def steps():
    return [
        ("PUT", "/_component_template/needle-ct-settings",
         {"template": {"settings": {"number_of_shards": 1, "index": {"refresh_interval": "2s"}}}}),
        ("PUT", "/_component_template/needle-ct-map",
         {"template": {"mappings": {"properties": {"title": {"type": "text"}, "tag": {"type": "keyword"}}}},
          "version": 2, "_meta": {"team": "search"}}),
        ("GET", "/_component_template/needle-ct-map", None),
        ("GET", "/_component_template/needle-ct-*", None),
        ("PUT", "/_index_template/needle-it-logs", LOGS),
        ("GET", "/_index_template/needle-it-logs", None),
        ("PUT", "/needle-logs-a", None),
        ("GET", "/needle-logs-a/_mapping", None),
        ("GET", "/needle-logs-a/_alias", None),
        ("GET", "/needle-logs-a/_settings", None),
        ("PUT", "/needle-logs-b/_doc/1?refresh=true", {"title": "a title", "n": "5", "extra": 12}),
        ("GET", "/needle-logs-b/_mapping", None),
        ("POST", "/needle-all-logs/_count", {"query": {"range": {"n": {"gte": 4}}}}),
        ("PUT", "/needle-logs-c", {"mappings": {"properties": {"n": {"type": "keyword"}}},
                                   "settings": {"refresh_interval": "7s"}}),
        ("GET", "/needle-logs-c/_mapping", None),
        ("GET", "/needle-logs-c/_settings", None),
        ("PUT", "/_index_template/needle-it-clash", {"index_patterns": ["needle-logs-x*"], "priority": 10}),
        ("PUT", "/_index_template/needle-it-clash",
         {"index_patterns": ["needle-logs-x*"], "priority": 20,
          "template": {"settings": {"index.refresh_interval": "5s"}}}),
        ("PUT", "/needle-logs-x1", None),
        ("GET", "/needle-logs-x1/_mapping", None),
        ("GET", "/needle-logs-x1/_settings", None),
        ("GET", "/_index_template/needle-it-*", None),
        ("POST", "/_index_template/_simulate_index/needle-logs-q", None),
        ("POST", "/_index_template/_simulate_index/needle-logs-x9", None),
        ("POST", "/_index_template/_simulate_index/needle-other", None),
        ("POST", "/_index_template/_simulate/needle-it-logs", None),
        ("POST", "/_index_template/_simulate/needle-it-none", None),
        ("POST", "/_index_template/_simulate",
         {"index_patterns": ["needle-sim-*"], "composed_of": ["needle-ct-map"],
          "template": {"settings": {"number_of_shards": 2}, "mappings": {"properties": {"z": {"type": "long"}}}}}),
        ("POST", "/_index_template/_simulate", {"index_patterns": ["needle-logs-s*"], "priority": 10}),
        ("POST", "/_index_template/_simulate", None),
        ("POST", "/_index_template/_simulate", {"index_patterns": ["needle-sim-*"], "composed_of": ["needle-ct-none"]}),
        ("PUT", "/_index_template/needle-it-missing", {"index_patterns": ["zz-*"], "composed_of": ["needle-ct-none"]}),
        ("PUT", "/_index_template/needle-it-nopat", {"template": {}}),
        ("PUT", "/_index_template/needle-it-logs?create=true", LOGS),
        ("PUT", "/_index_template/needle-it-odd", {"index_patterns": ["q-*"], "colour": 1}),
        ("PUT", "/_component_template/needle-ct-odd", {"template": {}, "colour": 1}),
        ("DELETE", "/_component_template/needle-ct-map", None),
        ("GET", "/_index_template/needle-nothing", None),
        ("GET", "/_component_template/needle-nothing", None),
        ("DELETE", "/_index_template/needle-it-logs", None),
        ("DELETE", "/_index_template/needle-it-logs", None),
        ("DELETE", "/_component_template/needle-ct-map", None),
        ("GET", "/_component_template/needle-ct-*", None),
        ("PUT", "/needle-logs-d", None),
        ("GET", "/needle-logs-d/_mapping", None),
        ("GET", "/needle-logs-d/_alias", None),
        ("DELETE", "/_index_template/needle-it-clash", None),
        ("DELETE", "/_component_template/needle-ct-settings", None),
        ("GET", "/_index_template/needle-it-*", None),
        # Legacy templates: all that match apply, in `order`, unless an index template matches.
        ("PUT", "/_template/needle-lt-all", {"index_patterns": ["needle-leg-*"], "order": 1, "version": 3,
                                             "settings": {"number_of_shards": 1, "refresh_interval": "3s"},
                                             "mappings": {"properties": {"a": {"type": "keyword"}}},
                                             "aliases": {"needle-leg-all": {}}}),
        ("PUT", "/_template/needle-lt-x", {"index_patterns": ["needle-leg-x*"], "order": 2,
                                           "settings": {"refresh_interval": "9s"},
                                           "mappings": {"properties": {"b": {"type": "long"}, "a": {"type": "text"}}}}),
        ("PUT", "/_template/needle-lt-one", {"index_patterns": "needle-one-*"}),
        ("GET", "/_template/needle-lt-all", None),
        ("GET", "/_template/needle-lt-*", None),
        ("GET", "/_template/needle-lt-none", None),
        ("GET", "/_template/needle-lt-none*", None),
        ("HEAD", "/_template/needle-lt-x", None),
        ("HEAD", "/_template/needle-lt-none", None),
        ("PUT", "/needle-leg-x1", None),
        ("GET", "/needle-leg-x1/_mapping", None),
        ("GET", "/needle-leg-x1/_settings", None),
        ("GET", "/needle-leg-x1/_alias", None),
        ("PUT", "/needle-leg-b/_doc/1?refresh=true", {"a": "some words", "c": 2}),
        ("GET", "/needle-leg-b/_mapping", None),
        ("PUT", "/_index_template/needle-it-leg", {"index_patterns": ["needle-leg-y*"],
                                                   "template": {"settings": {"refresh_interval": "4s"}}}),
        ("PUT", "/needle-leg-y1", None),
        ("GET", "/needle-leg-y1/_settings", None),
        ("GET", "/needle-leg-y1/_alias", None),
        ("PUT", "/_template/needle-lt-all?create=true", {"index_patterns": ["needle-leg-*"]}),
        ("PUT", "/_template/needle-lt-odd", {"index_patterns": ["needle-odd-*"], "colour": 1}),
        ("PUT", "/_template/needle-lt-nopat", {"settings": {}}),
        ("PUT", "/_template/needle-lt-badorder", {"index_patterns": ["needle-odd-*"], "order": "a"}),
        ("DELETE", "/_template/needle-lt-none", None),
        ("DELETE", "/_template/needle-lt-*", None),
        ("GET", "/_template/needle-lt-*", None),
        ("DELETE", "/_index_template/needle-it-leg", None),
    ]


def shaped(answer):
    """What the replay compares (see the module's comment)."""
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        return {"error": answer["error"]["type"]}
    if isinstance(answer, dict) and "result" in answer:
        return {"_index": answer["_index"], "result": answer["result"]}
    if isinstance(answer, dict) and "acknowledged" in answer:
        return {"acknowledged": answer["acknowledged"]}
    if isinstance(answer, dict) and "overlapping" in answer:
        # Listed in the node's own (hash) order.
        return {**answer, "overlapping": sorted(answer["overlapping"], key=lambda t: t["name"])}
    for listing in ["index_templates", "component_templates"]:
        if isinstance(answer, dict) and isinstance(answer.get(listing), list):
            # Listed in the node's own (hash) order.
            return {listing: sorted(answer[listing], key=lambda t: t["name"])}
    if isinstance(answer, dict) and len(answer) == 1:
        (name, inner), = answer.items()
        if isinstance(inner, dict) and "settings" in inner:
            kept = inner["settings"]["index"]
            return {name: {k: kept.get(k) for k in ["number_of_shards", "refresh_interval"]}}
    return answer


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9201"
    for index in INDEXES:
        call(base, "DELETE", f"/{index}")
    for t in INDEX_TEMPLATES:
        call(base, "DELETE", f"/_index_template/{t}")
    for t in COMPONENTS:
        call(base, "DELETE", f"/_component_template/{t}")
    name, cases = record_steps(base, steps(), shaped)
    for index in INDEXES:
        call(base, "DELETE", f"/{index}")
    print_golden([("node", name)], cases)


if __name__ == "__main__":
    main()

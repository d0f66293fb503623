#!/usr/bin/env python3
"""The search page (`/_ui`) in headless Chromium, against `needle serve --demo`.

    python3 check.py NEEDLE_BINARY CHROMIUM SCREENSHOT_DIR

Starts the server on a free loopback port over a temporary data folder with
the bundled corpus, opens the page with a query in its address (as a user's
typed query is kept there), lets its scripts run, and checks the rendered
page: the index picked, hits with the query's words marked, the summary with
hits, time and bytes read, and facets from the `president` keyword field. A
query with a facet filter and a prefix and fuzzy query are checked the same
way. Screenshots of each page go to SCREENSHOT_DIR.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile


def start(binary, data):
    proc = subprocess.Popen([binary, "serve", "--demo", "--data", data, "--bind", "127.0.0.1:0"],
                            stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        found = re.search(r"on (http://[0-9.:]+)", line)
        if found:
            return proc, found.group(1)
    raise SystemExit(f"needle serve did not start (exit {proc.wait()})")


def chromium(browser, *args):
    base = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--virtual-time-budget=15000", "--window-size=1280,1000"]
    done = subprocess.run(base + list(args), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def page(browser, url, shots, name):
    """The rendered page's body, up to its script (whose source holds the templates)."""
    chromium(browser, f"--screenshot={os.path.join(shots, name + '.png')}", url)
    return chromium(browser, "--dump-dom", url).split("<script>")[0]


def main():
    binary, browser, shots = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(shots, exist_ok=True)
    with tempfile.TemporaryDirectory() as data:
        proc, base = start(binary, data)
        try:
            dom = page(browser, f"{base}/_ui?index=sotu&q=freedom", shots, "search")
            assert '<option>sotu</option>' in dom, dom[:2000]
            hits = re.findall(r'<article class="hit">', dom)
            assert len(hits) == 10, f"{len(hits)} hits shown"
            marks = re.findall(r"<mark>(.*?)</mark>", dom)
            assert marks and all(m.lower() == "freedom" for m in marks), marks[:10]
            summary = re.search(r'<p id="summary">([^<]*)</p>', dom).group(1)
            assert re.match(r"[\d,]+ hits in \d+ ms · [\d.]+ KiB read from storage", summary), summary
            assert 'data-field="president"' in dom, "facets from the keyword field"
            assert '<p id="error"></p>' in dom, re.search(r'<p id="error">([^<]*)', dom).group(1)

            dom = page(browser, f"{base}/_ui?index=sotu&q=liber*%20%2Bgoverment~&mode=simple", shots, "syntax")
            marks = {m.lower() for m in re.findall(r"<mark>(.*?)</mark>", dom)}
            assert "government" in marks and any(m.startswith("liber") for m in marks), marks
            print(f"ui: all checks passed; screenshots in {shots}")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()

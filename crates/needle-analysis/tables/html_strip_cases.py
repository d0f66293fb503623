#!/usr/bin/env python3
"""Records Lucene's HTMLStripCharFilter on fixed markup and on thousands of
strings made of markup fragments (a fixed seed): the text out, and the
input offset of every output offset, for `src/html_strip.rs`'s test to
compare Needle's filter with, offsets and all. Builds and runs
HtmlStripCases.java on the Lucene peer's jars (`lucene_peer.py`):

    python3 crates/needle-analysis/tables/html_strip_cases.py > tests/golden/lucene/html_strip.jsonl
"""

import json
import random
import sys

import lucene_peer


FIXED = ["<p>I&apos;m so <b>happy</b>!</p>", "a < b > c", "a<b>c", "a <b> c", "x<br>y", "x<br/>y", "x</p>y", "x<div class='q'>y</div>z",
 "one &amp; two &lt;3 &gt; &nbsp;x &#65;&#x42; &copy; &bogus; &amp", "&#0; &#1114112; &#xD800;", "<!-- c -->a<!--x-->b",
 "a<script>var x=1;</script>b", "a<style>p{}</style>b", "<![CDATA[a<b]]>c", "a<?php echo 1 ?>b", "<!DOCTYPE html>a",
 "a <span>b</span>c", "a<em>b</em>", "x<p>", "a<b", "a<", "a>b", "<a href=\"x>y\">t</a>", "<img src=x alt='a>b'>z", "a</b c>d",
 "a<1>b", "a< b>c", "<B>UP</B>", "a<p/>b", "tab<\tp>x", "a&#10;b", "x<li>y<li>z", "<h1>T</h1><h2>U</h2>", "a<!--unterminated",
 "a<script>x", "<td>a</td><td>b</td>", "&Eacute;t&eacute;", "&AMP;&Amp;", "q&quot;r", "a<hr>b", "a<table>b", "x<title>t</title>y",
 "&copy x", "&hellip; x", "&#65 x", "&#X41; x", "&#x41 x", "&#65a", "&apos; &APOS;", "&LT;&GT;&QUOT;&COPY;&REG;&Lt;",
 "<my-tag>a</my-tag>b", "<o:p>a</o:p>b", "<h1 id=x>T</h1>", "<P>a</P>", "<BR>b", "a<p\nclass=x>b", "a<!x>b", "a</ p>b", "a</>b",
 "a<>b", "a<p attr>b", "a<p a=b c='d' e=\"f\">b", "a<p a = 'x'>b", "a<p a='x>b", "a<span\n>b", "a<!---->b", "a<!-- -- -->b",
 "a<![CDATA[]]>b", "a<p>&amp;</p>", "a<b/>c", "a<br />c", "<script type='x'>a</script>b", "a<SCRIPT>x</SCRIPT>b", "a</script>b",
 "a&#x1F600;b", "a&#128512;b", "a&;b", "a&#;b", "a&#x;b", "<x y=\"a\nb\">c", "a<p><b>c</b></p>d", "a\u00e9<b>c</b>",
 "x &copy", "x &amp", "x &#65", "x&ampy", "x &lt3", "caf&eacute; ol&eacute;", "a<br>b c<!-- x -->d", "<div>x</div><div>y</div>",
 "a\U0001F600<p>b&eacute;</p>", "<?xml version='1.0'?>a", "a<?x", "a<![CDATA[x", "a<!x", "<p>a</P >b",
]
FRAGS = ["<", ">", "</", "/", "p", "b", "br", "script", "style", "span", "div", "h1", "&", "amp", ";", "#", "x", "41", "65", "lt",
 "eacute", "<!--", "-->", "<![CDATA[", "]]>", "<!", "<?", "?>", " ", "\n", "'", "\"", "=", "a", "word", "\u00e9", "\U0001F600", "1", "-",
 "<p>", "</p>", "<b>", "</b>", "<br/>", "&amp;", "&#233;", "class", "<script>", "</script>", "&nbsp;", "\t"]
rng = random.Random(20261207)


def cases():
    """The fixed texts, then generated ones, then some with escaped tags."""
    out = [(t, []) for t in FIXED]
    for _ in range(3000):
        out.append(("".join(rng.choice(FRAGS) for _ in range(rng.randint(1, 14))), []))
    out.append(("a<b>c</b><p>d</p>", ["b"]))
    out.append(("<script>x</script><br>y<style>z</style>", ["script", "br"]))
    return out


def lucene(texts):
    """Each (text, escaped tags) through HTMLStripCharFilter: (output, offsets)."""
    lines = "".join(t.encode().hex() + "\t" + ",".join(e) + "\n" for t, e in texts)
    stdout = lucene_peer.run("HtmlStripCases", lines.encode())
    out = []
    for line in stdout.decode().splitlines():
        text, offsets = line.split("\t")
        out.append((bytes.fromhex(text).decode(), [int(o) for o in offsets.split(",")]))
    return out


def main():
    texts = cases()
    for (text, escaped), (out, offsets) in zip(texts, lucene(texts)):
        case = {"text": text, "escaped": escaped, "out": out, "offsets": offsets}
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

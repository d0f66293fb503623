//! Lucene's HTMLStripCharFilter (Elasticsearch's `html_strip` char filter):
//! markup out, text in. Tags go: an inline element's (`b`, `span`, `a`...)
//! without a trace, any other's (`p`, `br`, `div`, unknown ones) as a
//! newline, so words on either side of a block stay apart. `<script>` and
//! `<style>` go with their content, as one newline; comments, `<!...>`
//! declarations and `<?...?>` instructions go without a trace; CDATA
//! sections leave their content. Character entities (`&amp;`, `&#233;`,
//! `&#xE9;`, the names of [`HTML_ENTITIES`]) become their character when
//! a `;` (or the end of the text) ends them. What is not markup (`a < 1`,
//! `</b c>`, `&bogus;`) is text. Tags named in `escaped_tags` stay as they are.
//!
//! A tag is `<`, optional whitespace, a name (a letter, then letters,
//! digits, `-`, `_`, `:` or `.`), then anything but `<` up to `>` (a quoted
//! value may hold `>` when its quote is closed); an end tag's name may be
//! surrounded by whitespace only. A tag name, comment or script the text
//! ends in takes the rest of it; attributes, an instruction or CDATA it
//! ends in are text, a declaration leaves the rest as it is. The cases
//! checked against Lucene are `tests/golden/lucene/html_strip.jsonl`.
//!
//! Offsets: each piece of markup replaced records, as Lucene's filter does,
//! where the output drifts from the input (see `char_filters.rs`), so a
//! token's offsets point into the original text.

use std::collections::HashSet;

use crate::char_filters::{units, Drift};
use crate::tables::html_entities::HTML_ENTITIES;

/// Elements whose tags Lucene removes without a trace (any other's become a newline).
const INLINE: [&str; 31] = [
    "a", "abbr", "acronym", "b", "basefont", "bdo", "big", "cite", "code", "dfn", "em", "font", "i", "img",
    "input", "kbd", "label", "q", "s", "samp", "select", "small", "span", "strike", "strong", "sub", "sup",
    "textarea", "tt", "u", "var",
];

/// An `html_strip` filter: the tags it keeps (`escaped_tags`), lowercased.
#[derive(Debug, Default)]
pub struct HtmlStrip {
    escaped: HashSet<String>,
}

impl HtmlStrip {
    pub fn new(escaped_tags: impl IntoIterator<Item = String>) -> HtmlStrip {
        HtmlStrip { escaped: escaped_tags.into_iter().map(|t| t.to_ascii_lowercase()).collect() }
    }

    /// `text` without its markup, and how its offsets map back.
    pub(crate) fn apply(&self, text: &str) -> (String, Drift) {
        let mut out = Output::default();
        let mut finder = Finder::new(text);
        let mut at = 0;
        while at < text.len() {
            let rest = &text[at..];
            finder.base = at;
            let piece = match rest.as_bytes()[0] {
                b'&' => entity(rest),
                b'<' => self.markup(rest, &mut finder),
                _ => None,
            };
            at += match piece {
                Some(Piece::Replaced { len, with }) => {
                    out.replace(&rest[..len], with);
                    len
                }
                Some(Piece::Entity { len, c }) => {
                    out.replace(&rest[..len], c.encode_utf8(&mut [0; 4]));
                    len
                }
                Some(Piece::Spans(spans)) => {
                    let mut from = 0;
                    for (len, kept) in spans {
                        let span = &rest[from..from + len];
                        match kept {
                            true => out.keep(span),
                            false => out.replace(span, ""),
                        }
                        from += len;
                    }
                    from
                }
                None => {
                    let c = rest.chars().next().expect("not at the end");
                    out.keep(&rest[..c.len_utf8()]);
                    c.len_utf8()
                }
            };
        }
        (out.text, out.drift)
    }

    /// The markup `rest` (at a `<`) starts with, if any.
    fn markup<'a>(&self, rest: &'a str, finder: &mut Finder<'_>) -> Option<Piece<'a>> {
        if let Some(after) = rest.strip_prefix("<!--") {
            return Some(removed_through(rest, 4, after.find("-->").map(|p| p + 3)));
        }
        if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let (content, close) = match after.find("]]>") {
                Some(p) => (p, 3),
                None => (after.len(), 0),
            };
            return Some(Piece::Spans([(9, false), (content, true), (close, false)]));
        }
        // A declaration left open leaves the rest of the text as it is, entities and all.
        if rest.starts_with("<!") {
            let end = finder.next(b'>', 2).map(|p| p - 1);
            return Some(end.map_or(Piece::Replaced { len: rest.len(), with: rest }, |e| {
                removed_through(rest, 2, Some(e))
            }));
        }
        // An instruction runs to the first `>`, which `?` or `/` must come
        // before (`?>`, `/>`); else it is text.
        if rest.starts_with("<?") {
            let end =
                finder.next(b'>', 2).filter(|&p| p > 2 && matches!(rest.as_bytes()[p - 1], b'?' | b'/'))?;
            return Some(removed_through(rest, 2, Some(end - 1)));
        }
        match rest.strip_prefix("</") {
            Some(after) => self.end_tag(rest, after),
            None => self.start_tag(rest, finder),
        }
    }

    /// `</`, a name between optional whitespace, `>` (or the end of the text).
    fn end_tag<'a>(&self, rest: &'a str, after: &str) -> Option<Piece<'a>> {
        let name_at = after.len() - after.trim_start_matches(is_space).len();
        let name = tag_name(&after[name_at..])?;
        let tail = after[name_at + name.len()..].trim_start_matches(is_space);
        if tail.is_empty() {
            return Some(Piece::Replaced { len: rest.len(), with: "" });
        }
        if !tail.starts_with('>') {
            return None;
        }
        let len = rest.len() - tail.len() + 1;
        Some(self.tag(name, len, rest))
    }

    /// `<`, optional whitespace, a name, then anything but `<` up to `>`;
    /// a script or style element taken whole.
    /// A name the text ends at takes the rest of it; attributes it ends in are text.
    fn start_tag<'a>(&self, rest: &'a str, finder: &mut Finder<'_>) -> Option<Piece<'a>> {
        let after = &rest[1..];
        let name_at = after.len() - after.trim_start_matches(is_space).len();
        let name = tag_name(&after[name_at..])?;
        let from = 1 + name_at + name.len();
        if from == rest.len() {
            return Some(Piece::Replaced { len: rest.len(), with: "" });
        }
        let len = tag_end(rest, from, finder)?;
        let lower = name.to_ascii_lowercase();
        if lower == "script" || lower == "style" {
            let body = &rest[len..];
            // Escaped, its tags stay and its content goes.
            return Some(match (find_end_tag(body, &lower), self.escaped.contains(&lower)) {
                (Some((content, close)), false) => Piece::Replaced { len: len + content + close, with: "\n" },
                (None, false) => Piece::Replaced { len: rest.len(), with: "" },
                (Some((content, close)), true) => {
                    Piece::Spans([(len, true), (content, false), (close, true)])
                }
                (None, true) => Piece::Spans([(len, true), (body.len(), false), (0, true)]),
            });
        }
        Some(self.tag(name, len, rest))
    }

    /// A whole tag of `len` bytes named `name`: kept when escaped, else
    /// gone (inline) or a newline.
    fn tag<'a>(&self, name: &str, len: usize, rest: &'a str) -> Piece<'a> {
        let lower = name.to_ascii_lowercase();
        let with = match self.escaped.contains(&lower) {
            true => &rest[..len],
            false if INLINE.contains(&lower.as_str()) => "",
            false => "\n",
        };
        Piece::Replaced { len, with }
    }
}

/// The next place of `>` or a quote in the text, remembered: markup left
/// open (an instruction with no `>` after it, a quote never closed) would
/// otherwise search the rest of the text again at each `<`, quadratic time
/// on text made to be.
struct Finder<'t> {
    text: &'t [u8],
    /// Where the current piece of text starts: places asked and answered are from there.
    base: usize,
    /// For `>`, `"` and `'`: where the last search started, and what it found.
    found: [(usize, Option<usize>); 3],
}

impl<'t> Finder<'t> {
    fn new(text: &'t str) -> Self {
        Finder { text: text.as_bytes(), base: 0, found: [(usize::MAX, None); 3] }
    }

    /// The first `byte` (`>`, `"` or `'`) at or after `from`, both counted from `base`.
    fn next(&mut self, byte: u8, from: usize) -> Option<usize> {
        let slot = match byte {
            b'>' => 0,
            b'"' => 1,
            _ => 2,
        };
        let at = self.base + from;
        let (start, found) = self.found[slot];
        let found = match start <= at && found.is_none_or(|f| f >= at) {
            true => found,
            false => {
                let found =
                    self.text[at.min(self.text.len())..].iter().position(|&b| b == byte).map(|p| at + p);
                self.found[slot] = (at, found);
                found
            }
        };
        found.map(|f| f - self.base)
    }
}

/// What a piece of markup at the scanner's place becomes.
#[derive(Clone, Copy)]
enum Piece<'a> {
    /// `len` bytes of input replaced by `with`.
    Replaced { len: usize, with: &'a str },
    /// A character entity of `len` bytes standing for `c`.
    Entity { len: usize, c: char },
    /// Spans of input one after another, each of its length in bytes kept
    /// or gone (a CDATA section's content kept between markers that go).
    Spans([(usize, bool); 3]),
}

/// Markup of `open` bytes, removed through `end` bytes past them (to the
/// end of the text when it is not closed).
fn removed_through(rest: &str, open: usize, end: Option<usize>) -> Piece<'_> {
    Piece::Replaced { len: end.map_or(rest.len(), |e| open + e), with: "" }
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{c}')
}

/// The tag name `text` starts with: a letter, then letters, digits, `-`, `_`, `:`, `.`.
fn tag_name(text: &str) -> Option<&str> {
    if !text.chars().next()?.is_alphabetic() {
        return None;
    }
    let end = text.find(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')));
    Some(&text[..end.unwrap_or(text.len())])
}

/// The length of the tag starting `text` (`from` bytes are its `<` and
/// name) through its `>`: a quote closed later is skipped whole, `>` and
/// all; none when a `<` comes first.
fn tag_end(text: &str, from: usize, finder: &mut Finder<'_>) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'>' => return Some(at + 1),
            b'<' => return None,
            q @ (b'"' | b'\'') => match finder.next(q, at + 1) {
                Some(close) => at = close + 1,
                None => at += 1,
            },
            _ => at += 1,
        }
    }
    None
}

/// The end tag of `name` (`</name>`, any case, whitespace before `>`) in
/// `text`: the length of what comes before it, and its own.
fn find_end_tag(text: &str, name: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(p) = text[from..].find("</") {
        let start = from + p + 2;
        let named = text.as_bytes()[start..]
            .get(..name.len())
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()));
        if named {
            let tail = text[start + name.len()..].trim_start_matches(is_space);
            if tail.starts_with('>') {
                return Some((start - 2, text.len() - tail.len() + 1 - (start - 2)));
            }
        }
        from = start;
    }
    None
}

/// The character entity `rest` (at a `&`) starts with, and what it stands
/// for: a `;` or the end of the text must end it.
fn entity(rest: &str) -> Option<Piece<'static>> {
    let body = &rest[1..];
    let (name_len, c) = match body.strip_prefix('#') {
        Some(number) => {
            let (digits, radix, skip) = match number.strip_prefix(['x', 'X']) {
                Some(hex) => (hex, 16, 2),
                None => (number, 10, 1),
            };
            let len = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
            if len == 0 {
                return None;
            }
            let code = u32::from_str_radix(&digits[..len], radix).ok().filter(|&c| c <= 0x10FFFF)?;
            // A surrogate alone is no character: the replacement character stands for it.
            (skip + len, char::from_u32(code).unwrap_or('\u{FFFD}'))
        }
        None => {
            let len = body.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(body.len());
            let name = &body[..len];
            let i = HTML_ENTITIES.binary_search_by(|(n, _)| n.as_bytes().cmp(name.as_bytes())).ok()?;
            (len, HTML_ENTITIES[i].1)
        }
    };
    let len = match body[name_len..].chars().next() {
        Some(';') => 1 + name_len + 1,
        None => 1 + name_len,
        Some(_) => return None,
    };
    Some(Piece::Entity { len, c })
}

/// The filtered text as it grows, with its drift from the input.
#[derive(Default)]
struct Output {
    text: String,
    drift: Drift,
    /// Input units consumed minus output units written, so far.
    cumulative: i64,
    units: u32,
}

impl Output {
    fn keep(&mut self, text: &str) {
        self.text.push_str(text);
        self.units += units(text);
    }

    /// `input` replaced by `with` (never longer, in UTF-16 units).
    fn replace(&mut self, input: &str, with: &str) {
        let (consumed, written) = (units(input), units(with));
        self.text.push_str(with);
        self.units += written;
        if consumed != written {
            self.cumulative += i64::from(consumed) - i64::from(written);
            self.drift.add(self.units, self.cumulative);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Markup left open many times over (instructions with no `>` after
    /// them, quotes never closed) is text, found in one pass: each `<` does
    /// not search the rest of the text again.
    #[test]
    fn markup_left_open_many_times_is_text() {
        for piece in ["<?", "<p '", "<p \"x", "<x\"'"] {
            let text = piece.repeat(100_000) + "end";
            let (out, drift) = HtmlStrip::default().apply(&text);
            // Lucene's answer on a few repetitions: all of it text.
            assert_eq!(out, text, "{piece}");
            assert_eq!(drift.correct(units(&out)), units(&text));
        }
    }

    /// Every case of `tests/golden/lucene/html_strip.jsonl` (Lucene's
    /// HTMLStripCharFilter on fixed and generated markup, recorded by
    /// `tables/html_strip_cases.py`): the same text out, and every output
    /// offset mapped back to the same input offset.
    #[test]
    fn strips_as_lucene_does_offsets_and_all() {
        crate::lucene_cases::check("html_strip", 3001, |case| {
            let text = case["text"].as_str().expect("text");
            let escaped =
                case["escaped"].as_array().expect("escaped").iter().map(|t| t.as_str().unwrap().into());
            let (out, drift) = HtmlStrip::new(escaped).apply(text);
            let offsets: Vec<u32> = (0..=units(&out)).map(|u| drift.correct(u)).collect();
            let want: Vec<u32> =
                case["offsets"].as_array().unwrap().iter().map(|o| o.as_u64().unwrap() as u32).collect();
            (out != case["out"].as_str().unwrap() || offsets != want)
                .then(|| format!("{text:?}: Lucene {:?} {want:?}, Needle {out:?} {offsets:?}", case["out"]))
        });
    }
}

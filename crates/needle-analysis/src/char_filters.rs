//! Char filters: what an analyzer does to the text before its tokenizer
//! (Lucene's CharFilters, Elasticsearch's `char_filter`): `mapping`
//! (MappingCharFilter: the longest key at each place replaced, left to right,
//! replacements not read again), `pattern_replace`
//! (PatternReplaceCharFilter: every match of a pattern replaced, Java's `$1`
//! group references) and `html_strip` (`html_strip.rs`). A token's offsets
//! still point into the original text: each filter records, as Lucene's BaseCharFilter does, where its output
//! drifts from its input (in UTF-16 units, as Java counts), and the offsets
//! are walked back through the filters, last to first.

use std::collections::HashMap;
use std::sync::Arc;

use regex::Regex;

use crate::html_strip::HtmlStrip;

/// One char filter.
#[derive(Debug, Clone)]
pub enum CharFilter {
    Mapping(Arc<Mapping>),
    PatternReplace { pattern: Regex, replacement: String },
    HtmlStrip(Arc<HtmlStrip>),
}

/// A mapping filter's rules: for each first character, its keys longest first.
#[derive(Debug, Default)]
pub struct Mapping {
    by_first: HashMap<char, Vec<(String, String)>>,
}

impl Mapping {
    /// The rules `(key, replacement)`; a key given twice, or empty, is an error.
    pub fn new(rules: Vec<(String, String)>) -> Result<Mapping, String> {
        let mut by_first: HashMap<char, Vec<(String, String)>> = HashMap::new();
        for (key, value) in rules {
            let Some(first) = key.chars().next() else { return Err("cannot match the empty string".into()) };
            let keys = by_first.entry(first).or_default();
            if keys.iter().any(|(k, _)| *k == key) {
                return Err(format!("match \"{key}\" was already added"));
            }
            keys.push((key, value));
        }
        for keys in by_first.values_mut() {
            keys.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
        }
        Ok(Mapping { by_first })
    }

    /// The longest key `text` starts with, and its replacement.
    fn longest(&self, text: &str) -> Option<&(String, String)> {
        let first = text.chars().next()?;
        self.by_first.get(&first)?.iter().find(|(k, _)| text.starts_with(k.as_str()))
    }
}

/// Where a filter's output offsets drift from its input's, in UTF-16 units:
/// from each output offset on (until the next), the input offset is the
/// output one plus the diff (Lucene's `addOffCorrectMap`).
#[derive(Debug, Default)]
pub(crate) struct Drift {
    points: Vec<(u32, i64)>,
}

impl Drift {
    fn last_diff(&self) -> i64 {
        self.points.last().map_or(0, |p| p.1)
    }

    /// A later point at the same offset replaces the earlier one.
    pub(crate) fn add(&mut self, out: u32, diff: i64) {
        match self.points.last_mut() {
            Some(last) if last.0 == out => last.1 = diff,
            _ => self.points.push((out, diff)),
        }
    }

    pub(crate) fn correct(&self, out: u32) -> u32 {
        let i = self.points.partition_point(|p| p.0 <= out);
        let diff = if i == 0 { 0 } else { self.points[i - 1].1 };
        (i64::from(out) + diff).max(0) as u32
    }
}

pub(crate) fn units(s: &str) -> u32 {
    s.chars().map(|c| c.len_utf16() as u32).sum()
}

impl CharFilter {
    /// `text` filtered, and how its offsets map back.
    fn apply(&self, text: &str) -> (String, Drift) {
        match self {
            CharFilter::Mapping(m) => map(m, text),
            CharFilter::PatternReplace { pattern, replacement } => replace(pattern, replacement, text),
            CharFilter::HtmlStrip(h) => h.apply(text),
        }
    }
}

/// Lucene's MappingCharFilter.
fn map(m: &Mapping, text: &str) -> (String, Drift) {
    let (mut out, mut drift) = (String::with_capacity(text.len()), Drift::default());
    let (mut at, mut in_units) = (0usize, 0u32);
    while at < text.len() {
        let rest = &text[at..];
        match m.longest(rest) {
            Some((key, value)) => {
                let (matched, replaced) = (units(key), units(value));
                let out_units = (i64::from(in_units) - drift.last_diff()) as u32;
                let prev = drift.last_diff();
                in_units += matched;
                if matched > replaced {
                    drift.add(out_units + replaced, prev + i64::from(matched - replaced));
                } else {
                    // Each extra unit of a longer replacement points at the key's last unit.
                    for extra in 0..(replaced - matched) {
                        drift.add(out_units + matched + extra, prev - i64::from(extra) - 1);
                    }
                }
                out.push_str(value);
                at += key.len();
            }
            None => {
                let c = rest.chars().next().expect("not at the end");
                out.push(c);
                in_units += c.len_utf16() as u32;
                at += c.len_utf8();
            }
        }
    }
    (out, drift)
}

/// Lucene's PatternReplaceCharFilter.
fn replace(pattern: &Regex, replacement: &str, text: &str) -> (String, Drift) {
    let (mut out, mut drift) = (String::with_capacity(text.len()), Drift::default());
    let (mut last_end, mut cumulative, mut out_units) = (0usize, 0i64, 0u32);
    for caps in pattern.captures_iter(text) {
        let whole = caps.get(0).expect("group 0");
        let skipped = &text[last_end..whole.start()];
        out.push_str(skipped);
        out_units += units(skipped);
        let before = out_units;
        let value = expand(&caps, replacement);
        let (group, replaced) = (units(whole.as_str()), units(&value));
        if replaced < group {
            cumulative += i64::from(group - replaced);
            drift.add(before + replaced, cumulative);
        } else {
            for i in group..replaced {
                cumulative -= 1;
                drift.add(before + i, cumulative);
            }
        }
        out.push_str(&value);
        out_units += replaced;
        last_end = whole.end();
    }
    out.push_str(&text[last_end..]);
    (out, drift)
}

/// Java's `Matcher.appendReplacement` of `replacement`: `$n` and `${name}`
/// are groups, `\` takes the next character as it is. Checked by
/// [`check_replacement`] when the filter is made.
fn expand(caps: &regex::Captures<'_>, replacement: &str) -> String {
    let mut out = String::new();
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                out.push_str(caps.name(&name).map_or("", |m| m.as_str()));
            }
            '$' => {
                // As Java: the longest run of digits that is still a group of the pattern.
                let mut group = 0usize;
                while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                    let next = group * 10 + d as usize;
                    if group > 0 && next >= caps.len() {
                        break;
                    }
                    group = next;
                    chars.next();
                }
                out.push_str(caps.get(group).map_or("", |m| m.as_str()));
            }
            c => out.push(c),
        }
    }
    out
}

/// A `pattern_replace` replacement's group references, checked against
/// `pattern` as Java checks them (`Illegal group reference`).
pub fn check_replacement(pattern: &Regex, replacement: &str) -> Result<(), String> {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.next().is_none() => return Err("character to be escaped is missing".into()),
            '$' if chars.peek() == Some(&'{') => {
                chars.next();
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                if !pattern.capture_names().flatten().any(|n| n == name) {
                    return Err(format!("No group with name {{{name}}}"));
                }
            }
            '$' => match chars.peek().and_then(|d| d.to_digit(10)) {
                Some(d) if (d as usize) < pattern.captures_len() => {}
                Some(d) => return Err(format!("No group {d}")),
                None => return Err("Illegal group reference".into()),
            },
            _ => {}
        }
    }
    Ok(())
}

/// Java's regular expression `pattern` (with its `flags`, Java's names
/// joined by `|`) as a Rust one: `\d`, `\w` and `\s` are ASCII classes in
/// Java, Unicode ones here, so they are written out. What differs otherwise
/// (possessive quantifiers, `\Q...\E`, lookaround, back references) is refused by name.
pub fn java_regex(pattern: &str, flags: &str) -> Result<Regex, String> {
    let mut prefix = String::new();
    for flag in flags.split('|').map(str::trim).filter(|f| !f.is_empty()) {
        prefix.push_str(match flag {
            "CASE_INSENSITIVE" => "(?i)",
            "MULTILINE" => "(?m)",
            "DOTALL" => "(?s)",
            "COMMENTS" => "(?x)",
            "UNICODE_CASE" | "UNICODE_CHARACTER_CLASS" => "",
            other => return Err(format!("the flag [{other}] is not supported yet by Needle")),
        });
    }
    let mut out = prefix;
    let mut chars = pattern.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(e) = chars.next() else { return Err("a pattern cannot end in `\\`".into()) };
                let class = match e {
                    'd' => Some(("0-9", false)),
                    'D' => Some(("0-9", true)),
                    'w' => Some(("0-9A-Za-z_", false)),
                    'W' => Some(("0-9A-Za-z_", true)),
                    's' => Some(("\\t\\n\\x0B\\f\\r ", false)),
                    'S' => Some(("\\t\\n\\x0B\\f\\r ", true)),
                    'Q' | 'E' | 'G' | 'Z' => {
                        return Err(format!("`\\{e}` in a pattern is not supported yet by Needle"))
                    }
                    _ => None,
                };
                match (class, in_class) {
                    (Some((set, false)), true) => out.push_str(set),
                    (Some(_), true) => {
                        return Err(format!("`\\{e}` inside a class is not supported yet by Needle"))
                    }
                    (Some((set, negated)), false) => {
                        out.push_str(if negated { "[^" } else { "[" });
                        out.push_str(set);
                        out.push(']');
                    }
                    (None, _) => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` first in a class, or after `^`, is a character of it.
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().expect("peeked"));
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("\\]");
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '+' if !in_class && matches!(out.chars().last(), Some('*' | '+' | '?' | '}')) => {
                return Err("possessive quantifiers are not supported yet by Needle".into())
            }
            c => out.push(c),
        }
    }
    Regex::new(&out).map_err(|e| format!("the pattern cannot be read: {e}"))
}

/// Text after an analyzer's char filters, and how to find where its
/// offsets were in the original.
pub struct Filtered<'a> {
    pub text: String,
    original: &'a str,
    drifts: Vec<Drift>,
}

impl<'a> Filtered<'a> {
    pub fn new(filters: &[CharFilter], original: &'a str) -> Self {
        let mut text = original.to_string();
        let mut drifts = Vec::with_capacity(filters.len());
        for f in filters {
            let (next, drift) = f.apply(&text);
            text = next;
            drifts.push(drift);
        }
        Filtered { text, original, drifts }
    }

    /// The byte offset in the original text of byte offset `at` of the
    /// filtered one (a character boundary of each).
    pub fn original_offset(&self, at: usize) -> usize {
        let mut unit = units(&self.text[..at]);
        for d in self.drifts.iter().rev() {
            unit = d.correct(unit);
        }
        byte_of_unit(self.original, unit)
    }
}

/// The byte offset of UTF-16 unit `unit` of `text` (the character holding
/// it when it falls inside one; the end past the last).
fn byte_of_unit(text: &str, unit: u32) -> usize {
    let mut seen = 0u32;
    for (i, c) in text.char_indices() {
        let next = seen + c.len_utf16() as u32;
        if next > unit {
            return i;
        }
        seen = next;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(rules: &[(&str, &str)]) -> CharFilter {
        let rules = rules.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        CharFilter::Mapping(Arc::new(Mapping::new(rules).unwrap()))
    }

    /// Words of the filtered text with their offsets in the original.
    fn words(filters: &[CharFilter], text: &str) -> Vec<(String, usize, usize)> {
        let f = Filtered::new(filters, text);
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in f.text.char_indices().chain([(f.text.len(), ' ')]) {
            match (c == ' ', start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    out.push((f.text[s..i].to_string(), f.original_offset(s), f.original_offset(i)));
                    start = None;
                }
                _ => {}
            }
        }
        out
    }

    fn w(list: &[(&str, usize, usize)]) -> Vec<(String, usize, usize)> {
        list.iter().map(|&(t, s, e)| (t.to_string(), s, e)).collect()
    }

    /// OpenSearch 3.8's answers for the same text and rules.
    #[test]
    fn mappings_replace_the_longest_key_and_keep_the_original_offsets() {
        let f = mapping(&[("ph", "f"), ("qu", "k"), ("x", "eks")]);
        assert_eq!(
            words(&[f], "phone quick box xx"),
            w(&[("fone", 0, 5), ("kick", 6, 11), ("boeks", 12, 15), ("ekseks", 16, 18)])
        );
        let gone = mapping(&[("a", ""), (" ", "_")]);
        assert_eq!(words(&[gone], "banana split"), w(&[("bnn_split", 0, 12)]));
        assert!(Mapping::new(vec![("a".into(), "b".into()), ("a".into(), "c".into())]).is_err());
    }

    #[test]
    fn patterns_replace_every_match_with_java_groups() {
        let digits = java_regex(r"(\d+)-(\d+)", "").unwrap();
        let f = CharFilter::PatternReplace { pattern: digits, replacement: "$1_$2".into() };
        assert_eq!(
            words(&[f], "call 555-1234 now"),
            w(&[("call", 0, 4), ("555_1234", 5, 13), ("now", 14, 17)])
        );
        let dash =
            CharFilter::PatternReplace { pattern: java_regex("-", "").unwrap(), replacement: String::new() };
        assert_eq!(
            words(&[dash], "wi-fi and e-mail"),
            w(&[("wifi", 0, 5), ("and", 6, 9), ("email", 10, 16)])
        );
        assert!(!java_regex(r"\d", "").unwrap().is_match("٣"), "Java's \\d is ASCII");
        assert!(java_regex("a*+", "").is_err());
        let p = java_regex("(a)", "").unwrap();
        assert!(check_replacement(&p, "$2").is_err());
        assert!(check_replacement(&p, "x$1\\$").is_ok());
    }
}

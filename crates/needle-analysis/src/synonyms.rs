//! Synonym rules in Solr's format, as Lucene's `SolrSynonymParser` reads
//! them, for the synonym filters (Elasticsearch's `synonym` and
//! `synonym_graph`, `synonym_filter.rs`):
//!
//! - `a, b, c`: each word is all of them (`expand`), or the first (not);
//! - `a, b => c, d`: `a` and `b` become `c` and `d` (the originals go unless
//!   another rule keeps them);
//! - `#` starts a comment line; `\` escapes the next character (`\,`).
//!
//! Every word is analyzed first by what comes before the filter in its
//! analyzer (the caller's `analyze`), so `Quick` in a rule matches after a
//! lowercase filter. A word may analyze to several terms (`new york`): the
//! rule then maps a run of terms, or to one.

use std::collections::{HashMap, HashSet};

/// What a synonym filter maps runs of terms to.
#[derive(Debug, Default)]
pub struct SynonymMap {
    /// By a rule's input, its terms joined by [`SEPARATOR`].
    rules: HashMap<String, Mapping>,
    /// Every run of terms that starts a longer input: matching goes on past it.
    continued: HashSet<String>,
    /// `synonym_graph`: Lucene's SynonymGraphFilter, where `synonym` is its SynonymFilter.
    pub graph: bool,
}

/// Joins the terms of a rule's input or output (Lucene's `WORD_SEPARATOR`).
const SEPARATOR: char = '\0';

/// What an input becomes: its outputs, each a run of terms, in the rules' order.
#[derive(Debug, Default)]
pub(crate) struct Mapping {
    pub outputs: Vec<Vec<String>>,
    pub keep_original: bool,
}

/// A rule that cannot be read: its line (from 1) and why.
#[derive(Debug, PartialEq)]
pub struct RuleError {
    pub line: usize,
    pub reason: String,
}

impl SynonymMap {
    /// The map of `rules` (one rule a line). `analyze` gives a rule word's
    /// terms, `Err` naming why it has none it can use; `lenient` leaves out
    /// the pairs of a rule with such a word instead of failing (as
    /// Elasticsearch's parser, which keeps the rule's other pairs).
    pub fn parse(
        rules: &[String],
        expand: bool,
        lenient: bool,
        graph: bool,
        analyze: impl Fn(&str) -> Result<Vec<String>, String>,
    ) -> Result<SynonymMap, RuleError> {
        let mut out = SynonymMap { graph, ..SynonymMap::default() };
        for (i, line) in rules.iter().flat_map(|r| r.lines()).enumerate() {
            let fail = |reason: String| RuleError { line: i + 1, reason };
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            // A word that cannot be used is `None` when lenient: the pairs it is in are left out.
            let words = |side: &str| -> Result<Vec<Option<Vec<String>>>, RuleError> {
                let word = |w: &String| {
                    let unescaped = unescape(w);
                    match analyze(unescaped.trim()).and_then(|terms| checked(unescaped.trim(), terms)) {
                        Ok(terms) => Ok(Some(terms)),
                        Err(_) if lenient => Ok(None),
                        Err(reason) => Err(fail(reason)),
                    }
                };
                split(side, ",").iter().map(word).collect()
            };
            let sides = split(line, "=>");
            match sides.as_slice() {
                [left, right] => {
                    let (inputs, outputs) = (words(left)?, words(right)?);
                    for input in inputs.iter().flatten() {
                        for output in outputs.iter().flatten() {
                            out.add(input, output, false);
                        }
                    }
                }
                [all] => {
                    let inputs = words(all)?;
                    for (i, input) in inputs.iter().enumerate() {
                        let Some(input) = input else { continue };
                        match expand {
                            true => {
                                for (_, output) in inputs.iter().enumerate().filter(|&(j, _)| j != i) {
                                    if let Some(output) = output {
                                        out.add(input, output, true);
                                    }
                                }
                            }
                            false => {
                                if let Some(first) = &inputs[0] {
                                    out.add(input, first, false);
                                }
                            }
                        }
                    }
                }
                _ => return Err(fail("more than one explicit mapping specified on the same line".into())),
            }
        }
        Ok(out)
    }

    /// As Lucene's builder with `dedup`: a pair given twice counts once; the
    /// original is kept when any rule keeps it.
    fn add(&mut self, input: &[String], output: &[String], keep_original: bool) {
        let key = input.join(&SEPARATOR.to_string());
        for cut in key.match_indices(SEPARATOR).map(|(at, _)| at) {
            self.continued.insert(key[..cut].to_string());
        }
        let m = self.rules.entry(key).or_default();
        if !m.outputs.iter().any(|o| o == output) {
            m.outputs.push(output.to_vec());
        }
        m.keep_original |= keep_original;
    }

    /// The longest input that the terms of `run` start with (Lucene's greedy
    /// match): how many terms it takes and what they become.
    pub(crate) fn longest<'t>(&self, run: impl IntoIterator<Item = &'t str>) -> Option<(usize, &Mapping)> {
        let mut key = String::new();
        let mut found = None;
        for (i, term) in run.into_iter().enumerate() {
            if i > 0 {
                key.push(SEPARATOR);
            }
            key.push_str(term);
            if let Some(m) = self.rules.get(&key) {
                found = Some((i + 1, m));
            }
            if !self.continued.contains(&key) {
                break;
            }
        }
        found
    }
}

/// The terms a rule word analyzed to, refused when there are none (Lucene's checks).
fn checked(word: &str, terms: Vec<String>) -> Result<Vec<String>, String> {
    if terms.is_empty() {
        return Err(format!("term: {word} was completely eliminated by analyzer"));
    }
    if terms.iter().any(String::is_empty) {
        return Err(format!("term: {word} analyzed to a zero-length token"));
    }
    Ok(terms)
}

/// `s` cut at each unescaped `sep`, escapes kept (Lucene's `split`).
fn split(s: &str, sep: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix(sep) {
            out.push(String::new());
            rest = after;
            continue;
        }
        let last = out.last_mut().expect("one part");
        last.push(c);
        rest = &rest[c.len_utf8()..];
        if c == '\\' {
            if let Some(escaped) = rest.chars().next() {
                last.push(escaped);
                rest = &rest[escaped.len_utf8()..];
            }
        }
    }
    out
}

/// `s` with its escaping backslashes removed.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &str) -> Result<Vec<String>, String> {
        Ok(w.split_whitespace().map(str::to_lowercase).collect())
    }

    fn map(rules: &[&str], expand: bool, graph: bool) -> SynonymMap {
        let rules: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
        SynonymMap::parse(&rules, expand, false, graph, words).unwrap()
    }

    /// What the longest input at the start of `text` becomes: how many terms it takes, each output, kept.
    fn matched(m: &SynonymMap, text: &str) -> Option<(usize, Vec<String>, bool)> {
        let (n, mapping) = m.longest(text.split_whitespace())?;
        Some((n, mapping.outputs.iter().map(|o| o.join(" ")).collect(), mapping.keep_original))
    }

    fn outputs(list: &[&str]) -> Vec<String> {
        list.iter().map(|o| o.to_string()).collect()
    }

    #[test]
    fn equivalent_words_map_to_each_other() {
        let m = map(&["Quick, fast, rapid"], true, false);
        assert_eq!(matched(&m, "fast car"), Some((1, outputs(&["quick", "rapid"]), true)));
        let first = map(&["quick, fast, rapid"], false, false);
        assert_eq!(matched(&first, "fast"), Some((1, outputs(&["quick"]), false)));
        assert_eq!(matched(&first, "quick"), Some((1, outputs(&["quick"]), false)));
    }

    #[test]
    fn explicit_mappings_replace_unless_another_rule_keeps_the_original() {
        let m =
            map(&["quick, fast => rapid, speedy", "fast, zippy", "# fast => slow", "a => a, d"], true, false);
        assert_eq!(matched(&m, "quick"), Some((1, outputs(&["rapid", "speedy"]), false)));
        assert_eq!(matched(&m, "fast"), Some((1, outputs(&["rapid", "speedy", "zippy"]), true)));
        assert_eq!(matched(&m, "a"), Some((1, outputs(&["a", "d"]), false)));
        assert_eq!(matched(&m, "slow"), None);
    }

    #[test]
    fn the_longest_run_of_terms_a_rule_names_matches() {
        let m = map(&["new york, ny", "new york city => nyc", "york => yorkshire"], true, false);
        assert_eq!(matched(&m, "new york city hall"), Some((3, outputs(&["nyc"]), false)));
        assert_eq!(matched(&m, "new york state"), Some((2, outputs(&["ny"]), true)));
        assert_eq!(matched(&m, "ny"), Some((1, outputs(&["new york"]), true)));
        assert_eq!(matched(&m, "new jersey"), None);
    }

    /// Lenient, a word that cannot be used leaves out the pairs it is in,
    /// the rule's others kept (Elasticsearch's parser); otherwise its line is named.
    #[test]
    fn bad_rules_name_their_line_unless_lenient() {
        let no_the = |w: &str| match w {
            "the" => Err("term: the was completely eliminated by analyzer".to_string()),
            w => words(w),
        };
        let rules = vec!["a, b".to_string(), "the, ye, thee".to_string()];
        let err = SynonymMap::parse(&rules, true, false, false, no_the).unwrap_err();
        assert_eq!((err.line, err.reason.contains("eliminated")), (2, true), "{}", err.reason);
        let lenient = SynonymMap::parse(&rules, true, true, false, no_the).unwrap();
        assert_eq!(matched(&lenient, "a"), Some((1, outputs(&["b"]), true)));
        assert_eq!(matched(&lenient, "ye"), Some((1, outputs(&["thee"]), true)));
        assert_eq!(matched(&lenient, "the"), None);
        let twice = vec!["a => b => c".to_string()];
        assert!(SynonymMap::parse(&twice, true, false, false, words).is_err());
    }

    #[test]
    fn escapes_keep_separators_in_a_word() {
        assert_eq!(split(r"a\,b, c", ","), vec![r"a\,b".to_string(), " c".to_string()]);
        assert_eq!(unescape(r"a\,b"), "a,b");
        assert_eq!(split(r"a \=> b => c", "=>").len(), 2);
    }
}

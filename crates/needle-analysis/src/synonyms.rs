//! Synonym rules in Solr's format, as Lucene's `SolrSynonymParser` reads
//! them, for the synonym filters (Elasticsearch's `synonym` and
//! `synonym_graph`):
//!
//! - `a, b, c`: each word is all of them (`expand`), or the first (not);
//! - `a, b => c, d`: `a` and `b` become `c` and `d` (the originals go unless
//!   another rule keeps them);
//! - `#` starts a comment line; `\` escapes the next character (`\,`).
//!
//! Every word is analyzed first by what comes before the filter in its
//! analyzer (the caller's `analyze`), so `Quick` in a rule matches after a
//! lowercase filter. Only rules of one-word terms are supported: a rule
//! whose words analyze to several terms is refused by name.

use std::collections::HashMap;

/// What a synonym filter maps single terms to.
#[derive(Debug, Default)]
pub struct SynonymMap {
    map: HashMap<String, Mapping>,
    /// `synonym_graph`: the synonyms come before the original (Lucene's
    /// SynonymGraphFilter), where `synonym` puts them after.
    graph: bool,
}

#[derive(Debug, Default)]
struct Mapping {
    outputs: Vec<String>,
    keep_original: bool,
}

/// A rule that cannot be read: its line (from 1) and why.
#[derive(Debug, PartialEq)]
pub struct RuleError {
    pub line: usize,
    pub reason: String,
}

impl SynonymMap {
    /// The map of `rules` (one rule a line). `analyze` gives a rule word's
    /// terms, `Err` naming why it has none it can use; `lenient` skips a
    /// rule with such a word instead of failing.
    pub fn parse(
        rules: &[String],
        expand: bool,
        lenient: bool,
        graph: bool,
        analyze: impl Fn(&str) -> Result<Vec<String>, String>,
    ) -> Result<SynonymMap, RuleError> {
        let mut out = SynonymMap { map: HashMap::new(), graph };
        for (i, line) in rules.iter().flat_map(|r| r.lines()).enumerate() {
            let fail = |reason: String| RuleError { line: i + 1, reason };
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let word = |w: &str| -> Result<Option<Vec<String>>, RuleError> {
                let unescaped = unescape(w);
                match analyze(unescaped.trim()).and_then(|terms| checked(unescaped.trim(), terms)) {
                    Ok(terms) => Ok(Some(terms)),
                    Err(_) if lenient => Ok(None),
                    Err(reason) => Err(fail(reason)),
                }
            };
            let words = |side: &str| -> Result<Option<Vec<Vec<String>>>, RuleError> {
                split(side, ",").iter().map(|w| word(w)).collect()
            };
            // Lucene maps word sequences; Needle single terms: a rule that would map a
            // sequence is refused (a word alone in its rule maps nothing and may be one).
            let single = |terms: &Vec<String>| match terms.as_slice() {
                [one] => Ok(one.clone()),
                _ => Err(fail(format!(
                    "{} is several terms: multi-word synonyms are not supported yet by Needle",
                    terms.join(" ")
                ))),
            };
            let sides = split(line, "=>");
            match sides.as_slice() {
                [left, right] => {
                    let (Some(inputs), Some(outputs)) = (words(left)?, words(right)?) else { continue };
                    for input in &inputs {
                        for output in &outputs {
                            out.add(&single(input)?, &single(output)?, false);
                        }
                    }
                }
                [all] => {
                    let Some(inputs) = words(all)? else { continue };
                    for (i, input) in inputs.iter().enumerate() {
                        match expand {
                            true => {
                                for (_, output) in inputs.iter().enumerate().filter(|&(j, _)| j != i) {
                                    out.add(&single(input)?, &single(output)?, true);
                                }
                            }
                            false => out.add(&single(input)?, &single(&inputs[0])?, false),
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
    fn add(&mut self, input: &str, output: &str, keep_original: bool) {
        let m = self.map.entry(input.to_string()).or_default();
        if !m.outputs.iter().any(|o| o == output) {
            m.outputs.push(output.to_string());
        }
        m.keep_original |= keep_original;
    }

    /// The terms `term` becomes, in Lucene's order, into `out`, each with
    /// whether it is a synonym (`false`: the original, kept); `false` when
    /// no rule names `term` (it stays as it is).
    pub fn expand(&self, term: &str, out: &mut Vec<(String, bool)>) -> bool {
        let Some(m) = self.map.get(term) else { return false };
        let original = m.keep_original.then(|| (term.to_string(), false));
        if !self.graph {
            out.extend(original.clone());
        }
        out.extend(m.outputs.iter().map(|o| (o.clone(), true)));
        if self.graph {
            out.extend(original);
        }
        true
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

    fn expanded(m: &SynonymMap, term: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        m.expand(term, &mut out);
        out
    }

    fn pairs(list: &[(&str, bool)]) -> Vec<(String, bool)> {
        list.iter().map(|&(t, s)| (t.to_string(), s)).collect()
    }

    #[test]
    fn equivalent_words_expand_to_each_other_after_the_original() {
        let m = map(&["Quick, fast, rapid"], true, false);
        assert_eq!(expanded(&m, "fast"), pairs(&[("fast", false), ("quick", true), ("rapid", true)]));
        let graph = map(&["quick, fast, rapid"], true, true);
        assert_eq!(expanded(&graph, "fast"), pairs(&[("quick", true), ("rapid", true), ("fast", false)]));
        let first = map(&["quick, fast, rapid"], false, false);
        assert_eq!(expanded(&first, "fast"), pairs(&[("quick", true)]));
        assert_eq!(expanded(&first, "quick"), pairs(&[("quick", true)]));
    }

    #[test]
    fn explicit_mappings_replace_unless_another_rule_keeps_the_original() {
        let m =
            map(&["quick, fast => rapid, speedy", "fast, zippy", "# fast => slow", "a => a, d"], true, false);
        assert_eq!(expanded(&m, "quick"), pairs(&[("rapid", true), ("speedy", true)]));
        assert_eq!(
            expanded(&m, "fast"),
            pairs(&[("fast", false), ("rapid", true), ("speedy", true), ("zippy", true)])
        );
        assert_eq!(expanded(&m, "a"), pairs(&[("a", true), ("d", true)]));
        assert!(!m.expand("slow", &mut Vec::new()));
    }

    #[test]
    fn bad_rules_name_their_line_unless_lenient() {
        let no_the = |w: &str| match w {
            "the" => Err("term: the was completely eliminated by analyzer".to_string()),
            w => words(w),
        };
        let rules = vec!["a, b".to_string(), "the, ye".to_string()];
        let err = SynonymMap::parse(&rules, true, false, false, no_the).unwrap_err();
        assert_eq!((err.line, err.reason.contains("eliminated")), (2, true), "{}", err.reason);
        let lenient = SynonymMap::parse(&rules, true, true, false, no_the).unwrap();
        assert_eq!(expanded(&lenient, "a"), pairs(&[("a", false), ("b", true)]));
        assert!(!lenient.expand("ye", &mut Vec::new()));
        let twice = vec!["a => b => c".to_string()];
        assert!(SynonymMap::parse(&twice, true, false, false, words).is_err());
    }

    /// A word of several terms is refused where it would be mapped, even
    /// when lenient; alone in its rule it maps nothing, as in Lucene.
    #[test]
    fn multi_word_mappings_are_refused_by_name() {
        for lenient in [false, true] {
            let rules = vec!["a, b".to_string(), "new york, ny".to_string()];
            let err = SynonymMap::parse(&rules, true, lenient, false, words).unwrap_err();
            assert_eq!(err.line, 2);
            assert!(err.reason.contains("multi-word"), "{}", err.reason);
        }
        let alone = vec!["new york".to_string()];
        assert!(SynonymMap::parse(&alone, true, false, false, words).is_ok());
    }

    #[test]
    fn escapes_keep_separators_in_a_word() {
        assert_eq!(split(r"a\,b, c", ","), vec![r"a\,b".to_string(), " c".to_string()]);
        assert_eq!(unescape(r"a\,b"), "a,b");
        assert_eq!(split(r"a \=> b => c", "=>").len(), 2);
    }
}

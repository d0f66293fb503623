//! The term matchers of prefix, wildcard and fuzzy queries
//! (`needle_search::automata`), a character at a time, against the oracle's
//! direct readings of the same rules: a table for edit distances,
//! backtracking for wildcards.

use needle_codecs::TermMatcher;
use needle_search::automata::{EditDistanceMatcher, PrefixMatcher, WildcardMatcher};
use needle_testkit::oracle::{osa_distance, wildcard_matches};
use proptest::prelude::*;

/// Short words over a few letters (one of them two bytes long), so that matches are common.
fn word() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[abcé]{0,7}").unwrap()
}

proptest! {
    #[test]
    fn edit_distances_match_the_table(
        query in word(), term in word(), max_edits in 0u32..3, prefix in 0usize..3, transpositions: bool,
    ) {
        let m = EditDistanceMatcher::new(&query, max_edits, prefix, transpositions);
        let q: Vec<char> = query.chars().collect();
        let t: Vec<char> = term.chars().collect();
        let split = prefix.min(q.len());
        let want = (t.len() >= split && t[..split] == q[..split])
            .then(|| osa_distance(&t[split..], &q[split..], transpositions))
            .filter(|&d| d <= max_edits);
        prop_assert_eq!(m.distance(term.as_bytes()), want);
        prop_assert_eq!(m.matches(term.as_bytes()), want.is_some());
    }

    #[test]
    fn wildcards_match_backtracking(pattern in "[ab*?é]{0,6}", term in word()) {
        let m = WildcardMatcher::new(&pattern, false);
        prop_assert_eq!(m.matches(term.as_bytes()), wildcard_matches(&pattern, &term));
    }

    #[test]
    fn prefixes_match_starts_with(prefix in word(), term in word()) {
        prop_assert_eq!(PrefixMatcher::new(&prefix, false).matches(term.as_bytes()), term.starts_with(&prefix));
    }
}

//! Search: the query model ([`Query`]) and its string syntax ([`parse_query`]),
//! scorers that walk posting lists ([`iter`]), Lucene's BM25 ([`bm25`]),
//! top-k collection with block-max pruning ([`Searcher`]), and highlighting.

pub mod analyzed;
pub mod automata;
pub mod bm25;
mod collect;
mod explain;
pub mod highlight;
pub mod iter;
mod matches;
pub use matches::{MatchVisitor, MATCH_BATCH};
mod maxscore;
mod multi_term;
mod parser;
mod query;
pub mod regexp;
mod scorer;
mod searcher;
mod sort;
mod stats;
mod weight;

pub use explain::{describe, Explanation};
pub use multi_term::{Fuzzy, MultiTermQuery, PhrasePrefix, TermPattern, TermRange};
pub use parser::simple::{parse_simple_query, SimpleFlags, SimpleOptions};
pub use parser::{
    parse_query, parse_query_with, term_range, FuzzyDefaults, ParseOptions, QueryFields, MAX_CLAUSES,
};
pub use query::{BoolQuery, PhraseQuery, Query, RangeQuery, Span, TermQuery};
pub use scorer::{ScoreWindow, Scorer};
pub use searcher::{ScoredDoc, SearchOptions, Searcher, TopDocs};
pub use sort::{
    compare as compare_sort_values, SortBy, SortColumns, SortKey, SortRequest, SortValue, SortedDocs,
    SortedHit, SortedTop,
};
pub use stats::CorpusStats;

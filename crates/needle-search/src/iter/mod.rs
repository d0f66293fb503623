//! Scorers: one file per iterator. Leaves walk posting lists ([`TermScorer`],
//! [`PhraseScorer`], [`AllScorer`]); the others combine scorers the way
//! Lucene's boolean query does.

mod all;
mod conjunction;
mod disjunction;
mod exclude;
mod phrase;
mod phrase_filters;
mod req_opt;
mod term;

pub use all::AllScorer;
pub use conjunction::Conjunction;
pub use disjunction::Disjunction;
pub use exclude::Exclude;
pub use phrase::{exact_matches as phrase_exact_matches, PhraseScorer, PhraseTerm};
pub use phrase_filters::FilterPlan;
pub use req_opt::ReqOpt;
pub use term::TermScorer;

/// A boxed scorer borrowing its segment.
pub type BoxScorer<'a> = Box<dyn crate::Scorer + Send + 'a>;

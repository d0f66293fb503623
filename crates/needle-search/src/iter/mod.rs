//! Scorers: one file per iterator. Leaves walk posting lists ([`TermScorer`],
//! [`PhraseScorer`], [`SpanScorer`], [`AllScorer`], [`RangeScorer`] over doc values); the others combine scorers the way
//! Lucene's boolean query does.

mod all;
#[cfg(any(test, feature = "asserting-scorers"))]
mod asserting;
mod boosting;
mod conjunction;
mod constant;
mod disjunction;
mod exclude;
mod exists;
mod filter;
mod phrase;
mod phrase_filters;
mod range;
mod req_opt;
mod span;
mod term;
mod term_set;
mod union;

pub use all::AllScorer;
pub use boosting::Demote;
pub use conjunction::Conjunction;
pub use constant::ConstantScorer;
pub use disjunction::{Combine, Disjunction};
pub use exclude::Exclude;
pub use exists::ExistsScorer;
pub use filter::{FilterScorer, Matcher};
pub use phrase::{exact_matches as phrase_exact_matches, PhraseScorer, PhraseTerm};
pub use phrase_filters::FilterPlan;
pub use range::RangeScorer;
pub(crate) use range::{bits_in_range, count_in_range};
pub use req_opt::ReqOpt;
pub use span::{SpanNode, SpanScorer};
pub use term::TermScorer;
pub use term_set::{DocBits, TermSetScorer};
pub use union::UnionPostings;

/// A boxed scorer borrowing its segment.
pub type BoxScorer<'a> = Box<dyn crate::Scorer + Send + 'a>;

/// `scorer`, wrapped in a contract-checking scorer in test builds (the
/// `asserting-scorers` feature); `what` names the iterator in its messages.
pub(crate) fn checked<'a>(scorer: BoxScorer<'a>, what: &'static str) -> BoxScorer<'a> {
    #[cfg(any(test, feature = "asserting-scorers"))]
    return asserting::AssertingScorer::wrap(scorer, what);
    #[cfg(not(any(test, feature = "asserting-scorers")))]
    {
        let _ = what;
        scorer
    }
}

//! Lucene's WordDelimiterGraphFilter (Elasticsearch's `word_delimiter_graph`
//! filter): a term is cut into its subwords at the characters that are
//! neither letters nor digits, where lowercase turns to uppercase
//! (`PowerShot`) and where letters and digits meet (`SD500`), a trailing
//! `'s` dropped (`O'Neil's` to `O`, `Neil`); runs of word or number parts
//! may be joined as well (`wi-fi` to `wifi`), and the original kept. Each
//! part takes its own position; a joined part or the original spans the
//! positions of the parts it covers (its position length), as a graph.
//!
//! The subword rules follow Lucene's WordDelimiterIterator and the parts'
//! order, positions and offsets its filter's, step by step; the character
//! types are Java's, read out of Lucene (`tables/word_delimiter_types.rs`).
//! `tests/golden/lucene/word_delimiter.jsonl` holds Lucene's parts of
//! thousands of generated terms under random options, compared here.
//!
//! The older filter (Lucene's WordDelimiterFilter, Elasticsearch's
//! `word_delimiter`) cuts the same subwords but makes a stream, not a graph:
//! every token one position long, a joined run stacked on its first part,
//! the original first, then by where each starts; position increments carried
//! from term to term as Lucene's filter carries them ([`WordDelimiter::split_plain`],
//! checked against `tests/golden/lucene/word_delimiter_plain.jsonl`).

use std::collections::HashSet;

use crate::tables::word_delimiter_types::WORD_DELIMITER_TYPES;

const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 4;
const DELIMITER: u8 = 8;
const ALPHA: u8 = LOWER | UPPER;

/// What the filter does, as Elasticsearch's parameters of the same names say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordDelimiter {
    pub generate_word_parts: bool,
    pub generate_number_parts: bool,
    pub catenate_words: bool,
    pub catenate_numbers: bool,
    pub catenate_all: bool,
    pub preserve_original: bool,
    pub split_on_case_change: bool,
    pub split_on_numerics: bool,
    pub stem_english_possessive: bool,
    /// Leave a term marked as a keyword whole.
    pub ignore_keywords: bool,
    /// Give parts their own offsets within the term's (when the term is as long as its text).
    pub adjust_offsets: bool,
    /// Terms left whole.
    pub protected: HashSet<String>,
    /// A graph (`word_delimiter_graph`), else the older filter's stream
    /// (`word_delimiter`: every token one position long, see [`WordDelimiter::split_plain`]).
    pub graph: bool,
}

impl Default for WordDelimiter {
    /// Elasticsearch's defaults.
    fn default() -> Self {
        WordDelimiter {
            generate_word_parts: true,
            generate_number_parts: true,
            catenate_words: false,
            catenate_numbers: false,
            catenate_all: false,
            preserve_original: false,
            split_on_case_change: true,
            split_on_numerics: true,
            stem_english_possessive: true,
            ignore_keywords: false,
            adjust_offsets: true,
            protected: HashSet::new(),
            graph: true,
        }
    }
}

/// A term's fate: kept as it is, dropped (nothing but delimiters: a hole
/// in the positions), or cut into parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    Whole,
    Dropped,
    Parts(Vec<Part>),
}

/// A part of a term: its text, the positions it spans after the term's
/// first (`start_pos..end_pos`), and the bytes of the term it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub term: String,
    pub start_pos: u32,
    pub end_pos: u32,
    pub start: usize,
    pub end: usize,
}

impl WordDelimiter {
    /// The parts of `term` (a keyword when `keyword`), in Lucene's order:
    /// the original first when kept, then by where each starts, the longer first.
    pub fn split(&self, term: &str, keyword: bool) -> Split {
        if self.ignore_keywords && keyword {
            return Split::Whole;
        }
        let chars: Vec<char> = term.chars().collect();
        let mut it = Subwords::new(&chars, self);
        it.next();
        if (it.current == 0 && it.end == it.len() as isize) || self.protected.contains(term) {
            return Split::Whole;
        }
        if it.end == DONE {
            return if self.preserve_original { Split::Whole } else { Split::Dropped };
        }
        Split::Parts(Parts::new(self, term, &chars).collect(it))
    }

    fn generates(&self, kind: u8) -> bool {
        (self.generate_word_parts && kind & ALPHA != 0) || (self.generate_number_parts && kind & DIGIT != 0)
    }

    fn catenates(&self, kind: u8) -> bool {
        (self.catenate_words && kind & ALPHA != 0) || (self.catenate_numbers && kind & DIGIT != 0)
    }
}

/// A token of the older filter (Lucene's WordDelimiterFilter): its text,
/// its position increment from the token before it, and where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainPart {
    pub term: String,
    pub increment: u32,
    pub offsets: PartOffsets,
}

/// Where a part of a term lies in the text, as Lucene places it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartOffsets {
    /// The term's own offsets (the term whole, or a term not as long as its
    /// text, whose parts cannot be placed).
    Whole,
    /// Bytes `start..end` of the term.
    Within(usize, usize),
    /// From byte `start` of the term to the term's end (the lone part of a
    /// term not as long as its text, where that start lies within it).
    From(usize),
}

/// What the older filter carries from one term of a text to the next.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlainState {
    /// Position increments taken in and not given out yet.
    pub accumulated: u32,
    /// A token has been given out.
    pub started: bool,
}

impl WordDelimiter {
    /// Lucene's WordDelimiterFilter (Elasticsearch's `word_delimiter`) on
    /// one term whose own position increment is `increment` (`placed`: the
    /// term as long as its text): the same subwords as the graph filter's,
    /// each token one position long, the joined runs stacked on their first
    /// part, in the order Lucene's filter gives them (the original first,
    /// then by where each starts, parts before runs joined there). A term of
    /// delimiters alone gives nothing and, past the first token, leaves no hole.
    pub fn split_plain(
        &self,
        term: &str,
        increment: u32,
        placed: bool,
        state: &mut PlainState,
    ) -> Vec<PlainPart> {
        state.accumulated += increment;
        let chars: Vec<char> = term.chars().collect();
        let mut it = Subwords::new(&chars, self);
        it.next();
        let whole = |increment| PlainPart { term: term.to_string(), increment, offsets: PartOffsets::Whole };
        if (it.current == 0 && it.end == it.len() as isize) || self.protected.contains(term) {
            let out = vec![whole(std::mem::take(&mut state.accumulated))];
            state.started = true;
            return out;
        }
        if it.end == DONE && !self.preserve_original {
            if increment == 1 && state.started {
                state.accumulated -= 1;
            }
            return Vec::new();
        }
        let mut out = Vec::new();
        if self.preserve_original {
            out.push(whole(std::mem::take(&mut state.accumulated)));
            state.started = true;
        }
        let mut plain = Plain {
            wd: self,
            chars: &chars,
            bytes: term.char_indices().map(|(i, _)| i).chain([term.len()]).collect(),
            placed,
            state,
            has_output: false,
            following_original: !self.preserve_original,
            last_run_count: 0,
            buffered: Vec::new(),
        };
        plain.walk(it, &mut out);
        out
    }
}

/// One term through the older filter (the fields of Lucene's WordDelimiterFilter).
struct Plain<'a> {
    wd: &'a WordDelimiter,
    chars: &'a [char],
    /// Each character's byte offset in the term, and the term's length last.
    bytes: Vec<usize>,
    placed: bool,
    state: &'a mut PlainState,
    has_output: bool,
    following_original: bool,
    last_run_count: usize,
    /// Parts and joined runs, given out sorted once the term is walked.
    buffered: Vec<PlainPart>,
}

impl Plain<'_> {
    fn walk(&mut self, mut it: Subwords, out: &mut Vec<PlainPart>) {
        let wd = self.wd;
        let (mut run, mut all) = (Run::default(), Run::default());
        while it.end != DONE {
            if it.is_single_word() {
                // A word amid delimiters alone is given out at once.
                let part = self.part(&it, true);
                out.push(part);
                self.state.started = true;
                it.next();
                continue;
            }
            let kind = it.kind();
            if run.count > 0 && run.kind & kind == 0 {
                self.flush(&mut run);
                self.has_output = false;
            }
            if wd.catenates(kind) {
                join(self.chars, &mut run, &it);
            }
            if wd.catenate_all {
                join(self.chars, &mut all, &it);
            }
            if wd.generates(kind) {
                let part = self.part(&it, false);
                self.buffered.push(part);
            }
            it.next();
        }
        if run.count > 0 {
            self.flush(&mut run);
        }
        if all.count > self.last_run_count {
            self.write(&all);
        }
        // By where each starts, the larger increment first (a stable sort, as Lucene's merge sort).
        let start = |p: &PlainPart| match p.offsets {
            PartOffsets::Within(start, _) | PartOffsets::From(start) => start,
            PartOffsets::Whole => 0,
        };
        self.buffered.sort_by(|a, b| start(a).cmp(&start(b)).then(b.increment.cmp(&a.increment)));
        for mut part in self.buffered.drain(..) {
            if !self.state.started && part.increment == 0 {
                part.increment = 1;
            }
            self.state.started = true;
            out.push(part);
        }
    }

    /// The current subword as a part (`single`: the term's one word).
    fn part(&mut self, it: &Subwords, single: bool) -> PlainPart {
        let (start, end) = (self.bytes[it.current as usize], self.bytes[it.end as usize]);
        let term: String = self.chars[it.current as usize..it.end as usize].iter().collect();
        let offsets = match (self.placed, single) {
            (true, _) => PartOffsets::Within(start, end),
            (false, true) => PartOffsets::From(start),
            (false, false) => PartOffsets::Whole,
        };
        PlainPart { term, increment: self.position(false), offsets }
    }

    /// Ends a run of joined subwords, written unless it is one subword given as a part anyway.
    fn flush(&mut self, run: &mut Run) {
        self.last_run_count = run.count;
        if run.count != 1 || !self.wd.generates(run.kind) {
            self.write(run);
        }
        *run = Run::default();
    }

    fn write(&mut self, run: &Run) {
        let offsets = match self.placed {
            true => PartOffsets::Within(self.bytes[run.start_part], self.bytes[run.end_part]),
            false => PartOffsets::Whole,
        };
        let increment = self.position(true);
        self.state.accumulated = 0;
        self.buffered.push(PlainPart { term: run.text.clone(), increment, offsets });
    }

    /// The position increment of the next token (`inject`: a joined run,
    /// stacked where a part was given): Lucene's `position`.
    fn position(&mut self, inject: bool) -> u32 {
        let accumulated = self.state.accumulated;
        if self.has_output {
            self.state.accumulated = 0;
            return if inject { 0 } else { accumulated.max(1) };
        }
        self.has_output = true;
        if !self.following_original {
            // The first token after the original kept is at its position.
            self.following_original = true;
            return 0;
        }
        self.state.accumulated = 0;
        accumulated.max(1)
    }
}

/// Adds the current subword to `run` (its kind and start when it is the first).
fn join(chars: &[char], run: &mut Run, it: &Subwords) {
    let (start, end) = (it.current as usize, it.end as usize);
    if run.count == 0 {
        run.kind = it.kind();
        run.start_part = start;
    }
    run.text.extend(&chars[start..end]);
    run.count += 1;
    run.end_part = end;
}

/// The type of `c`, as Lucene's WordDelimiterIterator gives it.
fn char_type(c: char) -> u8 {
    let Ok(unit) = u16::try_from(u32::from(c)) else {
        // Outside the BMP: Java sees two surrogates, each both a letter and a digit.
        return ALPHA | DIGIT;
    };
    match WORD_DELIMITER_TYPES.binary_search_by(|&(first, last, _)| {
        if last < unit {
            std::cmp::Ordering::Less
        } else if first > unit {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }) {
        Ok(i) => match WORD_DELIMITER_TYPES[i].2 {
            3 => ALPHA,
            t => t,
        },
        Err(_) => DELIMITER,
    }
}

const DONE: isize = -1;

/// Lucene's WordDelimiterIterator over a term's characters: `current..end`
/// is the subword found last (`end` is [`DONE`] past the last).
struct Subwords<'a> {
    chars: &'a [char],
    types: Vec<u8>,
    start_bounds: usize,
    end_bounds: usize,
    current: isize,
    end: isize,
    has_final_possessive: bool,
    skip_possessive: bool,
    split_on_case_change: bool,
    split_on_numerics: bool,
    stem_english_possessive: bool,
}

impl<'a> Subwords<'a> {
    fn new(chars: &'a [char], wd: &WordDelimiter) -> Self {
        let types = chars.iter().map(|&c| char_type(c)).collect();
        let len = chars.len();
        let mut it = Subwords {
            chars,
            types,
            start_bounds: 0,
            end_bounds: len,
            current: 0,
            end: 0,
            has_final_possessive: false,
            skip_possessive: false,
            split_on_case_change: wd.split_on_case_change,
            split_on_numerics: wd.split_on_numerics,
            stem_english_possessive: wd.stem_english_possessive,
        };
        // The bounds leave out leading and trailing delimiters; a final possessive is only noted.
        while it.start_bounds < len && it.types[it.start_bounds] & DELIMITER != 0 {
            it.start_bounds += 1;
        }
        while it.end_bounds > it.start_bounds && it.types[it.end_bounds - 1] & DELIMITER != 0 {
            it.end_bounds -= 1;
        }
        it.has_final_possessive = it.ends_with_possessive(it.end_bounds);
        it.current = it.start_bounds as isize;
        it
    }

    fn len(&self) -> usize {
        self.chars.len()
    }

    /// Moves to the next subword; its end, or [`DONE`].
    fn next(&mut self) -> isize {
        self.current = self.end;
        if self.current == DONE {
            return DONE;
        }
        if self.skip_possessive {
            self.current += 2;
            self.skip_possessive = false;
        }
        let bound = self.end_bounds as isize;
        let mut last = 0;
        while self.current < bound {
            last = self.types[self.current as usize];
            if last & DELIMITER == 0 {
                break;
            }
            self.current += 1;
        }
        if self.current >= bound {
            self.end = DONE;
            return DONE;
        }
        self.end = self.current + 1;
        while self.end < bound {
            let kind = self.types[self.end as usize];
            if self.is_break(last, kind) {
                break;
            }
            last = kind;
            self.end += 1;
        }
        if self.end < bound - 1 && self.ends_with_possessive(self.end as usize + 2) {
            self.skip_possessive = true;
        }
        self.end
    }

    /// The current subword's type (its first character's; a letter's as `ALPHA`).
    fn kind(&self) -> u8 {
        if self.end == DONE {
            return 0;
        }
        match self.types[self.current as usize] {
            LOWER | UPPER => ALPHA,
            t => t,
        }
    }

    fn is_break(&self, last: u8, kind: u8) -> bool {
        if kind & last != 0 {
            return false;
        }
        let letters = last & ALPHA != 0 && kind & ALPHA != 0;
        if !self.split_on_case_change && letters {
            return false;
        }
        if last & UPPER != 0 && kind & ALPHA != 0 {
            return false;
        }
        let letter_digit =
            (last & ALPHA != 0 && kind & DIGIT != 0) || (last & DIGIT != 0 && kind & ALPHA != 0);
        self.split_on_numerics || !letter_digit
    }

    fn is_single_word(&self) -> bool {
        let end = self.end_bounds - if self.has_final_possessive { 2 } else { 0 };
        self.current == self.start_bounds as isize && self.end == end as isize
    }

    /// Whether an English possessive (`'s`) ends before `pos`.
    fn ends_with_possessive(&self, pos: usize) -> bool {
        self.stem_english_possessive
            && pos > 2
            && self.chars[pos - 2] == '\''
            && matches!(self.chars[pos - 1], 's' | 'S')
            && self.types[pos - 3] & ALPHA != 0
            && (pos == self.end_bounds || self.types[pos] & DELIMITER != 0)
    }
}

/// A run of subwords being joined (Lucene's WordDelimiterConcatenation).
#[derive(Default)]
struct Run {
    text: String,
    start_part: usize,
    end_part: usize,
    start_pos: u32,
    kind: u8,
    count: usize,
}

/// The parts of one term being gathered (Lucene's `bufferWordParts`):
/// slices of the term by character, positions in the term's graph.
struct Parts<'a> {
    wd: &'a WordDelimiter,
    term: &'a str,
    chars: &'a [char],
    /// Each character's byte offset in the term, and the term's length last.
    bytes: Vec<usize>,
    parts: Vec<(Option<String>, u32, u32, usize, usize)>,
    word_pos: u32,
    last_run_count: usize,
}

impl<'a> Parts<'a> {
    fn new(wd: &'a WordDelimiter, term: &'a str, chars: &'a [char]) -> Self {
        let bytes = term.char_indices().map(|(i, _)| i).chain([term.len()]).collect();
        Parts { wd, term, chars, bytes, parts: Vec::new(), word_pos: 0, last_run_count: 0 }
    }

    fn collect(mut self, mut it: Subwords) -> Vec<Part> {
        let wd = self.wd;
        if wd.preserve_original {
            self.parts.push((None, 0, 1, 0, self.chars.len()));
        }
        if it.is_single_word() {
            self.slice(it.current as usize, it.end as usize);
            it.next();
        } else {
            let (mut run, mut all) = (Run::default(), Run::default());
            while it.end != DONE {
                let kind = it.kind();
                if run.count > 0 && run.kind & kind == 0 {
                    self.flush(&mut run);
                }
                if wd.catenates(kind) {
                    self.join(&mut run, &it);
                }
                if wd.catenate_all {
                    self.join(&mut all, &it);
                }
                if wd.generates(kind) {
                    self.slice(it.current as usize, it.end as usize);
                }
                it.next();
            }
            if run.count > 0 {
                self.flush(&mut run);
            }
            // Not when the runs above already joined the same subwords (`PowerShot` with catenate_words).
            if all.count > 0 && all.count > self.last_run_count {
                if self.word_pos == all.start_pos {
                    self.word_pos += 1;
                }
                self.write(&all);
            }
        }
        if wd.preserve_original {
            self.parts[0].2 = self.word_pos.max(1);
        }
        // By where each starts, the longer first; the original stays first (a stable sort).
        let first = usize::from(wd.preserve_original);
        self.parts[first..].sort_by(|a, b| a.3.cmp(&b.3).then(b.4.cmp(&a.4)));
        let term = self.term;
        self.parts
            .into_iter()
            .map(|(text, start_pos, end_pos, start, end)| {
                let (start, end) = (self.bytes[start], self.bytes[end]);
                let text = text.unwrap_or_else(|| term[start..end].to_string());
                Part { term: text, start_pos, end_pos, start, end }
            })
            .collect()
    }

    /// A subword as a part of its own, at the next position.
    fn slice(&mut self, start: usize, end: usize) {
        self.parts.push((None, self.word_pos, self.word_pos + 1, start, end));
        self.word_pos += 1;
    }

    fn join(&self, run: &mut Run, it: &Subwords) {
        let (start, end) = (it.current as usize, it.end as usize);
        if run.count == 0 {
            run.kind = it.kind();
            run.start_part = start;
            run.start_pos = self.word_pos;
        }
        run.text.extend(&self.chars[start..end]);
        run.count += 1;
        run.end_part = end;
    }

    /// Ends a run of joined subwords, written unless it is one subword given as a part anyway.
    fn flush(&mut self, run: &mut Run) {
        if self.word_pos == run.start_pos {
            self.word_pos += 1;
        }
        self.last_run_count = run.count;
        if run.count != 1 || !self.wd.generates(run.kind) {
            self.write(run);
        }
        *run = Run::default();
    }

    fn write(&mut self, run: &Run) {
        self.parts.push((Some(run.text.clone()), run.start_pos, self.word_pos, run.start_part, run.end_part));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(wd: &WordDelimiter, term: &str) -> Vec<(String, u32, u32)> {
        match wd.split(term, false) {
            Split::Whole => vec![(term.to_string(), 0, 1)],
            Split::Dropped => Vec::new(),
            Split::Parts(parts) => parts.into_iter().map(|p| (p.term, p.start_pos, p.end_pos)).collect(),
        }
    }

    fn t(term: &str, start: u32, end: u32) -> (String, u32, u32) {
        (term.to_string(), start, end)
    }

    #[test]
    fn splits_at_delimiters_case_changes_and_digits() {
        let wd = WordDelimiter::default();
        assert_eq!(terms(&wd, "Wi-Fi"), [t("Wi", 0, 1), t("Fi", 1, 2)]);
        assert_eq!(terms(&wd, "PowerShot500"), [t("Power", 0, 1), t("Shot", 1, 2), t("500", 2, 3)]);
        assert_eq!(terms(&wd, "O'Neil's"), [t("O", 0, 1), t("Neil", 1, 2)]);
        assert_eq!(terms(&wd, "plain"), [t("plain", 0, 1)]);
        assert_eq!(terms(&wd, "--"), []);
    }

    #[test]
    fn joined_runs_and_the_original_span_their_parts() {
        let wd = WordDelimiter { catenate_all: true, preserve_original: true, ..WordDelimiter::default() };
        assert_eq!(
            terms(&wd, "wi-fi-4000"),
            [t("wi-fi-4000", 0, 3), t("wifi4000", 0, 3), t("wi", 0, 1), t("fi", 1, 2), t("4000", 2, 3)]
        );
    }

    /// The options Lucene's flags set (as `tables/word_delimiter_cases.py` adds them up).
    fn from_flags(flags: u64) -> WordDelimiter {
        let o = |bit: u32| flags & (1 << bit) != 0;
        WordDelimiter {
            generate_word_parts: o(0),
            generate_number_parts: o(1),
            catenate_words: o(2),
            catenate_numbers: o(3),
            catenate_all: o(4),
            preserve_original: o(5),
            split_on_case_change: o(6),
            split_on_numerics: o(7),
            stem_english_possessive: o(8),
            ..WordDelimiter::default()
        }
    }

    /// Lucene's older WordDelimiterFilter's tokens, recorded by
    /// `tables/word_delimiter_cases.py --plain`: positions from the
    /// increments, offsets in UTF-16 units.
    #[test]
    fn plain_parts_equal_lucenes() {
        crate::lucene_cases::check("word_delimiter_plain", 3000, |case| {
            let flags = case["flags"].as_u64().expect("flags");
            let wd = WordDelimiter { graph: false, ..from_flags(flags) };
            let term = case["term"].as_str().expect("a term");
            let units = |byte: usize| term[..byte].encode_utf16().count();
            let length = units(term.len());
            let mut position = -1i64;
            let got: Vec<serde_json::Value> = wd
                .split_plain(term, 1, true, &mut PlainState::default())
                .into_iter()
                .map(|p| {
                    position += i64::from(p.increment);
                    let (start, end) = match p.offsets {
                        PartOffsets::Within(start, end) => (units(start), units(end)),
                        PartOffsets::From(start) => (units(start), length),
                        PartOffsets::Whole => (0, length),
                    };
                    serde_json::json!([p.term, position, position + 1, start, end])
                })
                .collect();
            (got != case["parts"].as_array().expect("parts").as_slice())
                .then(|| format!("{term:?} flags {flags}: {got:?}, Lucene {}", case["parts"]))
        });
    }

    /// Lucene's WordDelimiterGraphFilter's parts, recorded by `tables/word_delimiter_cases.py`.
    #[test]
    fn parts_equal_lucenes() {
        crate::lucene_cases::check("word_delimiter", 2001, |case| {
            let flags = case["flags"].as_u64().expect("flags");
            let wd = from_flags(flags);
            let term = case["term"].as_str().expect("a term");
            let units = |byte: usize| term[..byte].encode_utf16().count();
            let parts = match wd.split(term, false) {
                Split::Whole => {
                    vec![Part { term: term.into(), start_pos: 0, end_pos: 1, start: 0, end: term.len() }]
                }
                Split::Dropped => Vec::new(),
                Split::Parts(parts) => parts,
            };
            let got: Vec<serde_json::Value> = parts
                .into_iter()
                .map(|p| serde_json::json!([p.term, p.start_pos, p.end_pos, units(p.start), units(p.end)]))
                .collect();
            (got != case["parts"].as_array().expect("parts").as_slice())
                .then(|| format!("{term:?} flags {flags}: {got:?}, Lucene {}", case["parts"]))
        });
    }
}

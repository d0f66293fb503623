//! One suite for every `Postings` implementation (Lucene's
//! `BasePostingsFormatTestCase`): the in-memory lists of a segment being
//! written (seen through a view, several chunks long) and the on-disk lists
//! the same segment flushes to must give every term's documents,
//! frequencies, positions and offsets as the documents hold them (computed
//! here from the analyzer's tokens, the oracle), seek as the `DocSet`
//! contract says, hand out their blocks whole, and bound every document by
//! its block's impacts. The seed is printed; `NEEDLE_TEST_SEED=N` replays it.

use std::collections::BTreeMap;

use needle_analysis::Analyzer;
use needle_codecs::{Postings, SegmentRead, SegmentReader, Verify};
use needle_core::{DocId, DocSet, FieldId, TERMINATED};
use needle_index::{AnalyzedDoc, MemSegment};
use needle_storage::Directory;
use needle_testkit::random;
use rand::Rng;

/// One posting as the documents hold it.
#[derive(Debug, Clone, PartialEq)]
struct Expected {
    doc: DocId,
    positions: Vec<u32>,
    offsets: Vec<(u32, u32)>,
}

const TEXT: FieldId = 1;
const TAG: FieldId = 2;

fn seed() -> u64 {
    let seed =
        std::env::var("NEEDLE_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    println!("seed {seed}");
    seed
}

#[test]
fn disk_and_memory_postings_follow_one_contract() {
    let seed = seed();
    let mut rng = random::rng(seed);
    let analyzer = Analyzer::standard();
    let mut segment = MemSegment::new("suite");
    let mut expected: BTreeMap<(FieldId, String), Vec<Expected>> = BTreeMap::new();
    // Enough documents that common terms span many blocks and chunks, and
    // more than 32 blocks (a skip index) on disk.
    for doc in 0..6000u32 {
        let words = rng.gen_range(1..60);
        let text = random::sentence(&mut rng, words);
        let tag = random::WORDS[rng.gen_range(0..5)];
        let mut analyzed = AnalyzedDoc::new(format!("doc {doc}").into_bytes());
        analyzed.keyword(0, &[&format!("d{doc}")]);
        analyzed.text(TEXT, &analyzer, &[&text]);
        if rng.gen_ratio(1, 2) {
            analyzed.keyword(TAG, &[tag]);
            expected.entry((TAG, tag.to_string())).or_default().push(Expected {
                doc,
                positions: vec![],
                offsets: vec![],
            });
        }
        let mut per_term: BTreeMap<String, Expected> = BTreeMap::new();
        for t in analyzer.tokens(&text) {
            let e = per_term.entry(t.term).or_insert_with(|| Expected {
                doc,
                positions: vec![],
                offsets: vec![],
            });
            e.positions.push(t.position);
            e.offsets.push((t.start, t.end));
        }
        for (term, e) in per_term {
            expected.entry((TEXT, term)).or_default().push(e);
        }
        segment.add(analyzed);
    }
    let view = segment.view();
    let tmp = tempfile::tempdir().unwrap();
    let dir = Directory::open(tmp.path(), true).unwrap();
    segment.flush(&dir, "seg_000000").unwrap();
    let disk = SegmentReader::open_with(&dir, "seg_000000", Verify::Checksums).unwrap();
    let implementations: [(&str, &dyn SegmentRead); 2] = [("memory", &view), ("disk", &disk)];
    let mut longest_with_a_skip_index = false;
    for (name, segment) in implementations {
        for ((field, term), want) in &expected {
            let context = format!("seed {seed}, {name}, field {field} term {term:?}");
            let open = || segment.postings(*field, term.as_bytes()).unwrap().expect("the term is there");
            let norms = segment.norms(*field);
            if want.len() > 32 * 128 {
                longest_with_a_skip_index = true;
            }
            walk(open(), want, *field == TEXT, &context);
            seeks(open(), want, &mut rng, &context);
            blocks(open(), want, &context);
            bounds(open(), want, norms, &context);
        }
        assert!(segment.postings(TEXT, b"absent-term").unwrap().is_none(), "{name}");
    }
    assert!(longest_with_a_skip_index, "seed {seed}: no list long enough to need a skip index");
}

/// Walking the list gives every posting, in order, with its occurrences.
fn walk(mut p: Box<dyn Postings>, want: &[Expected], positions: bool, context: &str) {
    assert_eq!(p.doc_freq() as usize, want.len(), "{context}: doc_freq");
    let occurrences: usize = want.iter().map(|e| e.positions.len().max(1)).sum();
    assert_eq!(p.total_term_freq() as usize, occurrences, "{context}: total_term_freq");
    let (mut pos, mut off) = (Vec::new(), Vec::new());
    for e in want {
        assert_eq!(p.doc(), e.doc, "{context}");
        assert_eq!(p.freq() as usize, e.positions.len().max(1), "{context}: freq of {}", e.doc);
        p.positions(&mut pos);
        p.offsets(&mut off);
        if positions {
            assert_eq!((&pos, &off), (&e.positions, &e.offsets), "{context}: doc {}", e.doc);
        }
        p.advance();
    }
    assert_eq!(p.doc(), TERMINATED, "{context}: past the last posting");
    assert_eq!(p.advance(), TERMINATED, "{context}: advance after the end");
}

/// `seek` lands on the first posting at or after its target and never moves back.
fn seeks(mut p: Box<dyn Postings>, want: &[Expected], rng: &mut rand::rngs::StdRng, context: &str) {
    let mut target = 0;
    loop {
        target += rng.gen_range(0..40);
        let first = want.iter().find(|e| e.doc >= target).map_or(TERMINATED, |e| e.doc);
        let before = p.doc();
        let got = p.seek(target);
        let expect = if target <= before { before } else { first };
        assert_eq!(got, expect, "{context}: seek({target}) from {before}");
        if got == TERMINATED {
            return;
        }
        let e = want.iter().find(|e| e.doc == got).unwrap();
        assert_eq!(p.freq() as usize, e.positions.len().max(1), "{context}: freq after seek({target})");
    }
}

/// Taking blocks whole (`block_rest` then `advance_by`) gives every posting once.
fn blocks(mut p: Box<dyn Postings>, want: &[Expected], context: &str) {
    let mut seen = Vec::new();
    while p.doc() != TERMINATED {
        let (docs, freqs) = p.block_rest();
        if docs.is_empty() {
            seen.push((p.doc(), p.freq()));
            p.advance();
            continue;
        }
        assert_eq!(docs[0], p.doc(), "{context}: block_rest starts at the current document");
        seen.extend(docs.iter().copied().zip(freqs.iter().copied()));
        let n = docs.len();
        p.advance_by(n);
    }
    let want: Vec<(DocId, u32)> = want.iter().map(|e| (e.doc, e.positions.len().max(1) as u32)).collect();
    assert_eq!(seen, want, "{context}");
}

/// Every posting is within the bounds of its block and of the list.
fn bounds(mut p: Box<dyn Postings>, want: &[Expected], norms: Option<&[u8]>, context: &str) {
    let max = p.max_impact();
    let mut pairs = Vec::new();
    for e in want {
        p.seek(e.doc);
        let (freq, doc) = (p.freq(), e.doc);
        let norm = norms.map_or(0, |n| n[doc as usize]);
        let end = p.block_end(doc);
        assert!(end >= doc && end != TERMINATED, "{context}: block_end({doc}) = {end}");
        assert_eq!(p.doc(), doc, "{context}: block_end moved the list");
        let impact = p.impact(doc, end);
        assert!(
            freq <= impact.max_freq && norm >= impact.min_norm,
            "{context}: doc {doc} ({freq}, {norm}) outside {impact:?}"
        );
        assert!(
            freq <= max.max_freq && norm >= max.min_norm,
            "{context}: doc {doc} outside the list's {max:?}"
        );
        pairs.clear();
        p.impacts(doc, end, &mut pairs);
        assert!(
            pairs.iter().any(|&(f, n)| f >= freq && n <= norm),
            "{context}: doc {doc} ({freq}, {norm}) not under {pairs:?}"
        );
    }
}

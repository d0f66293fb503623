//! Merging: several on-disk segments rewritten as one, documents kept in
//! order (the first segment's documents first), so ties between equal scores
//! keep breaking the same way.

use fst::{IntoStreamer, Streamer};
use needle_codecs::{
    termmap, Postings, SegmentMeta, SegmentRead, SegmentReader, SegmentWriter, TermPostings,
};
use needle_core::{DocId, Result, TERMINATED};
use needle_storage::Directory;

/// Writes segment `name` holding the documents of `segments`, in order.
pub fn merge_segments(dir: &Directory, name: &str, segments: &[&SegmentReader]) -> Result<SegmentMeta> {
    let bases: Vec<DocId> = segments
        .iter()
        .scan(0, |acc, s| {
            let base = *acc;
            *acc += s.meta().max_doc;
            Some(base)
        })
        .collect();
    let max_doc: DocId = segments.iter().map(|s| s.meta().max_doc).sum();
    let mut writer = SegmentWriter::create(dir, name, max_doc)?;
    declare_fields(&mut writer, segments, max_doc);
    let mut union = fst::map::OpBuilder::new();
    for s in segments {
        union = union.add(s.term_map());
    }
    let mut stream = union.union().into_stream();
    let mut buf = MergedTerm::default();
    while let Some((key, sources)) = stream.next() {
        let (field, term) = termmap::split_key(key).expect("term map keys hold a field");
        let mut sources = sources.to_vec();
        sources.sort_by_key(|s| s.index);
        buf.clear();
        for src in sources {
            let mut postings = segments[src.index].postings_at(src.value)?;
            buf.append(&mut postings, bases[src.index]);
        }
        writer.add_term(field, term, &buf.as_postings())?;
    }
    let mut which = 0;
    writer.write_docs(&mut |doc| {
        while which + 1 < bases.len() && doc >= bases[which + 1] {
            which += 1;
        }
        while doc < bases[which] {
            which -= 1;
        }
        segments[which].stored(doc - bases[which])
    })?;
    Ok(writer.finish()?.0)
}

/// Declares every field any segment has, with norms concatenated in document order.
fn declare_fields(writer: &mut SegmentWriter, segments: &[&SegmentReader], max_doc: DocId) {
    let mut fields: Vec<_> = segments.iter().flat_map(|s| s.meta().fields.iter().cloned()).collect();
    fields.sort_by_key(|f| f.field);
    fields.dedup_by_key(|f| f.field);
    for f in fields {
        let has_norms = f.norms_index.is_some();
        let norms = has_norms.then(|| {
            let mut column = Vec::with_capacity(max_doc as usize);
            for s in segments {
                match s.norms(f.field) {
                    Some(n) => column.extend_from_slice(n),
                    None => column.resize(column.len() + s.meta().max_doc as usize, 0),
                }
            }
            column
        });
        let doc_count =
            segments.iter().filter_map(|s| s.meta().field(f.field)).map(|m| m.stats.doc_count).sum();
        writer.add_field(f.field, f.positions, f.offsets, norms, doc_count);
    }
}

#[derive(Default)]
struct MergedTerm {
    docs: Vec<DocId>,
    freqs: Vec<u32>,
    positions: Vec<u32>,
    offsets: Vec<(u32, u32)>,
    pos_scratch: Vec<u32>,
    off_scratch: Vec<(u32, u32)>,
}

impl MergedTerm {
    fn clear(&mut self) {
        self.docs.clear();
        self.freqs.clear();
        self.positions.clear();
        self.offsets.clear();
    }

    fn append(&mut self, postings: &mut dyn Postings, base: DocId) {
        let mut doc = postings.doc();
        while doc != TERMINATED {
            self.docs.push(base + doc);
            self.freqs.push(postings.freq());
            postings.positions(&mut self.pos_scratch);
            self.positions.extend_from_slice(&self.pos_scratch);
            postings.offsets(&mut self.off_scratch);
            self.offsets.extend_from_slice(&self.off_scratch);
            doc = postings.advance();
        }
    }

    fn as_postings(&self) -> TermPostings<'_> {
        TermPostings {
            docs: &self.docs,
            freqs: &self.freqs,
            positions: &self.positions,
            offsets: &self.offsets,
        }
    }
}

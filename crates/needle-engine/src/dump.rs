//! A text form of an index's terms and statistics, in the same TSV layout as
//! the Lucene harness's `TermStats` (bench/peers/lucene), so the two can be diffed.

use std::io::Write;

use fst::{IntoStreamer, Streamer};
use needle_codecs::postings::read_header;
use needle_codecs::{termmap, FieldStats, SegmentRead};
use needle_core::{Error, Result};

use crate::Index;

impl Index {
    /// Writes `#field name docCount sumTotalTermFreq sumDocFreq` lines, then
    /// `field term docFreq totalTermFreq` for every term (summed over segments),
    /// by field name then term bytes.
    pub fn dump_terms(&self, out: &mut dyn Write) -> Result<()> {
        let io = |e| Error::io("<output>", e);
        let segments = self.segment_readers();
        let schema = self.schema();
        let mut fields: Vec<(String, u16)> = (0..schema.fields.len() as u16)
            .filter(|&f| f != crate::schema::ID_FIELD)
            .map(|f| (schema.field(f).name.clone(), f))
            .collect();
        fields.sort();
        for (name, id) in &fields {
            let mut s = FieldStats::default();
            for seg in &segments {
                if let Some(m) = seg.meta().field(*id) {
                    s.add(&m.stats);
                }
            }
            if s.doc_count > 0 {
                writeln!(
                    out,
                    "#field\t{name}\t{}\t{}\t{}",
                    s.doc_count, s.sum_total_term_freq, s.sum_doc_freq
                )
                .map_err(io)?;
            }
        }
        let mut union = fst::map::OpBuilder::new();
        for seg in &segments {
            union = union.add(seg.term_map());
        }
        let mut rows: Vec<(String, Vec<u8>, u64, u64)> = Vec::new();
        let mut stream = union.union().into_stream();
        while let Some((key, sources)) = stream.next() {
            let (field, term) = termmap::split_key(key).expect("term map keys hold a field");
            if field == crate::schema::ID_FIELD {
                continue;
            }
            let (mut df, mut ttf) = (0, 0);
            for s in sources {
                let h = read_header(segments[s.index].postings_file(), termmap::unpack_entry(s.value).0)?;
                df += u64::from(h.doc_freq);
                ttf += h.total_term_freq;
            }
            rows.push((schema.field(field).name.clone(), term.to_vec(), df, ttf));
        }
        rows.sort();
        for (field, term, df, ttf) in rows {
            let t = String::from_utf8_lossy(&term)
                .replace('\\', "\\\\")
                .replace('\t', "\\t")
                .replace('\n', "\\n");
            writeln!(out, "{field}\t{t}\t{df}\t{ttf}").map_err(io)?;
        }
        Ok(())
    }
}

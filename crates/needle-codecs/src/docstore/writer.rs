//! Writes a document store (format: see the module above).

use needle_core::{Error, Result};

use super::index::DocIndex;
use super::{record, Frame, KIND, VERSION, ZSTD_MAGIC};
use crate::bytes::write_vint;
use crate::checksummed::ChecksummedWriter;
use crate::page::PackedWriter;

const LEVEL: i32 = 3;
const MAX_DICT: usize = 110 * 1024;
const MAX_SAMPLE_BYTES: usize = 2 << 20;
const MIN_SAMPLE_BYTES: usize = 32 * 1024;

/// Writes `count` records, fetched by `doc(i)` (called twice per document:
/// once to sample for the dictionary, once to compress). Returns the file's length and checksum.
pub fn write_doc_store(
    out: ChecksummedWriter,
    count: u32,
    doc: &mut dyn FnMut(u32) -> Result<Vec<u8>>,
) -> Result<crate::meta::FileStamp> {
    let dict = train_dictionary(count, doc)?;
    write_with_dictionaries(out, count, &[&dict], &mut |i| doc(i).map(StoredDoc::Record))
}

/// A document for [`write_with_dictionaries`]: its record, or its frame as
/// another store keeps it (copied, not recompressed), `Frame::dict` naming
/// one of the new store's dictionaries (the one it was compressed with).
pub enum StoredDoc {
    Record(Vec<u8>),
    Frame(Frame),
}

/// Writes `count` documents, fetched by `doc(i)` once each, compressed with `dict`.
pub fn write_with_dictionary(
    out: ChecksummedWriter,
    count: u32,
    dict: &[u8],
    doc: &mut dyn FnMut(u32) -> Result<StoredDoc>,
) -> Result<crate::meta::FileStamp> {
    write_with_dictionaries(out, count, &[dict], doc)
}

/// Writes `count` documents, fetched by `doc(i)` once each: records
/// compressed with `dicts[0]`, frames copied (a merge keeps the dictionaries
/// of its inputs' stores, so it copies their frames instead of recompressing them).
pub fn write_with_dictionaries(
    mut out: ChecksummedWriter,
    count: u32,
    dicts: &[&[u8]],
    doc: &mut dyn FnMut(u32) -> Result<StoredDoc>,
) -> Result<crate::meta::FileStamp> {
    let dicts: &[&[u8]] = if dicts.is_empty() { &[&[]] } else { dicts };
    let mut dict_ends = Vec::with_capacity(dicts.len() * 8);
    for dict in dicts {
        out.write(dict)?;
        dict_ends.extend_from_slice(&out.position().to_le_bytes());
    }
    let zstd = |e: std::io::Error| Error::Resources { what: format!("zstd: {e}") };
    let mut compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, dicts[0]).map_err(zstd)?;
    // The runs name each frame's dictionary: naming it in every frame would spend 4 bytes a document.
    compressor.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false)).map_err(zstd)?;
    let mut index = DocIndex::default();
    let mut runs = Runs::default();
    let mut frames = PackedWriter::new(out);
    let mut frame = Vec::new();
    for i in 0..count {
        let (raw_len, dict) = match doc(i)? {
            StoredDoc::Record(raw) => {
                let (head, source) = raw.split_at(record::head_len(&raw));
                frame.clear();
                write_vint(&mut frame, head.len() as u64);
                frame.extend_from_slice(head);
                let compressed = compressor.compress(source).map_err(zstd)?;
                // zstd's magic number is the same in every frame: 4 bytes a document.
                let magicless = compressed.strip_prefix(&ZSTD_MAGIC);
                frame.extend_from_slice(
                    magicless.ok_or_else(|| zstd(std::io::ErrorKind::InvalidData.into()))?,
                );
                (raw.len(), 0)
            }
            StoredDoc::Frame(copied) if copied.dict < dicts.len() => {
                frame = copied.bytes;
                (copied.raw_len, copied.dict)
            }
            StoredDoc::Frame(copied) => {
                let what =
                    format!("document {i}'s frame names dictionary {} of {}", copied.dict, dicts.len());
                return Err(Error::invalid(what));
            }
        };
        runs.add(i, dict as u32);
        let start = frames.place(&frame, frame.len() as u64)?;
        index.push("document store", (start, frame.len() as u32, raw_len as u32))?;
    }
    let mut out = frames.into_inner()?;
    let index_start = out.position();
    out.write(&index.encoded("document store")?)?;
    out.write(&runs.bytes)?;
    out.write(&dict_ends)?;
    let mut trailer = Vec::with_capacity(super::TRAILER_LEN);
    trailer.extend_from_slice(&runs.count().to_le_bytes());
    trailer.extend_from_slice(&(dicts.len() as u32).to_le_bytes());
    trailer.extend_from_slice(&index_start.to_le_bytes());
    trailer.extend_from_slice(&count.to_le_bytes());
    out.write(&trailer)?;
    out.finish(KIND, VERSION)
}

/// The runs of documents compressed with one dictionary, as stored.
#[derive(Default)]
struct Runs {
    bytes: Vec<u8>,
    last: Option<u32>,
}

impl Runs {
    fn add(&mut self, doc: u32, dict: u32) {
        if self.last != Some(dict) {
            self.bytes.extend_from_slice(&doc.to_le_bytes());
            self.bytes.extend_from_slice(&dict.to_le_bytes());
            self.last = Some(dict);
        }
    }

    fn count(&self) -> u32 {
        (self.bytes.len() / 8) as u32
    }
}

/// Trains a dictionary on an even sample of the sources (what it compresses);
/// empty when there is too little text.
fn train_dictionary(count: u32, doc: &mut dyn FnMut(u32) -> Result<Vec<u8>>) -> Result<Vec<u8>> {
    let mut samples = Vec::new();
    let mut total = 0usize;
    let mut probe = Vec::new();
    // Estimate the average size from a few documents to pick a sampling stride.
    for i in (0..count).step_by((count as usize / 16).max(1)) {
        probe.push(doc(i)?.len());
    }
    let avg = probe.iter().sum::<usize>() / probe.len().max(1);
    let stride = ((count as usize * avg.max(1)) / MAX_SAMPLE_BYTES).max(1);
    for i in (0..count).step_by(stride) {
        let mut d = doc(i)?;
        d.drain(..record::head_len(&d));
        total += d.len();
        samples.push(d);
        if total >= MAX_SAMPLE_BYTES {
            break;
        }
    }
    if total < MIN_SAMPLE_BYTES || samples.len() < 16 {
        return Ok(Vec::new());
    }
    let size = MAX_DICT.min(total / 8);
    Ok(train_fast_cover(&samples, size).unwrap_or_default())
}

/// Trains a dictionary of at most `size` bytes with fixed fastCover
/// parameters. zstd's default trainer tries eight parameter pairs and keeps
/// the best; on this engine's documents the pair fixed here compresses as
/// well (within 1%) in a tenth of the time, and training was most of the
/// cost of flushing a live index's segment.
fn train_fast_cover(samples: &[Vec<u8>], size: usize) -> Option<Vec<u8>> {
    use zstd_sys::{
        ZDICT_fastCover_params_t, ZDICT_isError, ZDICT_params_t, ZDICT_trainFromBuffer_fastCover,
    };
    let sizes: Vec<usize> = samples.iter().map(Vec::len).collect();
    let joined = samples.concat();
    let params = ZDICT_fastCover_params_t {
        k: 300,
        d: 8,
        f: 20,
        steps: 0,
        nbThreads: 1,
        splitPoint: 1.0,
        accel: 1,
        shrinkDict: 0,
        shrinkDictMaxRegression: 0,
        zParams: ZDICT_params_t { compressionLevel: LEVEL, notificationLevel: 0, dictID: 0 },
    };
    let mut dict = vec![0u8; size];
    // SAFETY: `dict` is writable for `size` bytes; `joined` holds exactly the
    // bytes `sizes` adds up to, and `sizes` has `sizes.len()` entries; the
    // call reads and writes only within those and keeps no pointer after it.
    let len = unsafe {
        ZDICT_trainFromBuffer_fastCover(
            dict.as_mut_ptr().cast(),
            dict.len(),
            joined.as_ptr().cast(),
            sizes.as_ptr(),
            u32::try_from(sizes.len()).ok()?,
            params,
        )
    };
    // SAFETY: ZDICT_isError only classifies the returned code.
    if unsafe { ZDICT_isError(len) } != 0 {
        return None;
    }
    dict.truncate(len);
    Some(dict)
}

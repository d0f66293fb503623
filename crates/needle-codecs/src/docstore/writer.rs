//! Writes a document store (format: see the module above).

use needle_core::{Error, Result};

use super::{record, Frame, KIND, VERSION};
use crate::bytes::write_vint;
use crate::checksummed::ChecksummedWriter;
use crate::page::aligned_start;

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
    write_with_dictionary(out, count, &dict, &mut |i| doc(i).map(StoredDoc::Record))
}

/// A document for [`write_with_dictionary`]: its record, or its frame as
/// another store with the same dictionary keeps it (copied, not recompressed).
pub enum StoredDoc {
    Record(Vec<u8>),
    Frame(Frame),
}

/// Writes `count` documents, fetched by `doc(i)` once each, compressed with
/// `dict` (a merge passes the dictionary of the store it copies frames from).
pub fn write_with_dictionary(
    mut out: ChecksummedWriter,
    count: u32,
    dict: &[u8],
    doc: &mut dyn FnMut(u32) -> Result<StoredDoc>,
) -> Result<crate::meta::FileStamp> {
    out.write(dict)?;
    let zstd = |e: std::io::Error| Error::Resources { what: format!("zstd: {e}") };
    let mut compressor = zstd::bulk::Compressor::with_dictionary(LEVEL, dict).map_err(zstd)?;
    // The store has one dictionary: naming it in every frame would spend 4 bytes a document.
    compressor.set_parameter(zstd::zstd_safe::CParameter::DictIdFlag(false)).map_err(zstd)?;
    let mut index = Vec::with_capacity(count as usize * super::INDEX_ENTRY_LEN);
    let mut frame = Vec::new();
    for i in 0..count {
        let raw_len = match doc(i)? {
            StoredDoc::Record(raw) => {
                let (head, source) = raw.split_at(record::head_len(&raw));
                frame.clear();
                write_vint(&mut frame, head.len() as u64);
                frame.extend_from_slice(head);
                frame.extend_from_slice(&compressor.compress(source).map_err(zstd)?);
                raw.len()
            }
            StoredDoc::Frame(copied) => {
                frame = copied.bytes;
                copied.raw_len
            }
        };
        let start = aligned_start(out.position(), frame.len() as u64);
        out.write(&vec![0; (start - out.position()) as usize])?;
        out.write(&frame)?;
        index.extend_from_slice(&start.to_le_bytes());
        index.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        index.extend_from_slice(&(raw_len as u32).to_le_bytes());
    }
    let index_start = out.position();
    out.write(&index)?;
    let mut trailer = Vec::with_capacity(super::TRAILER_LEN);
    trailer.extend_from_slice(&(dict.len() as u64).to_le_bytes());
    trailer.extend_from_slice(&index_start.to_le_bytes());
    trailer.extend_from_slice(&count.to_le_bytes());
    out.write(&trailer)?;
    out.finish(KIND, VERSION)
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

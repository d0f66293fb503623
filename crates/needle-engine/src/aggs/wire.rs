//! What aggregations gathered over one index, as bytes another process
//! merges ([`Gathered::to_wire`], [`Gathered::from_wire`]): a cluster's
//! shards each gather, one node merges and answers. Read back against the
//! same aggregations, which say what each state must be, so bytes of other
//! aggregations, or damaged ones, are an error and never a wrong answer.
//!
//! Layout, version 1 (integers little-endian):
//! ```text
//! "NGAW" | version u8 = 1 | total u64 | state per aggregation | crc32 (of all before) u32
//! state   = tag u8, then by tag:
//!   0 metric    count u64 | sum f64 | min f64 | max f64
//!   1 keyed     n u32 | n x (key i64 | bucket)            histograms, terms of numbers
//!   2 named     n u32 | n x (len u32 | bytes | bucket)    terms of keywords
//!   3 ranges    n u32 | n x bucket                        range, filters
//!   4 distinct  threshold u32 | n u32 | n x hash u64 | has registers u8 | [registers, 2^14 bytes]
//! bucket  = count u64 | state per sub-aggregation
//! ```
//! `top_hits` is not carried: its hits are documents of one index.

use std::collections::BTreeMap;
use std::sync::Arc;

use needle_core::{Error, Result};

use super::dense::Sums;
use super::keyed::KeyedBuckets;
use super::{fresh, Aggregation, Bucket, Gathered, State};
use crate::distinct::Distinct;

const MAGIC: &[u8; 4] = b"NGAW";
const VERSION: u8 = 1;

impl Gathered {
    /// These states as bytes; an error for a `top_hits`.
    pub fn to_wire(&self) -> Result<Vec<u8>> {
        let mut out = MAGIC.to_vec();
        out.push(VERSION);
        out.extend_from_slice(&self.total.to_le_bytes());
        for state in &self.states {
            put_state(&mut out, state)?;
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        Ok(out)
    }

    /// What [`Gathered::to_wire`] wrote for `aggs`, read back.
    pub fn from_wire(bytes: &[u8], aggs: &[Aggregation]) -> Result<Gathered> {
        let bad = |what: &str| Error::invalid(format!("gathered aggregations: {what}"));
        let (body, crc) =
            bytes.split_at_checked(bytes.len().wrapping_sub(4)).ok_or_else(|| bad("too short"))?;
        if crc32fast::hash(body).to_le_bytes() != crc {
            return Err(bad("checksum mismatch"));
        }
        let mut r = Reader { bytes: body, at: 0 };
        if r.take(4)? != MAGIC || r.u8()? != VERSION {
            return Err(bad("not of this format or version"));
        }
        let total = r.u64()?;
        let states = aggs.iter().map(|agg| state(&mut r, agg)).collect::<Result<Vec<_>>>()?;
        if r.at != body.len() {
            return Err(bad("bytes left over: not gathered for these aggregations"));
        }
        Ok(Gathered { total, states })
    }
}

fn put_state(out: &mut Vec<u8>, state: &State) -> Result<()> {
    match state {
        State::Metric(s) => {
            out.push(0);
            out.extend_from_slice(&s.count.to_le_bytes());
            [s.sum, s.min, s.max].iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
        }
        State::Keyed(buckets) => {
            out.push(1);
            put_len(out, buckets.len());
            for (key, bucket) in buckets.keys().zip(buckets.buckets()) {
                out.extend_from_slice(&key.to_le_bytes());
                put_bucket(out, bucket)?;
            }
        }
        State::Named { done, .. } => {
            out.push(2);
            put_len(out, done.len());
            for (key, bucket) in done {
                put_len(out, key.len());
                out.extend_from_slice(key);
                put_bucket(out, bucket)?;
            }
        }
        State::Ranges(buckets) => {
            out.push(3);
            put_len(out, buckets.len());
            for bucket in buckets {
                put_bucket(out, bucket)?;
            }
        }
        State::Distinct { seen, .. } => {
            out.push(4);
            let (threshold, exact, registers) = seen.parts();
            put_len(out, threshold);
            put_len(out, exact.len());
            exact.iter().for_each(|h| out.extend_from_slice(&h.to_le_bytes()));
            out.push(u8::from(registers.is_some()));
            out.extend_from_slice(registers.unwrap_or_default());
        }
        State::Top { .. } => {
            return Err(Error::invalid("[top_hits] over several shards is not supported yet by Needle"))
        }
    }
    Ok(())
}

fn put_bucket(out: &mut Vec<u8>, bucket: &Bucket) -> Result<()> {
    out.extend_from_slice(&bucket.count.to_le_bytes());
    bucket.subs.iter().try_for_each(|s| put_state(out, s))
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

/// The state of `agg`, which must be of the kind `agg` gathers.
fn state(r: &mut Reader, agg: &Aggregation) -> Result<State> {
    let expected = match fresh(agg) {
        State::Metric(_) => 0,
        State::Keyed(_) => 1,
        State::Named { .. } => 2,
        State::Ranges(ref buckets) => {
            let n = buckets.len();
            return match r.u8()? {
                3 if r.len()? == n => {
                    Ok(State::Ranges((0..n).map(|_| bucket(r, agg)).collect::<Result<_>>()?))
                }
                _ => Err(r.mismatch(agg)),
            };
        }
        State::Distinct { .. } => 4,
        State::Top { .. } => return Err(r.mismatch(agg)),
    };
    if r.u8()? != expected {
        return Err(r.mismatch(agg));
    }
    Ok(match expected {
        0 => State::Metric(Sums { count: r.u64()?, sum: r.f64()?, min: r.f64()?, max: r.f64()? }),
        1 => {
            let mut buckets = KeyedBuckets::default();
            for _ in 0..r.len()? {
                let key = r.u64()? as i64;
                let bucket = bucket(r, agg)?;
                buckets.add_all(std::iter::once((key, bucket)));
            }
            State::Keyed(buckets)
        }
        2 => {
            let mut done = BTreeMap::new();
            for _ in 0..r.len()? {
                let len = r.len()?;
                let key: Arc<[u8]> = r.take(len)?.into();
                done.insert(key, bucket(r, agg)?);
            }
            State::Named { done, by_id: Vec::new(), tally: Default::default() }
        }
        _ => {
            let threshold = r.len()?;
            // Inserted one by one: a damaged count must not reserve memory for it.
            let mut exact = rustc_hash::FxHashSet::default();
            for _ in 0..r.len()? {
                exact.insert(r.u64()?);
            }
            let registers = match r.u8()? {
                0 => None,
                _ => Some(r.take(crate::distinct::REGISTERS)?.into()),
            };
            State::Distinct {
                seen: Distinct::from_parts(threshold, exact, registers),
                ids: Default::default(),
            }
        }
    })
}

fn bucket(r: &mut Reader, agg: &Aggregation) -> Result<Bucket> {
    let count = r.u64()?;
    let subs = agg.subs.iter().map(|sub| state(r, sub)).collect::<Result<_>>()?;
    Ok(Bucket { count, subs })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| Error::invalid("gathered aggregations: truncated"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    fn len(&mut self) -> Result<usize> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")) as usize)
    }

    fn mismatch(&self, agg: &Aggregation) -> Error {
        Error::invalid(format!("gathered aggregations: [{}] was not gathered as this request asks", agg.name))
    }
}

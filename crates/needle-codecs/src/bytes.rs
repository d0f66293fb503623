//! Variable-length integers (LEB128: 7 bits a byte, low bits first, high bit
//! set on every byte but the last; 300 = `AC 02`) and a bounds-checked reader.

use needle_core::{Error, Result};

#[inline]
pub fn write_vint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a vint at `*pos` without failing: bytes past the end read as zero.
/// Used on data whose file checksum has already been verified.
#[inline]
pub fn read_vint_lenient(bytes: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes.get(*pos).copied().unwrap_or(0);
        *pos += 1;
        v |= u64::from(b & 0x7F) << (shift & 63);
        if b < 0x80 || shift >= 63 {
            return v;
        }
        shift += 7;
    }
}

/// A cursor over a byte slice whose every read checks bounds and names the file on failure.
pub struct ByteReader<'a> {
    file: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Where `bytes` starts in the file, for error messages.
    base: u64,
}

impl<'a> ByteReader<'a> {
    pub fn new(file: &'a str, bytes: &'a [u8]) -> Self {
        ByteReader { file, bytes, pos: 0, base: 0 }
    }

    /// A reader of `bytes`, which start at byte `base` of `file`.
    pub fn at(file: &'a str, bytes: &'a [u8], base: u64) -> Self {
        ByteReader { file, bytes, pos: 0, base }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    pub fn corrupt(&self, what: &str) -> Error {
        Error::corrupt_at(self.file, self.base + self.pos as u64, what)
    }

    pub fn vint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.corrupt("truncated variable-length integer"));
            };
            self.pos += 1;
            v |= u64::from(b & 0x7F) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.corrupt("variable-length integer longer than 64 bits"))
    }

    pub fn vint_u32(&mut self) -> Result<u32> {
        let v = self.vint()?;
        u32::try_from(v).map_err(|_| self.corrupt("integer out of range"))
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }

    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.corrupt(&format!("needs {n} bytes, {} left", self.remaining())));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn vints_round_trip(values in proptest::collection::vec(any::<u64>(), 0..50)) {
            let mut buf = Vec::new();
            for &v in &values { write_vint(&mut buf, v); }
            let mut r = ByteReader::new("t", &buf);
            let mut pos = 0;
            for &v in &values {
                prop_assert_eq!(r.vint().unwrap(), v);
                prop_assert_eq!(read_vint_lenient(&buf, &mut pos), v);
            }
            prop_assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn example_from_the_docs() {
        let mut buf = Vec::new();
        write_vint(&mut buf, 300);
        assert_eq!(buf, [0xAC, 0x02]);
    }

    #[test]
    fn truncated_vint_is_an_error() {
        assert!(ByteReader::new("t", &[0x80]).vint().is_err());
    }
}

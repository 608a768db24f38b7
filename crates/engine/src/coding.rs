//! Little-endian fixed-width and varint encodings shared by every on-disk format.
//!
//! Decoders never panic: they return `None` on short or malformed input, and the caller turns
//! that into `Error::Corruption` with its file and offset.

/// Appends `v` as 4 little-endian bytes.
#[inline]
pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as 8 little-endian bytes.
#[inline]
pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads 4 little-endian bytes at the start of `src`.
#[inline]
pub fn decode_fixed32(src: &[u8]) -> Option<u32> {
    let b: [u8; 4] = src.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// Reads 8 little-endian bytes at the start of `src`.
#[inline]
pub fn decode_fixed64(src: &[u8]) -> Option<u64> {
    let b: [u8; 8] = src.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

/// Appends `v` as a LEB128 varint (1–5 bytes).
#[inline]
pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, u64::from(v))
}

/// Writes `v` as a LEB128 varint (1–5 bytes, as [`put_varint32`]) at the start of `dst`;
/// returns how many bytes it wrote. Never writes past `dst`: callers size it with
/// [`varint_len`] (a shorter `dst` gets the varint's first `dst.len()` bytes).
#[inline]
pub fn encode_varint32(dst: &mut [u8], mut v: u32) -> usize {
    let mut i = 0;
    while let Some(b) = dst.get_mut(i) {
        if v < 0x80 {
            *b = v as u8;
            return i + 1;
        }
        *b = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    i
}

/// Appends `v` as a LEB128 varint (1–10 bytes).
#[inline]
pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Number of bytes `put_varint64(v)` writes.
#[inline]
pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Decodes a varint32 from the start of `src`: `(value, bytes used)`.
#[inline]
pub fn get_varint32(src: &[u8]) -> Option<(u32, usize)> {
    // Fast path: one byte.
    if let Some(&b) = src.first() {
        if b < 0x80 {
            return Some((u32::from(b), 1));
        }
    }
    let (v, n) = get_varint64(src)?;
    if n > 5 || v > u64::from(u32::MAX) {
        return None;
    }
    Some((v as u32, n))
}

/// Decodes a varint64 from the start of `src`: `(value, bytes used)`.
#[inline]
pub fn get_varint64(src: &[u8]) -> Option<(u64, usize)> {
    let mut result: u64 = 0;
    for (i, &b) in src.iter().enumerate().take(10) {
        let shift = 7 * i as u32;
        if i == 9 && b > 1 {
            return None;
        }
        result |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some((result, i + 1));
        }
    }
    None
}

/// Appends a varint32 length followed by the bytes.
#[inline]
pub fn put_length_prefixed(dst: &mut Vec<u8>, s: &[u8]) {
    put_varint32(dst, s.len() as u32);
    dst.extend_from_slice(s);
}

/// Decodes a length-prefixed slice: `(slice, bytes used)`.
#[inline]
pub fn get_length_prefixed(src: &[u8]) -> Option<(&[u8], usize)> {
    let (len, n) = get_varint32(src)?;
    let end = n.checked_add(len as usize)?;
    Some((src.get(n..end)?, end))
}

/// A cursor over a byte slice for decoding records; every getter returns `None` past the end.
#[derive(Debug, Clone, Copy)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// Starts decoding at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }
    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }
    /// True when every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }
    /// The bytes not yet consumed.
    pub fn remaining(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }
    /// Reads one byte.
    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }
    /// Reads a fixed32.
    pub fn fixed32(&mut self) -> Option<u32> {
        let v = decode_fixed32(self.remaining())?;
        self.pos += 4;
        Some(v)
    }
    /// Reads a fixed64.
    pub fn fixed64(&mut self) -> Option<u64> {
        let v = decode_fixed64(self.remaining())?;
        self.pos += 8;
        Some(v)
    }
    /// Reads a varint32.
    pub fn varint32(&mut self) -> Option<u32> {
        let (v, n) = get_varint32(self.remaining())?;
        self.pos += n;
        Some(v)
    }
    /// Reads a varint64.
    pub fn varint64(&mut self) -> Option<u64> {
        let (v, n) = get_varint64(self.remaining())?;
        self.pos += n;
        Some(v)
    }
    /// Reads a length-prefixed slice.
    pub fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let (s, n) = get_length_prefixed(self.remaining())?;
        self.pos += n;
        Some(s)
    }
    /// Reads exactly `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
}

const MASK_DELTA: u32 = 0xa282_ead8;

/// LevelDB's checksum mask, used by every stored crc32c (WAL and MANIFEST records, SST footers
/// and crc32c block trailers): storing the CRC of data that itself contains CRCs is weak, so the
/// stored value is rotated and offset.
#[inline]
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask_crc`].
#[inline]
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

#[cfg(test)]
mod tests {
    #[test]
    #[allow(clippy::manual_rotate)] // written as LevelDB does, on purpose
    fn mask_matches_leveldb() {
        let crc = 0x1234_5678u32;
        assert_eq!(super::mask_crc(crc), ((crc >> 15) | (crc << 17)).wrapping_add(0xa282ead8));
    }

    use super::*;

    #[test]
    fn varint_round_trip() {
        let values = [0u64, 1, 127, 128, 255, 300, 16383, 16384, u32::MAX as u64, u64::MAX];
        for &v in &values {
            let mut buf = Vec::new();
            put_varint64(&mut buf, v);
            assert_eq!(buf.len(), varint_len(v));
            assert_eq!(get_varint64(&buf), Some((v, buf.len())));
        }
    }

    #[test]
    fn encode_varint32_writes_what_put_varint32_appends() {
        for v in [0u32, 1, 127, 128, 300, 16383, 16384, 1 << 21, 1 << 28, u32::MAX] {
            let mut want = Vec::new();
            put_varint32(&mut want, v);
            let mut got = [0xAAu8; 5];
            let n = encode_varint32(&mut got, v);
            assert_eq!(&got[..n], &want[..], "{v}");
        }
    }

    #[test]
    fn varint_truncated_and_overlong_are_rejected() {
        assert_eq!(get_varint64(&[0x80, 0x80]), None);
        assert_eq!(get_varint64(&[0xff; 11]), None);
        assert_eq!(get_varint32(&[0xff, 0xff, 0xff, 0xff, 0x7f]), None);
    }

    #[test]
    fn decoder_reads_in_order_and_stops_at_end() {
        let mut buf = Vec::new();
        put_fixed32(&mut buf, 7);
        put_length_prefixed(&mut buf, b"abc");
        put_fixed64(&mut buf, 9);
        let mut d = Decoder::new(&buf);
        assert_eq!(d.fixed32(), Some(7));
        assert_eq!(d.length_prefixed(), Some(&b"abc"[..]));
        assert_eq!(d.fixed64(), Some(9));
        assert!(d.is_empty());
        assert_eq!(d.u8(), None);
    }
}

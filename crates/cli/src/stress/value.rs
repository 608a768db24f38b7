//! Keys and self-checking values of `talus stress`.
//!
//! Key `k` (an id in `0..max_key`) is its 8-byte big-endian form, so byte order is id order.
//! The value written by version `v` of key `k` is
//! `k (u64 LE) ++ v (u32 LE) ++ filler`, where the filler's length (`0..=max_filler`) and bytes
//! come from a hash of `(k, v)`: a value read back names the version it is, and any damaged byte
//! is caught by [`check_value`]. Half of the filler repeats, so compression has work to do.

/// Bytes of the value before the filler.
const PREFIX: usize = 12;

/// The database key of id `k`.
pub fn key_bytes(k: u64) -> [u8; 8] {
    k.to_be_bytes()
}

/// The id of a database key, if it has the form [`key_bytes`] makes.
pub fn key_id(key: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(key.try_into().ok()?))
}

/// splitmix64: a fast, well-mixed 64-bit hash step.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The filler's bytes, one at a time (no allocation).
fn filler(k: u64, v: u32, max_filler: usize) -> impl Iterator<Item = u8> {
    let seed = mix(k ^ mix(u64::from(v)));
    let len = (seed % (max_filler as u64 + 1)) as usize;
    let half = len / 2;
    (0..len).map(move |i| {
        // The second half repeats the first: compressible, but still position-checked.
        let j = if i < half { i } else { i - half };
        (mix(seed ^ (j as u64 / 8)) >> ((j % 8) * 8)) as u8
    })
}

/// Writes the value of version `v` of key `k` into `out` (cleared first).
pub fn make_value(k: u64, v: u32, max_filler: usize, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&k.to_le_bytes());
    out.extend_from_slice(&v.to_le_bytes());
    out.extend(filler(k, v, max_filler));
}

/// The version that `value` (read for key `k`) encodes, or why it is not a value `make_value`
/// could have written for `k`.
pub fn check_value(k: u64, value: &[u8], max_filler: usize) -> Result<u32, String> {
    let (Some(kb), Some(vb)) = (value.get(..8), value.get(8..PREFIX)) else {
        return Err(format!("value of {} bytes is too short", value.len()));
    };
    let owner = u64::from_le_bytes(kb.try_into().unwrap_or([0; 8]));
    let v = u32::from_le_bytes(vb.try_into().unwrap_or([0; 4]));
    if owner != k {
        return Err(format!("value belongs to key {owner} (version {v})"));
    }
    let body = value.get(PREFIX..).unwrap_or(&[]);
    let mut want = filler(k, v, max_filler);
    for (i, &b) in body.iter().enumerate() {
        match want.next() {
            Some(w) if w == b => {}
            Some(w) => {
                return Err(format!("version {v}: filler byte {i} is {b:#04x}, expected {w:#04x}"))
            }
            None => return Err(format!("version {v}: value is longer than it should be")),
        }
    }
    if want.next().is_some() {
        return Err(format!("version {v}: value is shorter than it should be"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_order() {
        let mut buf = Vec::new();
        for k in [0u64, 1, 255, 256, 1 << 40] {
            for v in [0u32, 1, 2, 1000, u32::MAX] {
                make_value(k, v, 100, &mut buf);
                assert!(buf.len() >= PREFIX && buf.len() <= PREFIX + 100);
                assert_eq!(check_value(k, &buf, 100), Ok(v));
            }
            assert_eq!(key_id(&key_bytes(k)), Some(k));
        }
        assert!(key_bytes(255) < key_bytes(256));
        assert_eq!(key_id(b"short"), None);
    }

    #[test]
    fn every_damage_is_caught() {
        let mut buf = Vec::new();
        // Pick a version whose filler is long enough to damage inside.
        let v = (1..100).find(|&v| filler(42, v, 64).count() > 10).unwrap();
        make_value(42, v, 64, &mut buf);
        for i in 0..buf.len() {
            for bit in 0..8 {
                let mut bad = buf.clone();
                bad[i] ^= 1 << bit;
                // A flipped version byte could name another version whose value this is not.
                assert_ne!(check_value(42, &bad, 64), Ok(v), "flip {i}:{bit} missed");
            }
        }
        assert!(check_value(43, &buf, 64).unwrap_err().contains("belongs to key 42"));
        assert!(check_value(42, &buf[..buf.len() - 1], 64).is_err());
        let mut long = buf.clone();
        long.push(0);
        assert!(check_value(42, &long, 64).is_err());
        assert!(check_value(42, &buf[..5], 64).unwrap_err().contains("too short"));
    }
}

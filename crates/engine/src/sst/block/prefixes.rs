//! [`RestartPrefixes`]: a compact search array beside a held index block, so that a bytewise
//! seek of its restart keys reads a dense array of `u64`s instead of one restart point and one
//! entry per binary-search step.
//!
//! A table's index block has one restart point per entry (interval 1) and one entry per data
//! block: thousands of entries, hundreds of KiB. A binary search over it touches two cache lines
//! per step (the restart array, then the entry it points at), most of them cold: in a value-400
//! `readrandom` this search was 14% of the samples. The array built here holds, for each restart
//! key, the 8 bytes after the prefix that every restart key shares, read as a big-endian number
//! (short keys padded with zeros): 8 bytes per data block, about 1/500 of the data it indexes.
//! Searching it finds the restart points whose keys are certainly below or above a target; only
//! keys whose 8 bytes equal the target's are compared in full.
//!
//! Why this is exact: every restart key starts with `common`; for two byte strings that share a
//! prefix, if their zero-padded next 8 bytes differ, the bytewise order of the strings is the
//! order of those numbers (at the first differing byte either both strings have a byte, or the
//! shorter one ends there and is the smaller, its padding byte 0 being below the other's
//! byte or equal to it, which is not a difference). Equal numbers decide nothing, and those
//! keys are compared in full. Built only when every key starts with `common` and the numbers
//! do not decrease (a block out of order gets no array and is searched as before).
//!
//! Who builds it: `TableReader::open`, for an index it keys by user keys (bytewise order).
//! Who reads it: `Block::restart_lower_bound_bytewise`. Immutable once built; no locks.

/// The search array of one block's restart keys.
#[derive(Debug)]
pub(crate) struct RestartPrefixes {
    /// The prefix every restart key starts with.
    common: Box<[u8]>,
    /// For restart point `i`: the 8 bytes of its key after `common`, big-endian, zero-padded.
    keys: Box<[u64]>,
    /// `keys[j * WINDOW]` for each `j`: searched first (a few KiB, kept warm by every seek),
    /// it names the window of `keys` to search, whose lines are then loaded together.
    sample: Box<[u64]>,
}

/// Entries of `keys` per `sample` entry: 512 bytes, eight cache lines.
const WINDOW: usize = 64;

/// The longest run of equal numbers walked one by one before a binary search takes over.
const EQUAL_WALK: usize = 8;

/// The 8 bytes of `s` after `skip`, big-endian, zero-padded.
#[inline]
fn number_after(s: &[u8], skip: usize) -> u64 {
    let rest = s.get(skip..).unwrap_or(&[]);
    match rest.first_chunk::<8>() {
        Some(b) => u64::from_be_bytes(*b),
        None => {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            u64::from_be_bytes(b)
        }
    }
}

impl RestartPrefixes {
    /// The array for restart keys `keys` (in order), or `None` if they do not all start with
    /// the prefix of the first and the last, or their numbers decrease.
    pub(crate) fn build(keys: &[&[u8]]) -> Option<Self> {
        let (first, last) = (*keys.first()?, *keys.last()?);
        let common_len = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let common: Box<[u8]> = first[..common_len].into();
        let mut out = Vec::with_capacity(keys.len());
        let mut prev = 0u64;
        for k in keys {
            if !k.starts_with(&common) {
                return None;
            }
            let v = number_after(k, common_len);
            if v < prev {
                return None;
            }
            prev = v;
            out.push(v);
        }
        let sample = out.iter().step_by(WINDOW).copied().collect();
        Some(RestartPrefixes { common, keys: out.into_boxed_slice(), sample })
    }

    /// Bytes of memory the array takes.
    pub(crate) fn memory(&self) -> usize {
        std::mem::size_of::<Self>() + self.common.len() + (self.keys.len() + self.sample.len()) * 8
    }

    /// Where `target` falls among the restart keys, as far as the prefixes tell: `(lo, hi)`
    /// such that every restart key before `lo` is below `target` (bytewise) and every one from
    /// `hi` on is above it; the keys in `lo..hi` must be compared in full.
    #[inline]
    pub(crate) fn narrow(&self, target: &[u8]) -> (usize, usize) {
        let n = self.keys.len();
        let c = self.common.len();
        let head = &target[..c.min(target.len())];
        match head.cmp(&self.common[..head.len()]) {
            // Smaller than `common` (or a proper prefix of it): below every key.
            std::cmp::Ordering::Less => return (0, 0),
            std::cmp::Ordering::Equal if target.len() < c => {
                return (0, 0);
            }
            std::cmp::Ordering::Greater => return (n, n),
            std::cmp::Ordering::Equal => {}
        }
        let t = number_after(target, c);
        // sample[j - 1] < t <= sample[j]: the first number >= t is in keys[(j-1)*W+1 ..= j*W].
        let j = self.sample.partition_point(|&k| k < t);
        let start = j.saturating_sub(1) * WINDOW;
        let end = (j * WINDOW).min(n);
        let window = self.keys.get(start..end).unwrap_or(&[]);
        // Start every line's load before the search needs the first.
        crate::prefetch::prefetch_slice(window);
        let lo = start + window.partition_point(|&k| k < t);
        // Usually no key, or one, has the target's number.
        let mut hi = lo;
        while hi < n && hi - lo < EQUAL_WALK && self.keys[hi] == t {
            hi += 1;
        }
        if hi - lo == EQUAL_WALK {
            hi += self.keys[hi..].partition_point(|&k| k == t);
        }
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower_bound(keys: &[&[u8]], target: &[u8]) -> usize {
        keys.partition_point(|k| *k < target)
    }

    /// The prefixes' answer narrowed to the exact lower bound, as the block does it.
    fn via_prefixes(p: &RestartPrefixes, keys: &[&[u8]], target: &[u8]) -> usize {
        let (lo, hi) = p.narrow(target);
        lo + keys[lo..hi].partition_point(|k| *k < target)
    }

    #[test]
    fn the_lower_bound_matches_a_plain_search() {
        let mut keys: Vec<Vec<u8>> = Vec::new();
        // Shared prefix, numbers, short keys, keys equal in their 8 bytes, long tails.
        for i in 0u64..300 {
            let mut k = b"user:".to_vec();
            k.extend_from_slice(&(i * 7).to_be_bytes());
            if i % 5 == 0 {
                k.extend_from_slice(b"tail");
            }
            keys.push(k);
        }
        keys.push(b"user:\xff\xff".to_vec());
        keys.push(b"user:\xff\xff\xff\xff\xff\xff\xff\xff\xff".to_vec());
        keys.sort();
        keys.dedup();
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let p = RestartPrefixes::build(&refs).unwrap();
        assert_eq!(&*p.common, b"user:");
        let mut targets: Vec<Vec<u8>> = keys.clone();
        for k in &keys {
            let mut a = k.clone();
            a.push(0);
            targets.push(a);
            let mut b = k.clone();
            b.pop();
            targets.push(b);
            let mut c = k.clone();
            if let Some(l) = c.last_mut() {
                *l = l.wrapping_add(1);
            }
            targets.push(c);
        }
        targets.extend([b"".to_vec(), b"user".to_vec(), b"usera".to_vec(), b"v".to_vec()]);
        targets.push(b"user:\0".to_vec());
        for t in &targets {
            assert_eq!(via_prefixes(&p, &refs, t), lower_bound(&refs, t), "target {t:?}");
        }
    }

    #[test]
    fn long_runs_of_equal_numbers_and_many_windows() {
        // 1000 keys in runs of 1..=40 that share their first 8 bytes after the prefix.
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut group = 0u64;
        while keys.len() < 1000 {
            for i in 0..(group % 40 + 1) {
                let mut k = b"p".to_vec();
                k.extend_from_slice(&((group * 3) << 56).to_be_bytes());
                k.extend_from_slice(&(i as u16).to_be_bytes());
                keys.push(k);
            }
            group += 1;
        }
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let p = RestartPrefixes::build(&refs).unwrap();
        assert_eq!(&*p.common, b"p", "the numbers hold the group");
        for g in 0..group + 1 {
            for t in [g * 3, g * 3 + 1] {
                for suffix in [&[][..], &[0u8][..], &[0, 7][..], &[0xff, 0xff, 0][..]] {
                    let mut k = b"p".to_vec();
                    k.extend_from_slice(&(t << 56).to_be_bytes());
                    k.extend_from_slice(suffix);
                    assert_eq!(via_prefixes(&p, &refs, &k), lower_bound(&refs, &k), "{k:?}");
                }
            }
        }
    }

    #[test]
    fn keys_shorter_than_eight_bytes_after_the_prefix() {
        let keys: Vec<&[u8]> = vec![b"a", b"a\0", b"a\0\0", b"ab", b"abc", b"b"];
        let p = RestartPrefixes::build(&keys).unwrap();
        assert!(p.common.is_empty());
        for t in [&b""[..], b"a", b"a\0", b"a\0\0\0", b"aa", b"ab", b"ab\0", b"abd", b"b", b"c"] {
            assert_eq!(via_prefixes(&p, &keys, t), lower_bound(&keys, t), "target {t:?}");
        }
    }

    #[test]
    fn keys_out_of_order_or_off_the_prefix_get_no_array() {
        let unordered: Vec<&[u8]> = vec![b"k2", b"k1", b"k3"];
        assert!(RestartPrefixes::build(&unordered).is_none());
        let off: Vec<&[u8]> = vec![b"ka", b"j", b"kb"];
        assert!(RestartPrefixes::build(&off).is_none());
        let none: Vec<&[u8]> = vec![];
        assert!(RestartPrefixes::build(&none).is_none());
    }
}

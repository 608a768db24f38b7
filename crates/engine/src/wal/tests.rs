//! Tests for the log writer and reader: round trips, golden bytes, bit flips, truncations and
//! hand-built bad sequences.

use std::sync::{Arc, Mutex};

use rand::{Rng, SeedableRng};

use super::*;
use crate::error::Result;
use crate::fs::{SequentialFile, WritableFile};

/// An in-memory file whose bytes stay readable after the writer is gone.
#[derive(Clone, Default)]
struct MemFile {
    data: Arc<Mutex<Vec<u8>>>,
    fail_appends: bool,
}

impl WritableFile for MemFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.fail_appends {
            return Err(crate::error::Error::io("appending", std::io::Error::other("disk full")));
        }
        self.data.lock().unwrap().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn size(&self) -> u64 {
        self.data.lock().unwrap().len() as u64
    }
}

/// Reads a byte vector in short, irregular chunks (as a real `read` may).
struct ChunkedReader {
    data: Vec<u8>,
    pos: usize,
    step: usize,
}

impl SequentialFile for ChunkedReader {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.step = self.step % 9000 + 4099;
        let n = buf.len().min(self.step).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn reader_over(data: Vec<u8>) -> LogReader {
    LogReader::new(Box::new(ChunkedReader { data, pos: 0, step: 0 }), "test.log".into())
}

/// Writes `records`; returns the file bytes and each record's (start offset, end offset).
fn write_log(records: &[Vec<u8>]) -> (Vec<u8>, Vec<(u64, u64)>) {
    let file = MemFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()));
    let mut spans = Vec::new();
    for r in records {
        let before = w.file_size();
        let left = BLOCK_SIZE as u64 - before % BLOCK_SIZE as u64;
        let start = if left < HEADER_SIZE as u64 { before + left } else { before };
        w.add_record(r).unwrap();
        spans.push((start, w.file_size()));
    }
    w.sync().unwrap();
    let data = file.data.lock().unwrap().clone();
    (data, spans)
}

/// Every outcome until Eof (bounded, so a reader that loops forever fails the test).
fn read_all(data: Vec<u8>) -> Vec<ReadOutcome> {
    drain(reader_over(data))
}

/// As [`read_all`], with a WAL's reader ([`LogReader::new_wal`]).
fn read_all_wal(data: Vec<u8>) -> Vec<ReadOutcome> {
    drain(LogReader::new_wal(Box::new(ChunkedReader { data, pos: 0, step: 0 }), "w.log".into()))
}

fn drain(mut r: LogReader) -> Vec<ReadOutcome> {
    let mut out = Vec::new();
    for _ in 0..100_000 {
        match r.read_record().unwrap() {
            ReadOutcome::Eof => return out,
            o => out.push(o),
        }
    }
    panic!("reader did not reach Eof");
}

fn record(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn records_of(outcomes: &[ReadOutcome]) -> Vec<(Vec<u8>, u64)> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            ReadOutcome::Record(p, off) => Some((p.clone(), *off)),
            _ => None,
        })
        .collect()
}

#[test]
fn round_trip_random_sizes_and_block_edges() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let payload = BLOCK_SIZE - HEADER_SIZE;
    let mut records: Vec<Vec<u8>> = vec![
        vec![],
        record(payload, 1),        // exactly fills a block
        record(payload - 6, 2),    // leaves a 6-byte trailer
        record(payload - 7, 3),    // leaves exactly room for an empty fragment header
        vec![],                    // ...which this one takes
        record(3 * BLOCK_SIZE, 4), // FIRST, MIDDLE, MIDDLE, LAST
        record(2 * payload, 5),    // FIRST and LAST filling two blocks
    ];
    for i in 0..300 {
        let len = match rng.gen_range(0..10) {
            0 => rng.gen_range(0..3 * BLOCK_SIZE),
            1..=3 => rng.gen_range(0..1000),
            _ => rng.gen_range(0..100),
        };
        records.push(record(len, i as u8));
    }
    let (data, spans) = write_log(&records);
    let outcomes = read_all(data);
    let got = records_of(&outcomes);
    assert_eq!(got.len(), outcomes.len(), "no corruption expected");
    assert_eq!(got.len(), records.len());
    for (i, ((p, off), r)) in got.iter().zip(&records).enumerate() {
        assert_eq!(p, r, "record {i}");
        assert_eq!(*off, spans[i].0, "offset of record {i}");
    }
}

#[test]
fn golden_bytes_match_the_format_doc() {
    let (data, _) = write_log(&[b"hello".to_vec()]);
    // docs/format/wal.md, "Example".
    assert_eq!(data, [0x0b, 0xb9, 0x57, 0x58, 0x05, 0x00, 0x01, b'h', b'e', b'l', b'l', b'o']);
    assert_eq!(unmask_crc(mask_crc(0x1234_5678)), 0x1234_5678);
    assert_ne!(fragment_checksum(FULL_TYPE, b""), 0, "an empty record must not look like padding");

    // The WriteBatch example of the same document.
    let mut b = crate::batch::WriteBatch::new();
    b.put(b"k", b"v");
    b.set_sequence(1);
    assert_eq!(b.data(), [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, b'k', 1, b'v']);
}

/// Checks the bit-flip invariant: every record returned is the original at that offset, and
/// unless a corruption was reported, every original record came back.
fn check_flipped(data: Vec<u8>, records: &[Vec<u8>], spans: &[(u64, u64)], what: &str) {
    let outcomes = read_all(data);
    let got = records_of(&outcomes);
    for (p, off) in &got {
        let i = spans.iter().position(|s| s.0 == *off).unwrap_or_else(|| {
            panic!("{what}: record at unexpected offset {off}");
        });
        assert_eq!(p, &records[i], "{what}: wrong record returned silently at {off}");
    }
    if got.len() == outcomes.len() {
        assert_eq!(got.len(), records.len(), "{what}: records dropped without a report");
    }
}

#[test]
fn every_single_bit_flip_in_a_small_log_is_detected() {
    let records: Vec<Vec<u8>> =
        vec![record(10, 1), vec![], record(100, 2), record(1, 3), record(37, 4)];
    let (data, spans) = write_log(&records);
    for bit in 0..data.len() * 8 {
        let mut d = data.clone();
        d[bit / 8] ^= 1 << (bit % 8);
        check_flipped(d, &records, &spans, &format!("bit {bit}"));
    }
}

#[test]
fn bit_flips_in_a_multi_block_log_are_detected() {
    let records: Vec<Vec<u8>> = vec![
        record(20, 1),
        record(2 * BLOCK_SIZE + 100, 2),
        record(BLOCK_SIZE - 200, 3),
        record(300, 4),
        record(5, 5),
    ];
    let (data, spans) = write_log(&records);
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    // Every header byte of every fragment, plus random bits anywhere.
    let mut bits: Vec<usize> = Vec::new();
    let mut pos = 0usize;
    while pos + HEADER_SIZE <= data.len() {
        let in_block = BLOCK_SIZE - pos % BLOCK_SIZE;
        if in_block < HEADER_SIZE {
            pos += in_block;
            continue;
        }
        bits.extend(pos * 8..(pos + HEADER_SIZE) * 8);
        let len = usize::from(u16::from_le_bytes([data[pos + 4], data[pos + 5]]));
        pos += HEADER_SIZE + len;
    }
    bits.extend((0..300).map(|_| rng.gen_range(0..data.len() * 8)));
    for bit in bits {
        let mut d = data.clone();
        d[bit / 8] ^= 1 << (bit % 8);
        check_flipped(d, &records, &spans, &format!("bit {bit}"));
    }
}

#[test]
fn truncation_at_every_offset_keeps_exactly_the_complete_records() {
    let payload = BLOCK_SIZE - HEADER_SIZE;
    let records: Vec<Vec<u8>> = vec![
        record(10, 1),
        vec![],
        record(payload - 30, 2), // ends 13 bytes before the block end
        record(3, 3),            // leaves a 3-byte trailer
        record(BLOCK_SIZE + 50, 4),
        record(200, 5),
    ];
    let (data, spans) = write_log(&records);
    for cut in 0..=data.len() {
        let outcomes = read_all(data[..cut].to_vec());
        let complete = spans.iter().take_while(|s| s.1 <= cut as u64).count();
        let got = records_of(&outcomes);
        assert_eq!(got.len(), complete, "cut at {cut}");
        for (i, (p, off)) in got.iter().enumerate() {
            assert_eq!((p, *off), (&records[i], spans[i].0), "cut at {cut}");
        }
        for o in &outcomes[got.len()..] {
            match o {
                ReadOutcome::Corrupt { at_tail: true, offset, bytes, .. } => {
                    assert_eq!(offset + bytes, cut as u64, "cut at {cut}: {o:?}")
                }
                other => panic!("cut at {cut}: unexpected {other:?}"),
            }
        }
        assert!(outcomes.len() <= got.len() + 1, "cut at {cut}: {outcomes:?}");
    }
}

/// Appends one raw fragment (bypassing the writer's sequencing rules).
fn raw_fragment(dst: &mut Vec<u8>, fragment_type: u8, payload: &[u8]) {
    dst.extend_from_slice(&fragment_checksum(fragment_type, payload).to_le_bytes());
    dst.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    dst.push(fragment_type);
    dst.extend_from_slice(payload);
}

fn corrupt_reason(o: &ReadOutcome) -> (&str, u64, u64, bool) {
    match o {
        ReadOutcome::Corrupt { reason, offset, bytes, at_tail } => {
            (reason.as_str(), *offset, *bytes, *at_tail)
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn bad_fragment_sequences_are_reported_and_skipped() {
    let mut d = Vec::new();
    raw_fragment(&mut d, MIDDLE_TYPE, b"m"); // 0..8: MIDDLE without FIRST
    raw_fragment(&mut d, LAST_TYPE, b"l"); // 8..16: LAST without FIRST
    raw_fragment(&mut d, FIRST_TYPE, b"f"); // 16..24: FIRST interrupted by...
    raw_fragment(&mut d, FULL_TYPE, b"ok1"); // 24..34: ...a FULL, still returned
    raw_fragment(&mut d, 9, b"xyz"); // 34..44: unknown type, good checksum
    raw_fragment(&mut d, FIRST_TYPE, b"a"); // 44..: a good split record
    raw_fragment(&mut d, MIDDLE_TYPE, b"b");
    raw_fragment(&mut d, LAST_TYPE, b"c");
    let o = read_all(d);
    assert_eq!(o.len(), 6, "{o:?}");
    assert_eq!(corrupt_reason(&o[0]), ("MIDDLE fragment without FIRST", 0, 8, false));
    assert_eq!(corrupt_reason(&o[1]), ("LAST fragment without FIRST", 8, 8, false));
    assert_eq!(corrupt_reason(&o[2]), ("FIRST fragment not followed by MIDDLE/LAST", 16, 8, false));
    assert!(matches!(&o[3], ReadOutcome::Record(p, 24) if p == b"ok1"));
    assert_eq!(corrupt_reason(&o[4]), ("unknown fragment type 9", 34, 10, false));
    assert!(matches!(&o[5], ReadOutcome::Record(p, 44) if p == b"abc"));
}

#[test]
fn framing_errors_skip_to_the_next_block() {
    // Block 0: a bad checksum, then a record that is lost with the rest of the block.
    let mut d = Vec::new();
    raw_fragment(&mut d, FULL_TYPE, b"bad");
    d[7] ^= 0xff;
    raw_fragment(&mut d, FULL_TYPE, b"lost");
    d.resize(BLOCK_SIZE, 0);
    // Block 1: a length running past the block.
    raw_fragment(&mut d, FULL_TYPE, b"x");
    let at = BLOCK_SIZE + 4;
    d[at..at + 2].copy_from_slice(&(BLOCK_SIZE as u16).to_le_bytes());
    d.resize(2 * BLOCK_SIZE, 0);
    // Block 2: zero padding followed by stray bytes.
    d.resize(2 * BLOCK_SIZE + 100, 0);
    d.push(1);
    d.resize(3 * BLOCK_SIZE, 0);
    // Block 3: fine.
    raw_fragment(&mut d, FULL_TYPE, b"good");
    let o = read_all(d);
    assert_eq!(o.len(), 4, "{o:?}");
    let (reason, off, bytes, tail) = corrupt_reason(&o[0]);
    assert!(reason.contains("checksum mismatch"), "{reason}");
    assert_eq!((off, bytes, tail), (0, BLOCK_SIZE as u64, false));
    let (reason, off, _, tail) = corrupt_reason(&o[1]);
    assert!(reason.contains("runs past the end of its block"), "{reason}");
    assert_eq!((off, tail), (BLOCK_SIZE as u64, false));
    let (reason, off, _, tail) = corrupt_reason(&o[2]);
    assert_eq!(
        (reason, off, tail),
        ("non-zero bytes after zero padding", 2 * BLOCK_SIZE as u64, false)
    );
    assert!(
        matches!(&o[3], ReadOutcome::Record(p, off) if p == b"good" && *off == 3 * BLOCK_SIZE as u64)
    );
}

#[test]
fn zero_filled_tail_is_end_of_file() {
    let (mut data, _) = write_log(&[record(50, 1)]);
    data.resize(data.len() + 5000, 0);
    let o = read_all(data);
    assert_eq!(records_of(&o).len(), 1);
    assert_eq!(o.len(), 1, "{o:?}");
}

#[test]
fn writer_refuses_records_after_an_io_error() {
    let file = MemFile { fail_appends: true, ..Default::default() };
    let mut w = LogWriter::new(Box::new(file));
    assert!(w.add_record(b"a").is_err());
    assert!(w.add_record(b"b").is_err());
    assert!(w.sync().is_err());
}

#[test]
fn random_garbage_and_multi_byte_damage_never_yield_wrong_records() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    for _ in 0..200 {
        let len = rng.gen_range(0..3 * BLOCK_SIZE);
        let garbage: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        // Garbage almost never passes a checksum; the point is no panic and no endless loop.
        let _ = read_all(garbage);
    }
    let records: Vec<Vec<u8>> = (0..40)
        .map(|i| record(if i % 7 == 0 { BLOCK_SIZE + i } else { i * 13 }, i as u8))
        .collect();
    let (data, spans) = write_log(&records);
    for round in 0..200 {
        let mut d = data.clone();
        for _ in 0..rng.gen_range(1..6) {
            let at = rng.gen_range(0..d.len());
            d[at] = rng.gen();
        }
        if rng.gen() {
            d.truncate(rng.gen_range(0..d.len()));
        }
        let outcomes = read_all(d);
        for (p, off) in records_of(&outcomes) {
            let i = spans.iter().position(|s| s.0 == off).expect("record at a record start");
            assert_eq!(p, records[i], "round {round}: wrong record at {off}");
        }
    }
}

#[test]
fn reader_and_writer_are_send() {
    fn assert_send<T: Send>() {}
    assert_send::<LogReader>();
    assert_send::<LogWriter>();
}

#[test]
fn a_zeroed_hole_followed_by_data_is_reported() {
    let records: Vec<Vec<u8>> = (0..400).map(|i| record(300, i as u8)).collect();
    let (mut data, spans) = write_log(&records);
    // Lose everything from a fragment start in block 0 through the end of block 1 (two lost
    // pages of a crash), leaving block 2 onwards intact.
    let hole_start = spans[20].0 as usize;
    for b in &mut data[hole_start..2 * BLOCK_SIZE] {
        *b = 0;
    }
    let o = read_all(data);
    let (reason, off, bytes, tail) = corrupt_reason(&o[20]);
    assert_eq!(reason, "zero-filled hole followed by more log data");
    assert_eq!((off, tail), (hole_start as u64, false));
    // The dropped stretch reaches the first fragment header of block 2, which the writer
    // did not necessarily start a record with: it may be a LAST, reported next.
    assert!(off + bytes >= 2 * BLOCK_SIZE as u64, "{o:?}");
    let got = records_of(&o);
    assert_eq!(&got[..20], &records_of(&read_all(write_log(&records[..20]).0))[..]);
    let resumed = spans.iter().position(|s| s.0 >= 2 * BLOCK_SIZE as u64).unwrap();
    assert_eq!(got.last().unwrap().0, records[399]);
    assert_eq!(got.len(), 20 + (400 - resumed));
}

/// docs/format/wal.md, "Predecessor record": bytes, read back, misplaced and malformed.
#[test]
fn predecessor_record_golden_bytes_and_reading() {
    let file = MemFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()));
    let p = super::PredecessorWal { number: 5, size: 100, last_seq: 10 };
    w.add_predecessor(&p).unwrap();
    w.add_record(b"hello").unwrap();
    // Only as a WAL's first record.
    assert!(w.add_predecessor(&p).is_err());
    w.flush().unwrap();
    let data = file.data.lock().unwrap().clone();
    let mut want = vec![0u8; 7];
    want[4] = 24;
    want[6] = super::PREDECESSOR_TYPE;
    want.extend_from_slice(&[
        5, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0,
    ]);
    let crc = fragment_checksum(super::PREDECESSOR_TYPE, &want[7..]);
    want[..4].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(data[..31], want[..]);
    assert_eq!(data[..4], [0x60, 0x38, 0x2b, 0x3d], "the doc's checksum bytes");
    match &read_all(data.clone())[..] {
        [ReadOutcome::Predecessor(got, 0), ReadOutcome::Record(r, 31)] => {
            assert_eq!(*got, p);
            assert_eq!(r, b"hello");
        }
        other => panic!("{other:?}"),
    }
    // A predecessor record of the wrong length (good checksum) is reported, not trusted.
    let mut bad = vec![0u8; 7];
    bad[4] = 3;
    bad[6] = super::PREDECESSOR_TYPE;
    bad.extend_from_slice(&[1, 2, 3]);
    let crc = fragment_checksum(super::PREDECESSOR_TYPE, &bad[7..]);
    bad[..4].copy_from_slice(&crc.to_le_bytes());
    assert!(matches!(&read_all(bad)[..], [ReadOutcome::Corrupt { at_tail: false, .. }]));
}

/// A crash in the middle of an append through a memory mapping leaves a prefix of the last
/// record's bytes, then the file's preallocated zeros: a torn tail wherever the copy stopped
/// (in a header, a payload, between the blocks of a long record), never damage. The same cut
/// with log data after it is damage; so is a bad last fragment whose last byte is not zero. Only
/// a WAL's reader applies the rule; a MANIFEST's reports the cut fragment as damage.
#[test]
fn a_mapped_append_cut_short_is_a_torn_tail() {
    let records: Vec<Vec<u8>> = vec![record(300, 1), record(500, 2), record(70_000, 3)];
    for last in [1usize, 2] {
        let (data, spans) = write_log(&records[..=last]);
        let (start, end) = (spans[last].0 as usize, spans[last].1 as usize);
        let cuts: Vec<usize> = (start + 1..end).step_by(611).chain([start + 3, end - 1]).collect();
        for &cut in &cuts {
            // Torn: the copied prefix, then zeros to the end of the file.
            let mut d = data[..cut].to_vec();
            d.resize(data.len() + 9000, 0);
            if let Some(c) =
                read_all(d.clone()).iter().find(|c| matches!(c, ReadOutcome::Corrupt { .. }))
            {
                // A MANIFEST's reader: its files are never mapped, so the same bytes (zeros
                // follow the fragment: the file does not end inside it) are damage.
                let (_, off, _, tail) = corrupt_reason(c);
                assert!(off == start as u64 && !tail, "cut {cut}: MANIFEST reader, tail {tail}");
            }
            let o = read_all_wal(d);
            let got = records_of(&o);
            assert!(got.len() >= last, "cut {cut}: {o:?}");
            assert_eq!(got[..last], records_of(&read_all(write_log(&records[..last]).0))[..]);
            for c in o.iter().filter(|c| matches!(c, ReadOutcome::Corrupt { .. })) {
                let (reason, off, _, tail) = corrupt_reason(c);
                assert!(tail && off == start as u64, "cut {cut}: {reason} at {off}, tail {tail}");
            }
            if got.len() == last {
                assert_eq!(o.len(), last + 1, "cut {cut}: the torn record is reported: {o:?}");
            } else {
                // Only the record's last byte was missing, and it was a zero.
                assert_eq!(got[last].0, records[last], "cut {cut}");
            }

            // Damage: the same cut, with more log data in a later block.
            let more: Vec<Vec<u8>> = records[..=last]
                .iter()
                .cloned()
                .chain((0..300).map(|i| record(300, i as u8)))
                .collect();
            let (mut d, _) = write_log(&more);
            let block_end = (cut / BLOCK_SIZE + 1) * BLOCK_SIZE;
            d[cut..block_end].fill(0);
            let o = read_all_wal(d);
            let first_bad = o.iter().find(|c| matches!(c, ReadOutcome::Corrupt { .. }));
            if let Some(c) = first_bad {
                let (reason, off, _, tail) = corrupt_reason(c);
                assert!(!tail && off == start as u64, "cut {cut}: {reason} at {off}, tail {tail}");
            } else {
                assert_eq!(records_of(&o).len(), more.len(), "cut {cut}: a record went missing");
            }
        }
        // A flipped last byte (not zero) with only zeros after it: damage.
        let mut d = data.clone();
        d[end - 1] = if d[end - 1] == 0 { 1 } else { d[end - 1] ^ 0x5a };
        d.resize(data.len() + 9000, 0);
        let o = read_all_wal(d);
        let (_, off, _, tail) = corrupt_reason(o.last().unwrap());
        assert!(!tail, "a damaged last record is not a torn tail: at {off}");
    }
}

//! The log format when nothing goes wrong: round trips over block edges, golden bytes of the
//! format document (the predecessor record included), and a writer that refuses records after
//! an IO error.

use rand::{Rng, SeedableRng};

use super::*;

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

#[test]
fn writer_refuses_records_after_an_io_error() {
    let file = MemFile { fail_appends: true, ..Default::default() };
    let mut w = LogWriter::new(Box::new(file));
    assert!(w.add_record(b"a").is_err());
    assert!(w.add_record(b"b").is_err());
    assert!(w.sync().is_err());
}

#[test]
fn reader_and_writer_are_send() {
    fn assert_send<T: Send>() {}
    assert_send::<LogReader>();
    assert_send::<LogWriter>();
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

/// Counts the file calls a writer makes: a record is one `append_parts` call (with its trailer
/// and every fragment), whatever block edges it crosses, so that a file writing large appends
/// with one system call (the mapped WAL) sees the record whole.
#[derive(Default)]
struct CallCounter {
    file: MemFile,
    appends: Arc<Mutex<usize>>,
    parts_calls: Arc<Mutex<Vec<usize>>>,
}

impl WritableFile for CallCounter {
    fn append(&mut self, data: &[u8]) -> crate::error::Result<()> {
        *self.appends.lock().unwrap() += 1;
        self.file.append(data)
    }
    fn append_parts(&mut self, parts: &[&[u8]]) -> crate::error::Result<()> {
        self.parts_calls.lock().unwrap().push(parts.iter().map(|p| p.len()).sum());
        for p in parts {
            self.file.append(p)?;
        }
        Ok(())
    }
    fn flush(&mut self) -> crate::error::Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> crate::error::Result<()> {
        Ok(())
    }
    fn size(&self) -> u64 {
        self.file.size()
    }
}

#[test]
fn a_record_is_one_append_whatever_block_edges_it_crosses() {
    let counter = CallCounter::default();
    let (data, appends, calls) =
        (counter.file.data.clone(), counter.appends.clone(), counter.parts_calls.clone());
    let mut w = LogWriter::new(Box::new(counter));
    let payload = BLOCK_SIZE - HEADER_SIZE;
    // A record leaving a 3-byte trailer, then one crossing into the next block after it, then
    // one spanning three blocks.
    let records = [record(payload - 10, 1), record(5000, 2), record(2 * BLOCK_SIZE + 100, 3)];
    let mut sizes = Vec::new();
    for r in &records {
        let before = w.file_size();
        w.add_record(r).unwrap();
        sizes.push((w.file_size() - before) as usize);
    }
    assert_eq!(*appends.lock().unwrap(), 0, "no piece appended on its own");
    assert_eq!(*calls.lock().unwrap(), sizes, "one append_parts call per record");
    let got = records_of(&read_all(data.lock().unwrap().clone()));
    assert_eq!(got.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(), records.to_vec());
}

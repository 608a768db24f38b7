//! Logs cut short: a truncation at any offset keeps exactly the complete records, a zero-filled
//! tail is the end of the file, and a mapped append cut short is a torn tail (for a WAL only).

use super::*;

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

#[test]
fn zero_filled_tail_is_end_of_file() {
    let (mut data, _) = write_log(&[record(50, 1)]);
    data.resize(data.len() + 5000, 0);
    let o = read_all(data);
    assert_eq!(records_of(&o).len(), 1);
    assert_eq!(o.len(), 1, "{o:?}");
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

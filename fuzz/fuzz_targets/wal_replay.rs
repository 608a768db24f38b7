//! `LogReader` + `WriteBatch::from_data` over arbitrary bytes, as WAL replay does: no panic;
//! the reader ends (each outcome consumes bytes); bad batches are `Corruption`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talus::fs::SequentialFile;
use talus::wal::{LogReader, ReadOutcome};
use talus::WriteBatch;

struct MemSeq(Vec<u8>, usize);

impl SequentialFile for MemSeq {
    fn read(&mut self, buf: &mut [u8]) -> talus::Result<usize> {
        let rest = self.0.get(self.1..).unwrap_or(&[]);
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.1 += n;
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let data = data.to_vec();
    let max_outcomes = data.len() / 7 + 2;
    let mut r = LogReader::new(Box::new(MemSeq(data, 0)), "fuzz.log".into());
    for _ in 0..=max_outcomes {
        match r.read_record().expect("no IO errors in memory") {
            ReadOutcome::Eof => return,
            ReadOutcome::Corrupt { .. } => {}
            ReadOutcome::Predecessor(p, _) => {
                assert_eq!(talus::wal::PredecessorWal::decode(&p.encode()), Some(p));
            }
            ReadOutcome::Record(payload, offset) => {
                match WriteBatch::from_data(payload, "fuzz.log", offset) {
                    Ok(b) => {
                        let _ = b.sequence();
                        assert_eq!(b.iter().count(), b.count() as usize);
                    }
                    Err(e) => assert!(e.is_corruption(), "{e}"),
                }
            }
        }
    }
    panic!("log reader does not end");
});

//! Tests for the log writer and reader: round trips, golden bytes, bit flips, truncations and
//! hand-built bad sequences.

use std::sync::{Arc, Mutex};

use super::*;
use crate::error::Result;
use crate::fs::{SequentialFile, WritableFile};

mod damage;
mod format;
mod torn_tail;

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

fn corrupt_reason(o: &ReadOutcome) -> (&str, u64, u64, bool) {
    match o {
        ReadOutcome::Corrupt { reason, offset, bytes, at_tail } => {
            (reason.as_str(), *offset, *bytes, *at_tail)
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

//! External sort of `(key, value)` entries in bounded memory, for index builds.
//!
//! Entries are buffered until they take `budget` bytes, then sorted and written as a run file
//! (through the engine's [`Fs`], so fault-injecting file systems see it); `finish` returns a
//! k-way merge over the runs and the last in-memory buffer, yielding entries in key order.
//! Run files are transient (deleted by [`Merged`]'s drop and on error); their layout, per
//! entry: `key length (u32 LE) | key | value length (u32 LE) | value`. Run files are read back
//! with bounds checks: a short or garbled run is [`TableError::Corruption`]. Single-threaded.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use talus::fs::{Fs, SequentialFile};

use crate::error::{Result, TableError};

/// Bytes counted per buffered entry besides its key and value.
const ENTRY_OVERHEAD: usize = 48;
/// Write and read buffer of a run file.
const IO_BUF: usize = 256 << 10;

type Entry = (Vec<u8>, Vec<u8>);
/// A heap item: key, source index (ties go to the earlier run), value.
type HeapItem = Reverse<(Vec<u8>, usize, Vec<u8>)>;

/// Accumulates entries and spills sorted runs.
pub(crate) struct ExternalSorter {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    prefix: String,
    budget: usize,
    buf: Vec<Entry>,
    bytes: usize,
    runs: Vec<PathBuf>,
}

impl ExternalSorter {
    /// Runs go to `dir` as `<prefix>-<n>.run`.
    pub(crate) fn new(fs: Arc<dyn Fs>, dir: &Path, prefix: &str, budget: usize) -> ExternalSorter {
        ExternalSorter {
            fs,
            dir: dir.to_path_buf(),
            prefix: prefix.to_string(),
            budget: budget.max(1),
            buf: Vec::new(),
            bytes: 0,
            runs: Vec::new(),
        }
    }

    /// Adds an entry (any order).
    pub(crate) fn push(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<()> {
        self.bytes += key.len() + value.len() + ENTRY_OVERHEAD;
        self.buf.push((key, value));
        if self.bytes >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Number of runs written so far.
    #[cfg(test)]
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> Result<()> {
        self.buf.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let path = self.dir.join(format!("{}-{}.run", self.prefix, self.runs.len()));
        self.runs.push(path.clone());
        let mut f = self.fs.create(&path)?;
        let mut out = Vec::with_capacity(IO_BUF + 1024);
        for (k, v) in self.buf.drain(..) {
            for part in [&k, &v] {
                let n = u32::try_from(part.len())
                    .map_err(|_| TableError::corrupt(format!("entry of {} bytes", part.len())))?;
                out.extend_from_slice(&n.to_le_bytes());
                out.extend_from_slice(part);
            }
            if out.len() >= IO_BUF {
                f.append(&out)?;
                out.clear();
            }
        }
        f.append(&out)?;
        f.flush()?;
        self.bytes = 0;
        Ok(())
    }

    /// The merge of everything pushed, in key order.
    pub(crate) fn finish(mut self) -> Result<Merged> {
        self.buf.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut sources = Vec::with_capacity(self.runs.len() + 1);
        let runs = std::mem::take(&mut self.runs);
        let mut merged = Merged {
            fs: self.fs.clone(),
            runs: runs.clone(),
            sources: Vec::new(),
            heap: BinaryHeap::new(),
        };
        for p in &runs {
            sources.push(Source::Run(RunReader::open(self.fs.as_ref(), p)?));
        }
        sources.push(Source::Mem(std::mem::take(&mut self.buf).into_iter()));
        merged.sources = sources;
        for i in 0..merged.sources.len() {
            merged.refill(i)?;
        }
        Ok(merged)
    }
}

impl Drop for ExternalSorter {
    fn drop(&mut self) {
        for p in &self.runs {
            let _ = self.fs.remove_file(p);
        }
    }
}

struct RunReader {
    file: Box<dyn SequentialFile>,
    path: PathBuf,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    offset: u64,
}

impl RunReader {
    fn open(fs: &dyn Fs, path: &Path) -> Result<RunReader> {
        Ok(RunReader {
            file: fs.open_sequential(path)?,
            path: path.to_path_buf(),
            buf: vec![0; IO_BUF],
            pos: 0,
            end: 0,
            offset: 0,
        })
    }

    /// Fills the buffer; false at end of file.
    fn fill(&mut self) -> Result<bool> {
        if self.pos < self.end {
            return Ok(true);
        }
        self.end = self.file.read(&mut self.buf)?;
        self.pos = 0;
        Ok(self.end > 0)
    }

    fn read_into(&mut self, out: &mut Vec<u8>, mut n: usize) -> Result<()> {
        while n > 0 {
            if !self.fill()? {
                return Err(TableError::corrupt(format!(
                    "run file {} truncated at offset {}",
                    self.path.display(),
                    self.offset
                )));
            }
            let take = n.min(self.end - self.pos);
            out.extend_from_slice(&self.buf[self.pos..self.pos + take]);
            self.pos += take;
            self.offset += take as u64;
            n -= take;
        }
        Ok(())
    }

    fn part(&mut self) -> Result<Vec<u8>> {
        let mut len = Vec::with_capacity(4);
        self.read_into(&mut len, 4)?;
        let n = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let mut v = Vec::with_capacity(n.min(1 << 20));
        self.read_into(&mut v, n)?;
        Ok(v)
    }

    fn next(&mut self) -> Result<Option<Entry>> {
        if !self.fill()? {
            return Ok(None);
        }
        let k = self.part()?;
        let v = self.part()?;
        Ok(Some((k, v)))
    }
}

enum Source {
    Run(RunReader),
    Mem(std::vec::IntoIter<Entry>),
}

/// A k-way merge of sorted runs.
pub(crate) struct Merged {
    fs: Arc<dyn Fs>,
    runs: Vec<PathBuf>,
    sources: Vec<Source>,
    /// (key, source index) -> value kept beside.
    heap: BinaryHeap<HeapItem>,
}

impl Merged {
    fn refill(&mut self, i: usize) -> Result<()> {
        let e = match &mut self.sources[i] {
            Source::Run(r) => r.next()?,
            Source::Mem(it) => it.next(),
        };
        if let Some((k, v)) = e {
            self.heap.push(Reverse((k, i, v)));
        }
        Ok(())
    }

    /// The next entry in key order (equal keys: in run order).
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        let Some(Reverse((k, i, v))) = self.heap.pop() else {
            return Ok(None);
        };
        self.refill(i)?;
        Ok(Some((k, v)))
    }
}

impl Drop for Merged {
    fn drop(&mut self) {
        self.sources.clear();
        for p in &self.runs {
            let _ = self.fs.remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use talus::fs::StdFs;

    fn sort_all(entries: &[(Vec<u8>, Vec<u8>)], budget: usize) -> (Vec<Entry>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn Fs> = Arc::new(StdFs);
        let mut s = ExternalSorter::new(fs, dir.path(), "t", budget);
        for (k, v) in entries {
            s.push(k.clone(), v.clone()).unwrap();
        }
        let runs = s.runs();
        let mut m = s.finish().unwrap();
        let mut out = Vec::new();
        while let Some(e) = m.next_entry().unwrap() {
            out.push(e);
        }
        drop(m);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "runs removed");
        (out, runs)
    }

    #[test]
    fn spills_runs_under_a_small_budget() {
        let entries: Vec<Entry> =
            (0..1000u32).rev().map(|i| (i.to_be_bytes().to_vec(), vec![i as u8; 3])).collect();
        let (out, runs) = sort_all(&entries, 2000);
        assert!(runs > 10, "{runs} runs");
        let mut want = entries.clone();
        want.sort();
        assert_eq!(out, want);
    }

    #[test]
    fn truncated_run_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn Fs> = Arc::new(StdFs);
        let mut s = ExternalSorter::new(fs.clone(), dir.path(), "t", 1);
        s.push(b"key".to_vec(), b"value".to_vec()).unwrap();
        let run = dir.path().join("t-0.run");
        let bytes = std::fs::read(&run).unwrap();
        std::fs::write(&run, &bytes[..bytes.len() - 2]).unwrap();
        assert!(matches!(s.finish().map(|_| ()), Err(TableError::Corruption { .. })));
    }

    /// Each case writes up to a few hundred run files: a fixed number of cases, whatever
    /// `PROPTEST_CASES` says.
    #[test]
    fn equals_an_in_memory_sort() {
        let config = proptest::test_runner::Config { cases: 64, ..Default::default() };
        let mut runner = proptest::test_runner::TestRunner::new(config);
        let entries = proptest::collection::vec(
            (
                proptest::collection::vec(any::<u8>(), 0..8),
                proptest::collection::vec(any::<u8>(), 0..4),
            ),
            0..200,
        );
        runner
            .run(&(entries, 1usize..4000), |(entries, budget)| {
                let (out, _) = sort_all(&entries, budget);
                let mut want = entries.clone();
                want.sort_by(|a, b| a.0.cmp(&b.0));
                let keys: Vec<_> = out.iter().map(|e| e.0.clone()).collect();
                let want_keys: Vec<_> = want.iter().map(|e| e.0.clone()).collect();
                prop_assert_eq!(keys, want_keys);
                let mut a = out.clone();
                a.sort();
                let mut b = entries.clone();
                b.sort();
                prop_assert_eq!(a, b);
                Ok(())
            })
            .unwrap();
    }
}

//! A database's true size: the bytes of the files in its directory as written, the figure
//! `du --apparent-size` gives for the directory once the engine has closed it. A file an engine
//! holds open with a preallocated length (Talus's WAL files: `talus.wal-files-written`) counts
//! at the bytes written to it, never at that length. Subdirectories count (the table layer's
//! `tmp/` sort runs while an index build runs). Pure directory reads; what cannot be read
//! counts 0.

use std::collections::HashMap;
use std::path::Path;

/// The bytes of a database's live files, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveSize {
    /// Table files (`*.sst`).
    pub sst: u64,
    /// Write-ahead logs (`*.log`), the bytes written.
    pub wal: u64,
    /// Everything else: MANIFEST, OPTIONS, LOG, CURRENT, LOCK, scratch files.
    pub other: u64,
}

impl LiveSize {
    /// All of it.
    pub fn total(&self) -> u64 {
        self.sst + self.wal + self.other
    }
}

/// The size of the files under `dir`, each at its length except those named in `written`
/// (file name in `dir` -> bytes written), which count at that.
pub fn live_dir_size(dir: &Path, written: &HashMap<String, u64>) -> LiveSize {
    let mut s = LiveSize::default();
    add_dir(dir, written, true, &mut s);
    s
}

fn add_dir(dir: &Path, written: &HashMap<String, u64>, top: bool, s: &mut LiveSize) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let Ok(m) = e.metadata() else { continue };
        if m.is_dir() {
            add_dir(&e.path(), written, false, s);
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let len = match written.get(&name) {
            Some(&w) if top => w.min(m.len()),
            _ => m.len(),
        };
        if name.ends_with(".sst") {
            s.sst += len;
        } else if name.ends_with(".log") {
            s.wal += len;
        } else {
            s.other += len;
        }
    }
}

/// Parses `talus.wal-files-written` (`<name> <bytes>` lines); unparsable lines are skipped.
pub(crate) fn parse_written(text: &str) -> HashMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (name, n) = l.split_once(' ')?;
            Some((name.to_string(), n.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_lengths_replace_file_lengths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("000001.sst"), [0u8; 100]).unwrap();
        std::fs::write(dir.path().join("000002.log"), [0u8; 4096]).unwrap();
        std::fs::write(dir.path().join("MANIFEST-000003"), [0u8; 10]).unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        std::fs::write(dir.path().join("tmp").join("000002.log"), [0u8; 7]).unwrap();
        let all = live_dir_size(dir.path(), &HashMap::new());
        assert_eq!((all.sst, all.wal, all.other), (100, 4096 + 7, 10));
        let w = parse_written("000002.log 30\nbogus\n000009.log x\n");
        assert_eq!(w.len(), 1);
        let s = live_dir_size(dir.path(), &w);
        assert_eq!((s.sst, s.wal, s.other, s.total()), (100, 30 + 7, 10, 147));
    }
}

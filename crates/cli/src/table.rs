//! Opening and walking one SST file through the engine's public table reader, shared by
//! `sst_dump` and `ldb checkconsistency`.
//!
//! The walk trusts nothing: besides the reader's own checksum errors it checks that every
//! internal key parses and that keys come in strictly increasing internal-key order, and reports
//! a violation naming the file and the entry's index.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use talus::filename::{parse_file_name, FileType};
use talus::fs::Fs;
use talus::key::{compare_internal, parse_internal_key};
use talus::sst::TableReader;

/// Opens the SST at `path` (no block cache). The file number comes from the name
/// (`000012.sst` is 12; any other name is 0).
pub fn open_table(fs: &dyn Fs, path: &Path) -> Result<Arc<TableReader>, String> {
    let name = path.display().to_string();
    let number = match path.file_name().and_then(|n| n.to_str()).and_then(parse_file_name) {
        Some(FileType::Table(n)) => n,
        _ => 0,
    };
    let file = fs.open_random(path).map_err(|e| e.to_string())?;
    TableReader::open(file, number, name, None).map(Arc::new).map_err(|e| e.to_string())
}

/// Calls `f(internal_key, value)` for every point entry in order, from the first entry at or
/// after internal key `start` if given (stopping early when `f` returns `Ok(false)`), and returns how many entries were visited. Fails on the reader's
/// error, on an unparseable key or on keys out of order.
pub fn walk_entries<E: From<String>>(
    table: &Arc<TableReader>,
    file: &str,
    start: Option<&[u8]>,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<bool, E>,
) -> Result<u64, E> {
    let mut it = table.iter(false);
    match start {
        Some(k) => it.seek(k),
        None => it.seek_to_first(),
    }
    let mut prev: Vec<u8> = Vec::new();
    let mut n: u64 = 0;
    while it.valid() {
        let key = it.key();
        if parse_internal_key(key).is_none() {
            return Err(E::from(format!("{file}: entry {n} has a malformed internal key")));
        }
        if n > 0 && compare_internal(&prev, key) != Ordering::Less {
            return Err(E::from(format!("{file}: entry {n} is out of order")));
        }
        prev.clear();
        prev.extend_from_slice(key);
        n += 1;
        if !f(key, it.value())? {
            return Ok(n);
        }
        it.next();
    }
    it.status().map_err(|e| E::from(e.to_string()))?;
    Ok(n)
}

//! True sizes: a database's size is the bytes written to its files, never the length an engine
//! preallocated (Talus's WAL files are `fallocate`d ahead of the appends: 72 MiB each by
//! default, two of them while a database is open).

use talus_table::*;

use crate::common::*;
use crate::helpers::open;

fn files_len(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum()
}

#[test]
fn a_one_key_database_is_under_a_megabyte_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let cat = open(dir.path());
    let t = cat.create_table(table_def("t")).unwrap();
    t.insert(&row(1, Some(1), "one", 1)).unwrap();
    let s = cat.db().live_size();
    assert!(s.total() < 1 << 20, "{s:?}");
    assert!(s.wal > 0 && s.wal < 4096, "the WAL bytes written: {s:?}");
    assert!(s.other > 0, "MANIFEST, OPTIONS, CURRENT, LOG: {s:?}");
    // What the directory's file lengths say while it is open (Talus: the preallocated WALs),
    // and what they say once closed, when nothing is preallocated any more.
    let open_len = files_len(dir.path());
    eprintln!("open: live {} bytes, file lengths {open_len}", s.total());
    drop((t, cat));
    let closed = files_len(dir.path());
    assert!(s.total() <= closed + 4096 && closed <= s.total() + (64 << 10), "{s:?} vs {closed}");
}

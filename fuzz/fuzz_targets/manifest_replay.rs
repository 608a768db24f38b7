//! MANIFEST replay: `VersionEdit::decode` over arbitrary bytes, and `VersionSet::recover` on a
//! `SimFs` whose MANIFEST is either the raw input or the input's records framed in the log
//! format (so that the fuzzer reaches the edit decoder and the version builder). No panic; errors
//! are `Corruption` (or `InvalidArgument` for a foreign comparator).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use talus::fs::fault::SimFs;
use talus::fs::Fs;
use talus::version::{VersionEdit, VersionSet};
use talus::wal::LogWriter;
use talus::Error;

fn write(fs: &SimFs, path: &Path, data: &[u8]) {
    let mut f = fs.create(path).expect("create");
    f.append(data).expect("append");
    f.sync().expect("sync");
}

fuzz_target!(|input: (bool, Vec<Vec<u8>>)| {
    let (framed, records) = input;
    for r in &records {
        if let Err(e) = VersionEdit::decode(r, "MANIFEST-000001", 0) {
            assert!(e.is_corruption(), "{e}");
        }
    }
    let fs = SimFs::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).expect("mkdir");
    let manifest = dir.join("MANIFEST-000001");
    if framed {
        let mut w = LogWriter::new(fs.create(&manifest).expect("create"));
        for r in &records {
            w.add_record(r).expect("add record");
        }
        w.sync().expect("sync");
    } else {
        write(&fs, &manifest, &records.concat());
    }
    write(&fs, &dir.join("CURRENT"), b"MANIFEST-000001\n");
    match VersionSet::recover(dir, fs, 7) {
        Ok(vs) => {
            let v = vs.current();
            for level in 0..v.num_levels() {
                let _ = v.level_files(level).len();
            }
        }
        Err(Error::Corruption { .. } | Error::InvalidArgument(_)) => {}
        Err(e) => panic!("unexpected error kind: {e}"),
    }
});

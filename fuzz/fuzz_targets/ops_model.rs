//! An operation sequence against a `BTreeMap` model on `SimFs`, with a countdown IO failure
//! (the N-th file operation fails, and every one after it), then a power loss that drops every
//! unsynced byte. Every write is `sync = true`, so every acknowledged write must survive: after
//! the crash the database equals the model (or, if a write failed, the model with or without
//! that write). Reads before the crash must match the model too. No panics.
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use talus::fs::fault::{CrashMode, OpFilter, SimFs};
use talus::fs::Fs;
use talus::{Db, Options, WriteBatch, WriteOptions};

#[derive(Arbitrary, Debug)]
enum Op {
    Put(u8, u8, u8),
    Delete(u8),
    DeleteRange(u8, u8),
    Get(u8),
    Flush,
    Compact,
    Reopen,
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// The N-th file operation fails (0: none).
    fail_at: u16,
    ops: Vec<Op>,
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(k: u8) -> Vec<u8> {
    vec![b'a' + (k % 8), b'a' + (k / 8 % 4)]
}

fn options(fs: Arc<dyn Fs>) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 2048,
        level0_file_num_compaction_trigger: 2,
        max_bytes_for_level_base: 16 << 10,
        target_file_size_base: 4 << 10,
        block_size: 128,
        max_background_jobs: 1,
        fs,
        ..Default::default()
    }
}

fn contents(db: &Db) -> talus::Result<Model> {
    db.iter(&Default::default()).collect()
}

fuzz_target!(|input: Input| {
    let fs = SimFs::new();
    let dir = Path::new("/db");
    let Ok(mut db) = Db::open(dir, options(fs.clone())) else { return };
    if input.fail_at > 0 {
        fs.fail_after(OpFilter::ALL, u64::from(input.fail_at), std::io::ErrorKind::Other, false);
    }
    let mut model = Model::new();
    // The model with the write whose outcome is unknown (it returned an error).
    let mut maybe: Option<Model> = None;
    for op in input.ops.iter().take(200) {
        let mut batch = WriteBatch::new();
        let mut next = model.clone();
        match *op {
            Op::Put(k, v, len) => {
                let value = vec![v; usize::from(len) * 4];
                batch.put(key(k), &value);
                next.insert(key(k), value);
            }
            Op::Delete(k) => {
                batch.delete(key(k));
                next.remove(&key(k));
            }
            Op::DeleteRange(a, b) => {
                let (a, b) = (key(a), key(b));
                batch.delete_range(&a, &b);
                next.retain(|k, _| !(a <= *k && *k < b));
            }
            Op::Get(k) => match db.get(key(k)) {
                Ok(v) => assert_eq!(v.as_ref(), model.get(&key(k)), "get {:?}", key(k)),
                Err(_) => break,
            },
            Op::Flush => {
                if db.flush().is_err() {
                    break;
                }
            }
            Op::Compact => {
                if db.compact_range(None, None).is_err() {
                    break;
                }
            }
            Op::Reopen => {
                drop(db);
                match Db::open(dir, options(fs.clone())) {
                    Ok(d) => db = d,
                    Err(_) => {
                        // Nothing to close; go straight to the crash check.
                        fs.clear_faults();
                        return check_after_crash(&fs, &model, None);
                    }
                }
                let got = contents(&db);
                if let Ok(got) = got {
                    assert_eq!(got, model, "after reopen");
                }
            }
        }
        if !batch.is_empty() {
            match db.write(batch, &WriteOptions { sync: true, ..Default::default() }) {
                Ok(()) => model = next,
                Err(_) => {
                    maybe = Some(next);
                    break;
                }
            }
        }
    }
    drop(db);
    fs.clear_faults();
    check_after_crash(&fs, &model, maybe.as_ref());
});

fn check_after_crash(fs: &Arc<SimFs>, model: &Model, maybe: Option<&Model>) {
    let fs = fs.crash(CrashMode::DropAllUnsynced);
    let db = Db::open(Path::new("/db"), options(fs)).expect("reopen after crash");
    let got = contents(&db).expect("scan after crash");
    assert!(
        &got == model || maybe.is_some_and(|m| &got == m),
        "acknowledged sync writes lost: got {got:?}\nwant {model:?}\nor {maybe:?}"
    );
}

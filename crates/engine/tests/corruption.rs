//! DB-level corruption campaign on the real file system.
//!
//! A fixture database is built once with known contents: SSTs at L0 and at the bottom level
//! (with range tombstones), and a WAL holding unflushed batches. Then, for each file type (WAL,
//! the parts of an SST, MANIFEST, CURRENT), many copies of it are damaged (bit flips,
//! truncations, zeroed ranges, swapped SST blocks) and each copy is opened, read key by key,
//! scanned both ways and compacted. Requirements checked on every injection:
//! - no panic, on any thread (a panic hook counts them);
//! - no wrong value: every value returned is the expected one; for WAL damage the database must
//!   equal the state after some prefix of the WAL's batches;
//! - every error is `Corruption` naming the damaged file with an offset inside it (CURRENT
//!   problems may also be NotFound/InvalidArgument);
//! - WAL damage that loses data is reported in `talus.recovery-report` under
//!   PointInTimeRecovery, and fails the open with Corruption under AbsoluteConsistency (except a
//!   cut exactly at a record boundary, which is a valid shorter log);
//! - an open that fails leaves the directory byte-identical (every name, size and crc32c as
//!   before: no new MANIFEST, no CURRENT change, no SST, no WAL renamed or deleted, LOG as it
//!   was).
//!
//! The table of counts is printed at the end (`cargo test --release --test corruption --
//! --nocapture`). `CORRUPTION_EXHAUSTIVE=1` flips a bit in every byte of every file instead of
//! sampling. A second test truncates the WAL at every byte of its last records (torn tail).

mod common;

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

use common::corrupt::{
    copy_dir, dir_snapshot, install_panic_counter, panic_count, panic_messages, snapshot_diff,
    sst_layout, Injection, Region, SstPart, Tally, Verdict,
};
use common::{write_ops, Model, WriteOp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::{Db, Error, Options, ReadOptions, WalRecoveryMode};

const NUM_KEYS: usize = 700;

fn key(i: usize) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// A value that names its key and version, padded with (compressible) filler.
fn value(i: usize, version: usize, len: usize) -> Vec<u8> {
    let mut v = format!("k{i:04}=v{version}:").into_bytes();
    v.extend((0..len).map(|j| b'a' + ((i + j / 7) % 26) as u8));
    v
}

/// Every key the fixture can hold, and a few it never does.
fn universe() -> Vec<Vec<u8>> {
    let mut u: Vec<Vec<u8>> = (0..NUM_KEYS).map(key).collect();
    u.extend([b"".to_vec(), b"a".to_vec(), b"k".to_vec(), b"k0500x".to_vec(), b"z".to_vec()]);
    u
}

/// The options every damaged copy is opened with: direct reads, and (for the files written
/// after the bottom level) partitioned index and filters with small partitions.
fn options(mode: WalRecoveryMode) -> Options {
    Options {
        create_if_missing: false,
        write_buffer_size: 8 << 20,
        disable_auto_compactions: true,
        block_size: 256,
        target_file_size_base: 8 << 10,
        max_background_jobs: 1,
        wal_recovery_mode: mode,
        use_direct_reads: true,
        index_type: talus::IndexType::TwoLevelIndexSearch,
        partition_filters: true,
        metadata_block_size: 64,
        ..Default::default()
    }
}

/// The options the bottom level is written with: one index and one filter block per table
/// (format version 2), so the fixture holds both table layouts.
fn unpartitioned(mode: WalRecoveryMode) -> Options {
    Options {
        use_direct_reads: false,
        index_type: talus::IndexType::BinarySearch,
        partition_filters: false,
        ..options(mode)
    }
}

fn put(k: usize, v: Vec<u8>) -> WriteOp {
    WriteOp::Put(key(k).into(), v.into())
}

/// The pristine database and what it must hold.
struct Fixture {
    dir: tempfile::TempDir,
    /// State before the WAL's batches (index 0) and after each of them.
    wal_states: Vec<Model>,
    /// File names.
    wal: String,
    manifest: String,
    /// Live SSTs: name and regions.
    ssts: Vec<(String, Vec<Region>)>,
    /// Every value ever written, per key (to tell a stale value from a wrong one).
    history: HashMap<Vec<u8>, HashSet<Vec<u8>>>,
}

impl Fixture {
    fn final_state(&self) -> &Model {
        self.wal_states.last().expect("states")
    }
}

fn apply_all(db: &Db, m: &mut Model, ops: &[WriteOp]) {
    write_ops(db, ops, false).expect("write");
    for op in ops {
        op.apply(m);
    }
}

/// The numbers of the SSTs the MANIFEST in `dir` names (read from a throwaway copy).
fn live_ssts(dir: &Path) -> HashSet<u64> {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(dir, tmp.path());
    let fs: std::sync::Arc<dyn talus::fs::Fs> = std::sync::Arc::new(talus::fs::StdFs);
    let vs = talus::version::VersionSet::recover(tmp.path(), fs, 7).expect("recover");
    let v = vs.current();
    (0..v.num_levels()).flat_map(|l| v.level_files(l).iter().map(|f| f.number)).collect()
}

fn build_fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(
        dir.path(),
        Options { create_if_missing: true, ..unpartitioned(Default::default()) },
    )
    .expect("open");
    let mut m = Model::new();
    let mut rng = StdRng::seed_from_u64(0xC0FFEE);
    // Bottom level: two flushes compacted together (range tombstone and deletions included).
    for chunk in (0..400).collect::<Vec<_>>().chunks(20) {
        let ops: Vec<_> = chunk.iter().map(|&i| put(i, value(i, 1, 20 + i % 40))).collect();
        apply_all(&db, &mut m, &ops);
    }
    db.flush().expect("flush");
    for i in 200..600 {
        apply_all(&db, &mut m, &[put(i, value(i, 2, 10 + i % 50))]);
    }
    apply_all(&db, &mut m, &[WriteOp::DeleteRange(key(100).into(), key(150).into())]);
    for i in (0..100).step_by(7) {
        apply_all(&db, &mut m, &[WriteOp::Delete(key(i).into())]);
    }
    db.flush().expect("flush");
    db.compact_range(None, None).expect("compact");
    // L0, partitioned: two more files, one with a range tombstone over bottom-level data.
    drop(db);
    let db = Db::open(dir.path(), options(Default::default())).expect("reopen partitioned");
    for i in (300..500).step_by(2) {
        apply_all(&db, &mut m, &[put(i, value(i, 3, 30))]);
    }
    for i in (500..600).filter(|i| i % 11 == 0) {
        apply_all(&db, &mut m, &[WriteOp::Delete(key(i).into())]);
    }
    db.flush().expect("flush");
    apply_all(&db, &mut m, &[WriteOp::DeleteRange(key(450).into(), key(470).into())]);
    for i in 50..80 {
        apply_all(&db, &mut m, &[put(i, value(i, 4, 5))]);
    }
    db.flush().expect("flush");
    assert!(db.property("talus.num-files-at-level0").expect("prop").parse::<usize>().unwrap() >= 2);
    // The WAL: batches of puts, deletes and a few range deletions, some values large enough
    // for records to span the 32 KiB WAL blocks.
    let mut wal_states = vec![m.clone()];
    for b in 0..60usize {
        let mut ops = Vec::new();
        for _ in 0..rng.gen_range(1..6) {
            let i = rng.gen_range(0..NUM_KEYS);
            ops.push(match rng.gen_range(0..10) {
                0..=6 => {
                    let len = if rng.gen_bool(0.1) { rng.gen_range(2000..9000) } else { 40 };
                    put(i, value(i, 10 + b, len))
                }
                7 | 8 => WriteOp::Delete(key(i).into()),
                _ => WriteOp::DeleteRange(key(i).into(), key(i + 5).into()),
            });
        }
        apply_all(&db, &mut m, &ops);
        wal_states.push(m.clone());
    }
    drop(db);
    let mut history: HashMap<Vec<u8>, HashSet<Vec<u8>>> = HashMap::new();
    for state in &wal_states {
        for (k, v) in state {
            history.entry(k.clone()).or_default().insert(v.clone());
        }
    }
    for i in 0..NUM_KEYS {
        for ver in [1, 2, 3, 4] {
            for len in 0..80 {
                history.entry(key(i)).or_default().insert(value(i, ver, len));
            }
        }
    }

    let live = live_ssts(dir.path());
    let mut wal = None;
    let mut manifest = None;
    let mut ssts = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let path = dir.path().join(&name);
        let len = std::fs::metadata(&path).expect("metadata").len();
        if name.ends_with(".log") && len > 0 {
            assert!(wal.is_none(), "one non-empty WAL expected");
            wal = Some(name);
        } else if name.starts_with("MANIFEST-") {
            manifest = Some(name);
        } else if name.ends_with(".sst")
            && live.contains(&name.trim_end_matches(".sst").parse().expect("number"))
        {
            let bytes = std::fs::read(&path).expect("read sst");
            let layout = sst_layout(&bytes, &name);
            ssts.push((name, layout));
        }
    }
    let fx = Fixture {
        dir,
        wal_states,
        wal: wal.expect("a WAL"),
        manifest: manifest.expect("a MANIFEST"),
        ssts,
        history,
    };
    // The pristine copy reads back exactly.
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(fx.dir.path(), tmp.path());
    let db = Db::open(tmp.path(), options(Default::default())).expect("open pristine");
    let got = read_all_gets(&db).expect("pristine reads");
    assert!(&got == fx.final_state(), "pristine fixture differs from the model");
    fx
}

fn read_all_gets(db: &Db) -> talus::Result<Model> {
    let mut m = Model::new();
    for k in universe() {
        if let Some(v) = db.get(&k)? {
            m.insert(k, v);
        }
    }
    Ok(m)
}

/// One injection: which row of the table, which file, what damage.
struct Case {
    row: &'static str,
    file: String,
    inj: Injection,
    mode: WalRecoveryMode,
}

/// Checks an error against the case: `Ok` if it is well-formed.
fn check_error(e: &Error, case: &Case, file_len: u64, what: &str) -> Result<(), String> {
    let bad = || Err(format!("{what}: badly formed error for {} {:?}: {e}", case.file, case.inj));
    match e {
        Error::Corruption { file, offset, .. } => {
            let names_it = file.contains(case.file.as_str());
            // A MANIFEST rolled back to a version whose SSTs were since deleted.
            let names_sst = case.row == "MANIFEST" && file.ends_with(".sst");
            if case.row == "CURRENT" || names_sst || (names_it && *offset <= file_len) {
                Ok(())
            } else {
                bad()
            }
        }
        Error::NotFound(_) | Error::InvalidArgument(_) if case.row == "CURRENT" => Ok(()),
        Error::BackgroundError(inner)
            if inner.is_corruption() && inner.to_string().contains(&case.file) =>
        {
            Ok(())
        }
        _ => bad(),
    }
}

/// Keeps the candidate states that agree with the items a scan returned before ending (an
/// error may cut a scan short: what it returned must then be a prefix).
fn filter_scan(
    cands: &mut Vec<usize>,
    states: &[Model],
    items: &[(Vec<u8>, Vec<u8>)],
    complete: bool,
    reverse: bool,
) {
    cands.retain(|&c| {
        let want: Vec<(&Vec<u8>, &Vec<u8>)> =
            if reverse { states[c].iter().rev().collect() } else { states[c].iter().collect() };
        (items.len() == want.len() || (!complete && items.len() < want.len()))
            && items.iter().zip(want).all(|(a, b)| (&a.0, &a.1) == b)
    });
}

/// Runs the reads of one case; returns the verdict or a failure description.
fn check_case(fx: &Fixture, dir: &Path, case: &Case, file_len: u64) -> Result<Verdict, String> {
    let is_wal = case.file == fx.wal;
    let states: &[Model] =
        if is_wal { &fx.wal_states } else { std::slice::from_ref(fx.final_state()) };
    let mut cands: Vec<usize> = (0..states.len()).collect();
    // A value never written for its key (or a key never written) was returned.
    let garbage = std::cell::Cell::new(false);
    let note = |k: &[u8], v: &[u8]| {
        if !fx.history.get(k).is_some_and(|h| h.contains(v)) {
            garbage.set(true);
        }
    };
    let before = dir_snapshot(dir);
    let db = match Db::open(dir, options(case.mode)) {
        Ok(db) => db,
        Err(e) => {
            let changed = snapshot_diff(&before, &dir_snapshot(dir));
            if !changed.is_empty() {
                return Err(format!(
                    "{} {:?} ({:?}): the failed open ({e}) changed the directory:\n{changed}",
                    case.file, case.inj, case.mode
                ));
            }
            return check_error(&e, case, file_len, "open").map(|()| Verdict::Detected);
        }
    };
    let report = db.property("talus.recovery-report").unwrap_or_default();
    let mut detected = !report.is_empty();
    // Point reads.
    let gets = |cands: &mut Vec<usize>, detected: &mut bool, what: &str| -> Result<(), String> {
        for k in universe() {
            match db.get(&k) {
                Ok(v) => {
                    if let Some(v) = &v {
                        note(&k, v);
                    }
                    cands.retain(|&c| states[c].get(&k) == v.as_ref())
                }
                Err(e) => {
                    check_error(&e, case, file_len, what)?;
                    *detected = true;
                }
            }
        }
        Ok(())
    };
    gets(&mut cands, &mut detected, "get")?;
    // Scans both ways.
    for reverse in [false, true] {
        let it = db.iter(&ReadOptions::default());
        let mut items = Vec::new();
        let mut complete = true;
        let mut step = |r: talus::Result<(Vec<u8>, Vec<u8>)>| match r {
            Ok(kv) => {
                note(&kv.0, &kv.1);
                items.push(kv);
                Ok(true)
            }
            Err(e) => {
                complete = false;
                check_error(&e, case, file_len, "scan").map(|()| false)
            }
        };
        if reverse {
            for r in it.rev() {
                if !step(r)? {
                    break;
                }
            }
        } else {
            for r in it {
                if !step(r)? {
                    break;
                }
            }
        }
        detected |= !complete;
        filter_scan(&mut cands, states, &items, complete, reverse);
    }
    // Compaction, then the point reads again (a compaction must not drop or invent data).
    match db.compact_range(None, None) {
        Ok(()) => gets(&mut cands, &mut detected, "get after compaction")?,
        Err(e) => {
            check_error(&e, case, file_len, "compact_range")?;
            detected = true;
        }
    }
    drop(db);
    let Some(&best) = cands.last() else {
        // A MANIFEST that lost its tail reads as a torn last edit and rolls back silently.
        let tail_lost = match case.inj {
            Injection::Truncate(_) => true,
            Injection::Zero(s, n) => s + n >= file_len,
            _ => false,
        };
        if case.file == fx.manifest && tail_lost && !garbage.get() {
            return Ok(Verdict::Stale);
        }
        return Err(format!(
            "{} {:?}: wrong values (no consistent state; never-written values: {})",
            case.file,
            case.inj,
            garbage.get()
        ));
    };
    let lost = best + 1 < states.len();
    if !lost {
        return Ok(if detected { Verdict::Detected } else { Verdict::Harmless });
    }
    // Only WAL damage can lose data without an error.
    if case.mode == WalRecoveryMode::PointInTimeRecovery && detected {
        return Ok(Verdict::Detected);
    }
    if matches!(case.inj, Injection::Truncate(_)) && !detected {
        return Ok(Verdict::SilentPrefix);
    }
    Err(format!(
        "{} {:?} ({:?}): recovered the state after {best} of {} WAL batches; report {report:?}",
        case.file,
        case.inj,
        case.mode,
        states.len() - 1
    ))
}

fn run_case(fx: &Fixture, base: &Path, case: &Case, tally: &mut Tally) {
    let dir = tempfile::tempdir_in(base).expect("tempdir");
    copy_dir(fx.dir.path(), dir.path());
    let path = dir.path().join(&case.file);
    let file_len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    case.inj.inject(&path);
    let before = panic_count();
    let r =
        std::panic::catch_unwind(AssertUnwindSafe(|| check_case(fx, dir.path(), case, file_len)));
    let verdict = match r {
        _ if panic_count() > before => {
            tally.failures.push(format!("PANIC: {} {:?} ({:?})", case.file, case.inj, case.mode));
            Verdict::Panic
        }
        Ok(Ok(v)) => v,
        Ok(Err(msg)) => {
            let v = if msg.contains("badly formed") { Verdict::BadError } else { Verdict::Wrong };
            tally.failures.push(msg);
            v
        }
        Err(_) => Verdict::Panic,
    };
    tally.add(case.row, case.inj.kind(), verdict);
}

/// Generates the cases: `n` of each kind per file type (or every byte when exhaustive).
fn cases(fx: &Fixture, n: usize, exhaustive: bool, rng: &mut StdRng) -> Vec<Case> {
    let len_of = |name: &str| std::fs::metadata(fx.dir.path().join(name)).expect("meta").len();
    let mut out = Vec::new();
    let mut push = |row: &'static str, file: &str, inj: Injection, mode: WalRecoveryMode| {
        out.push(Case { row, file: file.to_string(), inj, mode })
    };
    // Flips, truncations and zeroed ranges over [start, end) of `file`.
    let damage = |start: u64, end: u64, rng: &mut StdRng| {
        let mut v = Vec::new();
        if exhaustive {
            v.extend((start..end).map(|b| Injection::FlipBit(b * 8 + (b * 5 + 3) % 8)));
        } else {
            v.extend((0..n).map(|_| Injection::FlipBit(rng.gen_range(start * 8..end * 8))));
        }
        for _ in 0..n.div_ceil(3) {
            v.push(Injection::Truncate(rng.gen_range(start..end)));
            v.push(Injection::Zero(rng.gen_range(start..end), rng.gen_range(1..64)));
        }
        v
    };
    let wal_len = len_of(&fx.wal);
    for (row, mode) in [
        ("wal (point-in-time)", WalRecoveryMode::PointInTimeRecovery),
        ("wal (absolute)", WalRecoveryMode::AbsoluteConsistency),
    ] {
        for inj in damage(0, wal_len, rng) {
            push(row, &fx.wal, inj, mode);
        }
    }
    let pit = WalRecoveryMode::PointInTimeRecovery;
    for inj in damage(0, len_of(&fx.manifest), rng) {
        push("MANIFEST", &fx.manifest, inj, pit);
    }
    for part in [
        SstPart::Data,
        SstPart::Index,
        SstPart::Filter,
        SstPart::IndexPartition,
        SstPart::FilterPartition,
        SstPart::RangeDel,
        SstPart::Meta,
        SstPart::Footer,
    ] {
        let regions: Vec<(&String, &Region)> = fx
            .ssts
            .iter()
            .flat_map(|(name, rs)| rs.iter().filter(|r| r.part == part).map(move |r| (name, r)))
            .collect();
        assert!(!regions.is_empty(), "no {part:?} region in the fixture");
        if exhaustive {
            for (name, r) in &regions {
                for inj in damage(r.start, r.end, rng) {
                    push(part.label(), name, inj, pit);
                }
            }
        } else {
            // Spread the samples over the regions (several SSTs, L0 and the bottom level).
            for i in 0..n {
                let (name, r) = regions[(i * 7 + rng.gen_range(0..regions.len())) % regions.len()];
                let inj = match i % 6 {
                    0 => Injection::Truncate(rng.gen_range(r.start..r.end)),
                    1 => Injection::Zero(rng.gen_range(r.start..r.end), rng.gen_range(1..64)),
                    _ => Injection::FlipBit(rng.gen_range(r.start * 8..r.end * 8)),
                };
                push(part.label(), name, inj, pit);
            }
        }
    }
    // Swapped pairs of blocks (data blocks mostly, any block sometimes).
    for i in 0..n {
        let (name, rs) = &fx.ssts[i % fx.ssts.len()];
        let blocks: Vec<&Region> = rs
            .iter()
            .filter(|r| r.part != SstPart::Footer && (i % 3 == 0 || r.part == SstPart::Data))
            .collect();
        if blocks.len() < 2 {
            continue;
        }
        let a = rng.gen_range(0..blocks.len() - 1);
        let b = rng.gen_range(a + 1..blocks.len());
        let (a, b) = (blocks[a], blocks[b]);
        push("sst-swapped-blocks", name, Injection::Swap(a.start, a.end, b.start, b.end), pit);
    }
    // CURRENT: every bit, every truncation, missing, and plausible-but-wrong contents.
    let cur_len = len_of("CURRENT");
    for bit in 0..cur_len * 8 {
        push("CURRENT", "CURRENT", Injection::FlipBit(bit), pit);
    }
    for l in 0..cur_len {
        push("CURRENT", "CURRENT", Injection::Truncate(l), pit);
    }
    push("CURRENT", "CURRENT", Injection::Zero(0, cur_len), pit);
    push("CURRENT", "CURRENT", Injection::Delete, pit);
    for c in [&b"MANIFEST-999999\n"[..], b"MANIFEST-000001", b"garbage", b"\n"] {
        push("CURRENT", "CURRENT", Injection::Replace(c.to_vec()), pit);
    }
    out
}

#[test]
fn corruption_campaign() {
    install_panic_counter();
    let exhaustive = std::env::var("CORRUPTION_EXHAUSTIVE").is_ok_and(|v| v == "1");
    let n: usize = std::env::var("CORRUPTION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 40 } else { 300 });
    let fx = build_fixture();
    // Cases run on tmpfs when there is one (fsync is free there); CORRUPTION_TMPDIR overrides.
    let base: PathBuf = match std::env::var_os("CORRUPTION_TMPDIR") {
        Some(d) => d.into(),
        None if Path::new("/dev/shm").is_dir() => "/dev/shm".into(),
        None => std::env::temp_dir(),
    };
    let mut rng = StdRng::seed_from_u64(42);
    let cases = cases(&fx, n, exhaustive, &mut rng);
    let start = std::time::Instant::now();
    let mut tally = Tally::default();
    for case in &cases {
        run_case(&fx, &base, case, &mut tally);
    }
    println!(
        "\ncorruption campaign: {} injections in {:.1} s (fixture: {} SSTs, WAL {}, {}{})",
        cases.len(),
        start.elapsed().as_secs_f64(),
        fx.ssts.len(),
        fx.wal,
        fx.manifest,
        if exhaustive { ", exhaustive" } else { "" }
    );
    println!("{}", tally.render());
    for f in tally.failures.iter().take(30) {
        println!("FAILURE: {f}");
    }
    for p in panic_messages() {
        println!("PANIC MESSAGE: {p}");
    }
    let fails: u64 = tally.rows.values().map(|r| r.wrong + r.bad_errors + r.panics).sum();
    assert_eq!(fails, 0, "wrong values, badly formed errors or panics (see above)");
    for (name, r) in &tally.rows {
        if name.starts_with("sst") || *name == "MANIFEST" {
            assert!(r.detected > 0, "{name}: nothing detected");
        }
    }
}

/// A torn WAL tail: the WAL cut at every byte of its last records (near every fragment boundary
/// and at a stride elsewhere; every byte with `CORRUPTION_EXHAUSTIVE=1`). Under
/// PointInTimeRecovery and TolerateCorruptedTailRecords, recovery keeps exactly the records
/// that end before the cut, and reports a drop exactly when the cut falls inside a record.
#[test]
fn torn_wal_tail_keeps_every_complete_record() {
    install_panic_counter();
    let exhaustive = std::env::var("CORRUPTION_EXHAUSTIVE").is_ok_and(|v| v == "1");
    let dir = tempfile::tempdir().expect("tempdir");
    let db =
        Db::open(dir.path(), Options { create_if_missing: true, ..options(Default::default()) })
            .expect("open");
    // ~30 KiB of 1 KiB batches, then one that crosses the first 32 KiB block boundary (FIRST +
    // LAST fragments), then small ones.
    let sizes: Vec<usize> = (0..30).map(|_| 1000).chain([3000, 60, 200, 10]).collect();
    let mut m = Model::new();
    let mut states = vec![m.clone()];
    for (b, &len) in sizes.iter().enumerate() {
        let ops = [put(b % 40, value(b % 40, b, len)), WriteOp::Delete(key(100 + b % 7).into())];
        apply_all(&db, &mut m, &ops);
        states.push(m.clone());
    }
    drop(db);
    let wal = std::fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "log")
                && std::fs::metadata(p).is_ok_and(|m| m.len() > 0)
        })
        .expect("a WAL");
    let wal_name = wal.file_name().expect("name").to_string_lossy().into_owned();
    let bytes = std::fs::read(&wal).expect("read WAL");
    let (records, bounds) = common::corrupt::wal_layout(&bytes);
    assert_eq!(records.len(), sizes.len(), "one record per batch");
    assert!(records.iter().any(|&(s, e)| s / 32768 != (e - 1) / 32768), "a record spans blocks");
    let first = records[records.len() - 4].0;
    let near = |c: u64| bounds.iter().any(|&b| b.abs_diff(c) <= 8);
    let cuts: Vec<u64> =
        (first..=bytes.len() as u64).filter(|&c| exhaustive || near(c) || c % 13 == 0).collect();
    let base = std::env::temp_dir();
    let (mut runs, mut reported) = (0, 0);
    for &cut in &cuts {
        let complete = records.iter().filter(|&&(_, e)| e <= cut).count();
        let partial = records.iter().any(|&(s, e)| s < cut && cut < e);
        for mode in
            [WalRecoveryMode::PointInTimeRecovery, WalRecoveryMode::TolerateCorruptedTailRecords]
        {
            let case = tempfile::tempdir_in(&base).expect("tempdir");
            copy_dir(dir.path(), case.path());
            Injection::Truncate(cut).inject(&case.path().join(&wal_name));
            let db = Db::open(case.path(), options(mode))
                .unwrap_or_else(|e| panic!("cut at {cut} ({mode:?}): open failed: {e}"));
            let got = read_all_gets(&db).expect("reads");
            assert!(
                got == states[complete],
                "cut at {cut} ({mode:?}): not the state after the {complete} complete records:\n{}",
                common::diff(&got, &states[complete])
            );
            let report = db.property("talus.recovery-report").unwrap_or_default();
            assert_eq!(!report.is_empty(), partial, "cut at {cut} ({mode:?}): report {report:?}");
            runs += 1;
            reported += usize::from(partial);
        }
    }
    assert_eq!(panic_count(), 0, "panics: {:?}", panic_messages());
    println!(
        "torn WAL tail: {runs} recoveries over {} cut points, {reported} reported a drop",
        cuts.len()
    );
}

/// Regression (found by the campaign): a bit flip in a record's length field that makes it run
/// past the end of the file was taken for a torn tail, so the MANIFEST silently lost that edit
/// and every later one (the database rolled back), and a WAL under TolerateCorruptedTailRecords
/// dropped the records after it as a "torn tail". Now both are Corruption.
#[test]
fn length_flip_is_not_a_torn_tail() {
    install_panic_counter();
    let fx = build_fixture();
    let base = std::env::temp_dir();
    let targets = [
        (fx.manifest.clone(), WalRecoveryMode::PointInTimeRecovery),
        (fx.wal.clone(), WalRecoveryMode::TolerateCorruptedTailRecords),
    ];
    let mut tried = 0;
    for (file, mode) in targets {
        let bytes = std::fs::read(fx.dir.path().join(&file)).expect("read");
        let (records, bounds) = common::corrupt::wal_layout(&bytes);
        // Header starts of every fragment but the file's last record.
        let last_start = records.last().expect("records").0;
        let headers: Vec<u64> =
            bounds.iter().step_by(2).copied().filter(|&h| h < last_start).collect();
        for h in headers {
            // A flip of the length field that keeps the fragment inside its 32 KiB block but
            // runs it past the end of the file.
            let at = h as usize;
            let len = u64::from(u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]));
            let fits = |l: u64| h % 32768 + 7 + l <= 32768 && h + 7 + l > bytes.len() as u64;
            let Some(bit) = (0..16).find(|&b| fits(len ^ (1 << b))) else { continue };
            let case = tempfile::tempdir_in(&base).expect("tempdir");
            copy_dir(fx.dir.path(), case.path());
            Injection::FlipBit((h + 4) * 8 + bit).inject(&case.path().join(&file));
            match Db::open(case.path(), options(mode)) {
                Err(Error::Corruption { file: f, offset, .. }) => {
                    assert!(f.contains(&file) && offset <= h, "{file} header {h}: {f} {offset}")
                }
                Err(e) => panic!("{file} header {h}: {e}"),
                Ok(db) => panic!(
                    "{file} header {h}: opened; report {:?}",
                    db.property("talus.recovery-report")
                ),
            }
            tried += 1;
        }
    }
    assert!(tried > 5, "only {tried} headers");
    assert_eq!(panic_count(), 0, "panics: {:?}", panic_messages());
}

/// Writes the fuzzers' seed files to `$FUZZ_SEEDS_DIR`: `FUZZ_SEEDS_DIR=fuzz/seeds cargo test
/// --release -p talus --test corruption write_fuzz_seeds -- --ignored` (for `sst_open_scan` an
/// SST with a range tombstone in format version 2 (crc32c), the same data as a partitioned
/// version-3 table, `partitioned-*.sst`, and as a version-4 table (XXH3, the default),
/// `xxh3-*.sst`; a WAL for `wal_replay`).
#[test]
#[ignore]
fn write_fuzz_seeds() {
    let out = PathBuf::from(std::env::var_os("FUZZ_SEEDS_DIR").expect("FUZZ_SEEDS_DIR"));
    let crc = talus::ChecksumType::Crc32c;
    for (prefix, opts) in [
        ("", Options { checksum: crc, ..unpartitioned(Default::default()) }),
        (
            "partitioned-",
            Options { metadata_block_size: 32, checksum: crc, ..options(Default::default()) },
        ),
        ("xxh3-", unpartitioned(Default::default())),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open(dir.path(), Options { create_if_missing: true, ..opts }).expect("open");
        let mut m = Model::new();
        for i in 0..24 {
            apply_all(&db, &mut m, &[put(i, value(i, 1, i % 9))]);
        }
        apply_all(&db, &mut m, &[WriteOp::DeleteRange(key(3).into(), key(6).into())]);
        apply_all(&db, &mut m, &[WriteOp::Delete(key(9).into())]);
        db.flush().expect("flush");
        for i in 0..6 {
            apply_all(&db, &mut m, &[put(i, value(i, 2, 3)), WriteOp::Delete(key(i + 10).into())]);
        }
        drop(db);
        for e in std::fs::read_dir(dir.path()).expect("read dir") {
            let p = e.expect("entry").path();
            let target = match p.extension().and_then(|e| e.to_str()) {
                Some("sst") => "sst_open_scan",
                Some("log")
                    if prefix.is_empty() && std::fs::metadata(&p).is_ok_and(|m| m.len() > 0) =>
                {
                    "wal_replay"
                }
                _ => continue,
            };
            let to = out.join(target);
            std::fs::create_dir_all(&to).expect("mkdir");
            let name = format!("{prefix}{}", p.file_name().expect("name").to_string_lossy());
            std::fs::copy(&p, to.join(name)).expect("copy");
        }
    }
}

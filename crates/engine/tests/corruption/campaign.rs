//! The corruption campaign: many damaged copies of each file of the fixture (WAL under two
//! recovery modes, MANIFEST, CURRENT, each part of an SST, swapped SST blocks), each opened,
//! read, scanned both ways and compacted, with every outcome checked and tallied.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus::{Db, Error, ReadOptions, WalRecoveryMode};

use crate::common::corrupt::{
    copy_dir, dir_snapshot, install_panic_counter, panic_count, panic_messages, snapshot_diff,
    Injection, Region, SstPart, Tally, Verdict,
};
use crate::common::Model;
use crate::fixture::{build_fixture, options, universe, Fixture};

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
    let sum =
        |f: fn(&crate::common::corrupt::Row) -> u64| -> u64 { tally.rows.values().map(f).sum() };
    // One line for scripts (bench/crash_campaign.sh).
    println!(
        "corruption totals: injections={} wrong={} bad_errors={} panics={}",
        cases.len(),
        sum(|r| r.wrong),
        sum(|r| r.bad_errors),
        sum(|r| r.panics)
    );
    let fails: u64 = tally.rows.values().map(|r| r.wrong + r.bad_errors + r.panics).sum();
    assert_eq!(fails, 0, "wrong values, badly formed errors or panics (see above)");
    for (name, r) in &tally.rows {
        if name.starts_with("sst") || *name == "MANIFEST" {
            assert!(r.detected > 0, "{name}: nothing detected");
        }
    }
}

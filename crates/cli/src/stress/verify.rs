//! Whole-database verification against the expected state, run with no writer active: at the
//! start of every worker run (after recovery from whatever killed the previous one) and at the
//! end of a workload.
//!
//! Every key is read with `get` and judged by [`judge`]; then a forward and a backward scan of
//! the whole database must return exactly the keys and versions the gets saw (and nothing
//! outside the key space). At startup, keys left pending by a crash are resolved to what the
//! database holds and written back to the expected state, so the next run starts exact.
//!
//! Strictness comes from the [`Mode`] of the last run that wrote: after `sync=1` (and, with
//! `--strict_unsynced=1`, after `sync=0`: a process crash must not lose acknowledged writes)
//! every non-pending key must hold exactly its expected state and a pending one its old or its
//! pending state. After a `disable_wal=1` run (or `sync=0` with `--strict_unsynced=0`) a crash
//! may lose a suffix of writes, so a key may hold any valid version up to the expected one, or
//! be absent; that is counted as `lost_allowed`, and the expected state adopts what was found.

use std::time::{Duration, Instant};

use talus::{Db, ReadOptions};

use super::config::Config;
use super::expected::{ExpectedState, Mode, Slot};
use super::families::Families;
use super::value::{check_value, key_id};
use super::Failure;

/// How one key's state compares with what was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Acceptable; `slot` is the expected state that matches the database now, and
    /// `lost` says an acknowledged write is missing (allowed only in lossy mode).
    Ok {
        /// The resolved expected state (no pending bit).
        slot: Slot,
        /// An older state than the expected one was found.
        lost: bool,
    },
    /// Strict mode: an older state than acknowledged (a lost acknowledged write).
    Lost,
    /// A state no write could have produced.
    Wrong,
}

/// Judges `observed` (the version read, `None` for absent) against `slot`.
pub fn judge(slot: Slot, observed: Option<u32>, lossy: bool) -> Verdict {
    if slot.pending() && observed == slot.pending_value() {
        return Verdict::Ok { slot: slot.committed(), lost: false };
    }
    if observed == slot.value() {
        return Verdict::Ok { slot: Slot::new(slot.version(), slot.exists()), lost: false };
    }
    let newest = slot.version().wrapping_add(u32::from(slot.pending()));
    match observed {
        Some(v) if v > newest => Verdict::Wrong,
        Some(v) if lossy => Verdict::Ok { slot: Slot::new(v, true), lost: true },
        // Absent in lossy mode: a lost put (or the key was deleted before): keep the version
        // counter where it was, so later writes use fresh versions.
        None if lossy => Verdict::Ok { slot: Slot::new(newest, false), lost: true },
        Some(v) if v < slot.version() => Verdict::Lost,
        None if slot.exists() || (slot.pending() && slot.pending_exists()) => Verdict::Lost,
        _ => Verdict::Wrong,
    }
}

/// Counts of one verification.
#[derive(Debug, Default)]
pub struct Summary {
    keys: u64,
    present: u64,
    pending: u64,
    pending_applied: u64,
    lost_acked: u64,
    lost_allowed: u64,
    wrong: u64,
    scan_mismatch: u64,
    /// The first few failures, described.
    details: Vec<String>,
}

impl Summary {
    fn fail(&mut self, what: String) {
        if self.details.len() < 10 {
            self.details.push(what);
        }
    }
    fn failures(&self) -> u64 {
        self.lost_acked + self.wrong + self.scan_mismatch
    }
    /// The `stress-verify:` line the crash driver parses.
    pub fn line(&self, phase: &str, mode: Mode, took: Duration) -> String {
        format!(
            "stress-verify: phase={phase} mode={} keys={} present={} pending={} \
             pending_applied={} lost_acked={} lost_allowed={} wrong={} scan_mismatch={} ms={}",
            mode.name(),
            self.keys,
            self.present,
            self.pending,
            self.pending_applied,
            self.lost_acked,
            self.lost_allowed,
            self.wrong,
            self.scan_mismatch,
            took.as_millis()
        )
    }
}

/// Verifies every key of `db` against `exp` and prints the summary line. `startup`: the last
/// writer may have crashed (judge by its mode, then resolve pending keys in `exp`); otherwise
/// the workload ended cleanly and everything must match exactly.
pub fn verify_all(
    db: &Db,
    fams: &Families,
    exp: &ExpectedState,
    cfg: &Config,
    startup: bool,
) -> Result<(), Failure> {
    let t0 = Instant::now();
    let mode = exp.mode();
    let lossy = startup
        && match mode {
            Mode::Sync => false,
            Mode::NoSync => !cfg.strict_unsynced,
            Mode::NoWal => true,
        };
    let mut s = Summary { keys: exp.max_key(), ..Summary::default() };
    let mut seen: Vec<Option<u32>> = Vec::with_capacity(exp.max_key() as usize);
    let mut fixes: Vec<(u64, Slot)> = Vec::new();
    for k in 0..exp.max_key() {
        let slot = exp.get(k);
        let got = fams
            .get(db, k, &talus::ReadOptions::default())
            .map_err(|e| Failure::Db(format!("get key {k}: {e}")))?;
        let observed = match got {
            None => None,
            Some(v) => match check_value(k, &v, exp.value_size_max()) {
                Ok(ver) => Some(ver),
                Err(e) => {
                    s.wrong += 1;
                    s.fail(format!("key {k}: bad value: {e}"));
                    seen.push(None);
                    continue;
                }
            },
        };
        seen.push(observed);
        s.present += u64::from(observed.is_some());
        s.pending += u64::from(slot.pending());
        match judge(slot, observed, lossy) {
            Verdict::Ok { slot: resolved, lost } => {
                s.lost_allowed += u64::from(lost);
                if slot.pending() && resolved.version() != slot.version() {
                    s.pending_applied += 1;
                }
                if resolved != slot {
                    fixes.push((k, resolved));
                }
            }
            Verdict::Lost => {
                s.lost_acked += 1;
                s.fail(format!(
                    "key {k}: LOST acknowledged write: expected {slot:?} ({}), found {observed:?}",
                    describe(slot)
                ));
            }
            Verdict::Wrong => {
                s.wrong += 1;
                s.fail(format!("key {k}: expected {}, found {observed:?}", describe(slot)));
            }
        }
    }
    for family in 0..fams.count() {
        let scan_of = Scan { db, fams, family, seen: &seen, cfg, vmax: exp.value_size_max() };
        scan_of.run(&mut s, false)?;
        scan_of.run(&mut s, true)?;
    }
    let phase = if startup { "startup" } else { "final" };
    println!("{}", s.line(phase, mode, t0.elapsed()));
    if s.failures() > 0 {
        for d in &s.details {
            eprintln!("talus stress: {d}");
        }
        return Err(Failure::Verify(format!(
            "{phase} verification: {} lost acknowledged writes, {} wrong values, {} scan mismatches",
            s.lost_acked, s.wrong, s.scan_mismatch
        )));
    }
    for (k, slot) in fixes {
        exp.store(k, slot).map_err(Failure::Db)?;
    }
    Ok(())
}

fn describe(slot: Slot) -> String {
    let state = |v: Option<u32>, ver: u32| match v {
        Some(v) => format!("version {v}"),
        None => format!("absent (version {ver})"),
    };
    let mut d = state(slot.value(), slot.version());
    if slot.pending() {
        d.push_str(" or pending ");
        d.push_str(&state(slot.pending_value(), slot.version().wrapping_add(1)));
    }
    d
}

/// A whole scan of one column family.
struct Scan<'a> {
    db: &'a Db,
    fams: &'a Families,
    /// The family scanned (its keys are those `fams` puts there).
    family: u64,
    /// What `get` returned for each key.
    seen: &'a [Option<u32>],
    cfg: &'a Config,
    vmax: usize,
}

impl Scan<'_> {
    /// Scans the family (`backward` or forward) and checks that it returns exactly the
    /// versions in `seen` of its keys, in order.
    fn run(&self, s: &mut Summary, backward: bool) -> Result<(), Failure> {
        let Scan { db, fams, family, seen, cfg, vmax } = *self;
        scan(db, fams, family, seen, cfg, vmax, s, backward)
    }
}

#[allow(clippy::too_many_arguments)] // `Scan::run`'s fields, spelled out
fn scan(
    db: &Db,
    fams: &Families,
    family: u64,
    seen: &[Option<u32>],
    cfg: &Config,
    vmax: usize,
    s: &mut Summary,
    backward: bool,
) -> Result<(), Failure> {
    let dir = if backward { "backward" } else { "forward" };
    let ours = |&(k, _): &(u64, u32)| fams.holds(family, k);
    let mut expect =
        seen.iter().enumerate().filter_map(|(k, v)| v.map(|v| (k as u64, v))).filter(ours);
    let mut expect_rev =
        seen.iter().enumerate().rev().filter_map(|(k, v)| v.map(|v| (k as u64, v))).filter(ours);
    let it = fams
        .iter(db, family, &ReadOptions::default())
        .map_err(|e| Failure::Db(format!("{dir} scan: {e}")))?;
    let entries: Box<dyn Iterator<Item = _>> =
        if backward { Box::new(it.rev()) } else { Box::new(it) };
    for e in entries {
        let (key, value) = e.map_err(|e| Failure::Db(format!("{dir} scan: {e}")))?;
        let want = if backward { expect_rev.next() } else { expect.next() };
        let Some(k) = key_id(&key).filter(|&k| k < cfg.max_key) else {
            s.scan_mismatch += 1;
            s.fail(format!("{dir} scan: key {key:02x?} is outside the key space"));
            return Ok(());
        };
        let got = check_value(k, &value, vmax);
        if want != got.as_ref().ok().map(|&v| (k, v)) {
            s.scan_mismatch += 1;
            s.fail(format!("{dir} scan: found key {k} = {got:?}, gets said next is {want:?}"));
            return Ok(());
        }
    }
    let left = if backward { expect_rev.next() } else { expect.next() };
    if let Some((k, v)) = left {
        s.scan_mismatch += 1;
        s.fail(format!("{dir} scan ended before key {k} (version {v}) that get found"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(slot: Slot) -> Verdict {
        Verdict::Ok { slot, lost: false }
    }

    #[test]
    fn strict_judging() {
        let s = Slot::new(5, true);
        assert_eq!(judge(s, Some(5), false), ok(s));
        assert_eq!(judge(s, Some(4), false), Verdict::Lost);
        assert_eq!(judge(s, None, false), Verdict::Lost);
        assert_eq!(judge(s, Some(6), false), Verdict::Wrong);
        let absent = Slot::new(5, false);
        assert_eq!(judge(absent, None, false), ok(absent));
        assert_eq!(judge(absent, Some(5), false), Verdict::Wrong, "a delete's version as a value");
        assert_eq!(judge(absent, Some(3), false), Verdict::Lost);
    }

    #[test]
    fn pending_keys_take_old_or_new() {
        let p = Slot::new(5, true).with_pending(true);
        assert_eq!(judge(p, Some(5), false), ok(Slot::new(5, true)));
        assert_eq!(judge(p, Some(6), false), ok(Slot::new(6, true)));
        assert_eq!(judge(p, None, false), Verdict::Lost);
        assert_eq!(judge(p, Some(7), false), Verdict::Wrong);
        let d = Slot::new(5, true).with_pending(false);
        assert_eq!(judge(d, None, false), ok(Slot::new(6, false)));
        assert_eq!(judge(d, Some(5), false), ok(Slot::new(5, true)));
        assert_eq!(judge(d, Some(6), false), Verdict::Wrong);
    }

    #[test]
    fn lossy_accepts_older_versions_only() {
        let s = Slot::new(5, true);
        assert_eq!(judge(s, Some(3), true), Verdict::Ok { slot: Slot::new(3, true), lost: true });
        assert_eq!(judge(s, None, true), Verdict::Ok { slot: Slot::new(5, false), lost: true });
        assert_eq!(judge(s, Some(6), true), Verdict::Wrong);
        let p = s.with_pending(true);
        assert_eq!(judge(p, Some(6), true), ok(Slot::new(6, true)));
        assert_eq!(judge(p, None, true), Verdict::Ok { slot: Slot::new(6, false), lost: true });
    }
}

//! Whitebox crash testing: the kill points of `talus::kill_point` as `talus stress` drives them,
//! modelled on RocksDB's `db_crashtest.py whitebox` (`--kill_random_test`).
//!
//! A worker given `--kill_random_test=N --kill_points=P,...` arms the points named by those
//! prefixes before it opens anything ([`arm_worker`]); a point that fires prints
//! `talus-kill-point: NAME` and SIGKILLs the worker. The crash driver with `--kill_points`
//! rotates through the armed points, one per cycle, the least killed first ([`Rotation`]),
//! with odds per point ([`odds_for`]: a WAL append passes thousands of times a second, a
//! MANIFEST roll once per open), nudges the cycle's options so the point is reached ([`steer`]: direct writes for the
//! direct-IO point, frequent ingestion for the ingestion points, small memtables for flushes
//! and compactions), and counts the kills per point ([`Tally`]). The timer kill stays as the
//! fallback for a cycle whose point did not fire.

use std::collections::BTreeMap;

/// `--kill_points=all|PREFIX,...`: the prefixes (empty: all). Each must match some point.
pub fn parse_points(v: Option<&str>) -> Result<Vec<String>, String> {
    let Some(v) = v else { return Ok(Vec::new()) };
    if v.is_empty() || v == "all" {
        return Ok(Vec::new());
    }
    let prefixes: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
    for p in &prefixes {
        if !talus::kill_point::POINTS.iter().any(|n| n.starts_with(p.as_str())) {
            return Err(format!(
                "kill_points: {p:?} matches no kill point (they are: {})",
                talus::kill_point::POINTS.join(", ")
            ));
        }
    }
    Ok(prefixes)
}

/// The points `prefixes` select, in [`talus::kill_point::POINTS`] order.
pub fn selected(prefixes: &[String]) -> Vec<&'static str> {
    talus::kill_point::POINTS
        .iter()
        .copied()
        .filter(|n| prefixes.is_empty() || prefixes.iter().any(|p| n.starts_with(p.as_str())))
        .collect()
}

/// Arms the worker's kill points (see the module doc); an error if it asks for them in a build
/// without them.
pub fn arm_worker(kill_random_test: u64, points: &[String], seed: u64) -> Result<(), String> {
    if kill_random_test == 0 {
        return Ok(());
    }
    if !talus::kill_point::arm(kill_random_test, points, seed) {
        return Err("--kill_random_test needs kill points, which this build lacks: build with \
             `cargo build --release -p talus-cli --features kill-points`"
            .into());
    }
    Ok(())
}

/// The odds (1 in N per pass) a cycle targeting `point` uses: about a few seconds of work for
/// the points passed on every write, the first or second pass for the rare ones.
pub fn odds_for(point: &str) -> u64 {
    match point {
        p if p.starts_with("wal.append") => 3_000,
        p if p.starts_with("wal.sync") => 1_000,
        "direct.tail_written" => 3,
        "obsolete.deleting" => 8,
        p if p.starts_with("manifest.roll") || p.starts_with("open.") => 1,
        _ => 2,
    }
}

/// The rotation over the selected points: each cycle targets the point with the fewest kills so
/// far (then the fewest cycles targeted, then list order), so the kills spread evenly and a
/// point that did not fire is tried again before any is tried a third time. Its odds start at
/// [`odds_for`] and halve each time a cycle targeting it ends without it firing (a loaded
/// machine runs fewer writes per cycle), so every point fires within a few tries.
pub struct Rotation {
    points: Vec<&'static str>,
    odds: BTreeMap<&'static str, u64>,
}

impl Rotation {
    /// A rotation over `points`.
    pub fn new(points: Vec<&'static str>) -> Rotation {
        let odds = points.iter().map(|p| (*p, odds_for(p))).collect();
        Rotation { points, odds }
    }
    /// The odds a cycle targeting `point` uses now.
    pub fn odds(&self, point: &str) -> u64 {
        self.odds.get(point).copied().unwrap_or_else(|| odds_for(point))
    }
    /// A cycle targeting `point` ended without it firing: better odds next time.
    pub fn missed(&mut self, point: &str) {
        if let Some(o) = self.odds.get_mut(point) {
            *o = (*o / 2).max(1);
        }
    }
    /// The point the next cycle targets, given the kills so far.
    pub fn next_point(&self, tally: &Tally) -> &'static str {
        self.points
            .iter()
            .enumerate()
            .min_by_key(|(i, p)| (tally.kills(p), tally.targeted(p), *i))
            .map_or("", |(_, p)| *p)
    }
    /// Every point in the rotation.
    pub fn points(&self) -> &[&'static str] {
        &self.points
    }
}

/// The name a worker's output says it was killed at, if it was.
pub fn killed_at(lines: &[String]) -> Option<String> {
    lines.iter().rev().find_map(|l| l.strip_prefix("talus-kill-point: ").map(str::to_string))
}

/// Cycles that targeted each point and kills at each point.
#[derive(Default)]
pub struct Tally {
    targeted: BTreeMap<&'static str, u64>,
    kills: BTreeMap<String, u64>,
}

impl Tally {
    /// Records a cycle that targeted `point` and, if it fired, where the worker died.
    pub fn record(&mut self, point: &'static str, killed: Option<&str>) {
        *self.targeted.entry(point).or_insert(0) += 1;
        if let Some(k) = killed {
            *self.kills.entry(k.to_string()).or_insert(0) += 1;
        }
    }
    /// Cycles that targeted `point`.
    pub fn targeted(&self, point: &str) -> u64 {
        self.targeted.get(point).copied().unwrap_or(0)
    }
    /// Kills at `point`.
    pub fn kills(&self, point: &str) -> u64 {
        self.kills.get(point).copied().unwrap_or(0)
    }
    /// All kills at points.
    pub fn total(&self) -> u64 {
        self.kills.values().sum()
    }
    /// `name=kills/cycles ...` for the summary line.
    pub fn line(&self, points: &[&'static str]) -> String {
        let parts: Vec<String> = points
            .iter()
            .map(|p| format!("{p}={}/{}", self.kills(p), self.targeted.get(p).unwrap_or(&0)))
            .collect();
        parts.join(" ")
    }
    /// The points of `points` never killed at.
    pub fn missed<'a>(&self, points: &'a [&'static str]) -> Vec<&'a str> {
        points.iter().filter(|p| self.kills(p) == 0).copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_select_points_and_unknown_ones_are_refused() {
        assert_eq!(parse_points(Some("all")).unwrap(), Vec::<String>::new());
        assert_eq!(selected(&[]).len(), talus::kill_point::POINTS.len());
        let m = parse_points(Some("manifest")).unwrap();
        let s = selected(&m);
        assert!(s.len() >= 4 && s.iter().all(|p| p.starts_with("manifest.")), "{s:?}");
        let e = parse_points(Some("wal,nonsense")).unwrap_err();
        assert!(e.contains("nonsense") && e.contains("wal.append.before"), "{e}");
    }

    #[test]
    fn the_tally_counts_kills_per_point() {
        let mut t = Tally::default();
        t.record("flush.table_written", Some("flush.table_written"));
        t.record("flush.table_written", None);
        t.record("open.committed", Some("open.committed"));
        let pts = ["flush.table_written", "open.committed", "wal.sync.after"];
        assert_eq!(t.line(&pts), "flush.table_written=1/2 open.committed=1/1 wal.sync.after=0/0");
        assert_eq!(t.missed(&pts), ["wal.sync.after"]);
        assert_eq!(killed_at(&["x".into(), "talus-kill-point: a.b".into()]), Some("a.b".into()));
    }

    #[test]
    fn the_rotation_goes_to_the_least_killed_point() {
        let r = Rotation::new(vec!["a", "b", "c"]);
        let mut t = Tally::default();
        assert_eq!(r.next_point(&t), "a");
        t.record("a", Some("a"));
        assert_eq!(r.next_point(&t), "b");
        t.record("b", None);
        assert_eq!(r.next_point(&t), "c", "b was tried; c not yet");
        t.record("c", Some("c"));
        assert_eq!(r.next_point(&t), "b", "b has no kill yet");
        let mut r = Rotation::new(vec!["wal.append.after"]);
        let start = r.odds("wal.append.after");
        r.missed("wal.append.after");
        assert_eq!(r.odds("wal.append.after"), start / 2);
    }
}

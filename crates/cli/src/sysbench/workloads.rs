//! The microbenchmarks, by the names Mark Callaghan's sysbench harness reports (the reference
//! post's), each with sysbench's own script name as an alias where one exists, and their
//! group for the relative summary (point, range, write).
//!
//! | name | statements per event |
//! | --- | --- |
//! | `point-query` (`oltp_point_select`) | `SELECT c FROM sbtestN WHERE id=?` |
//! | `random-points-pk` (`oltp_inlist_select`) | `SELECT id, k, c, pad ... WHERE id IN (10 ids)` |
//! | `random-points-si` (`select_random_points`) | `SELECT id, k, c, pad ... WHERE k IN (10 values)` |
//! | `hot-points` | `... WHERE id IN (10 ids)`, ids from the first `--hot_points` rows |
//! | `points-covered-pk` | `SELECT id ... WHERE id IN (10 ids)` |
//! | `points-notcovered-pk` | `SELECT id, c ... WHERE id IN (10 ids)` |
//! | `points-covered-si` | `SELECT k ... WHERE k IN (10 values)` (index only) |
//! | `points-notcovered-si` | `SELECT k, c ... WHERE k IN (10 values)` (a row fetch per entry) |
//! | `range-covered-pk.rangeN` | `SELECT id ... WHERE id BETWEEN ? AND ?+N-1` |
//! | `range-pk.rangeN` | `SELECT c ... WHERE id BETWEEN ? AND ?+N-1` (the primary key is clustered: always covering) |
//! | `range-covered-si.rangeN` | `SELECT id, k ... WHERE k BETWEEN ? AND ?+N-1` (index only) |
//! | `range-notcovered-si.rangeN` | `SELECT c ... WHERE k BETWEEN ? AND ?+N-1` (a row fetch per entry) |
//! | `scan` | `SELECT COUNT(*) FROM sbtestN WHERE LENGTH(c) < 0` (every row read) |
//! | `read-only` (`oltp_read_only`) | sysbench's: 10 point selects, 4 range queries, in a transaction |
//! | `read-write` (`oltp_read_write`) | read-only's, plus index/non-index update, delete + insert |
//! | `write-only` (`oltp_write_only`) | the writes of read-write, in a transaction |
//! | `update-index` (`oltp_update_index`) | `UPDATE ... SET k=k+1 WHERE id=?` |
//! | `update-nonindex` (`oltp_update_non_index`) | `UPDATE ... SET c=? WHERE id=?` |
//! | `update-inlist` | `UPDATE ... SET c=? WHERE id IN (10 ids)`, in one transaction |
//! | `update-one` | `UPDATE ... SET c=? WHERE id=1` (every thread on one row) |
//! | `update-zipf` | update-nonindex with ids from the zipfian distribution |
//! | `insert` (`oltp_insert`) | `INSERT` with the next id (as auto-increment) |
//! | `delete` (`oltp_delete`) | `DELETE ... WHERE id=?` |
//!
//! N is 10, 100 or 1000; the IN lists hold `--random_points` values (10). The `points-*`,
//! `range-covered-pk`, `update-*` tests are Mark Callaghan's Lua scripts (`oltp_points_covered`,
//! `oltp_range_covered`, `oltp_inlist_update`; update-one is oltp_update_non_index on one row,
//! update-zipf the same with `--rand-type=zipfian`), named as his harness names them. The
//! primary key is clustered (as in MyRocks), so `covered-pk` and `notcovered-pk` read the same
//! row and differ only in the columns decoded. Ids, range starts and `k` values come from
//! `--rand_type` (sysbench's `rand.default`, uniform unless asked); `k` values are uniform in
//! `1..=table_size` like the ids, so a k range of N values holds about N rows.
//!
//! `NAME.pre` is test NAME run before the writes (post 004 runs the read tests, then the write
//! tests, then the read tests again, and names the first pass `.pre`): any point or range test
//! takes the suffix, and the selection `post004` runs the point and range tests as `.pre`, the
//! write tests, then the point and range tests again.

/// The relative summary's groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Point queries.
    Point,
    /// Range queries (and read-only).
    Range,
    /// Writes.
    Write,
}

impl Group {
    /// The group's name.
    pub fn name(self) -> &'static str {
        match self {
            Group::Point => "point",
            Group::Range => "range",
            Group::Write => "write",
        }
    }
}

/// What one event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One point select.
    PointQuery,
    /// IN list on the primary key.
    RandomPointsPk,
    /// IN list on `k`.
    RandomPointsSi,
    /// IN list on the primary key over a small hot set.
    HotPoints,
    /// IN list on the primary key returning `id` (`covered`) or `id, c`.
    PointsPk {
        /// Only the key columns are returned.
        covered: bool,
    },
    /// IN list on `k` returning `k` from the index alone (`covered`) or `k, c`.
    PointsSi {
        /// Only the index columns are returned (no row fetch).
        covered: bool,
    },
    /// `id BETWEEN` returning `id`.
    RangeCoveredPk(u64),
    /// `id BETWEEN` returning `c`.
    RangePk(u64),
    /// `k BETWEEN` returning `id, k` from the index alone.
    RangeCoveredSi(u64),
    /// `k BETWEEN` returning `c` (a row fetch per entry).
    RangeNotCoveredSi(u64),
    /// A full table scan.
    Scan,
    /// sysbench's oltp_read_only.
    ReadOnly,
    /// sysbench's oltp_read_write.
    ReadWrite,
    /// sysbench's oltp_write_only.
    WriteOnly,
    /// `SET k=k+1`.
    UpdateIndex,
    /// `SET c=?`.
    UpdateNonIndex,
    /// `SET c=? WHERE id IN (...)`.
    UpdateInlist,
    /// `SET c=? WHERE id=1`.
    UpdateOne,
    /// `SET c=?` on a zipfian id.
    UpdateZipf,
    /// One insert.
    Insert,
    /// One delete.
    Delete,
}

/// One microbenchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Test {
    /// Its name in output and results.
    pub name: &'static str,
    /// sysbench's script name, if it has one.
    pub alias: Option<&'static str>,
    /// Its group.
    pub group: Group,
    /// What it does.
    pub kind: Kind,
    /// The `.pre` pass (a read test run before the write tests).
    pub pre: bool,
}

impl Test {
    /// Its name in output and results (`name`, or `name.pre`).
    pub fn label(&self) -> String {
        if self.pre {
            format!("{}.pre", self.name)
        } else {
            self.name.to_string()
        }
    }
}

const fn t(name: &'static str, alias: Option<&'static str>, group: Group, kind: Kind) -> Test {
    Test { name, alias, group, kind, pre: false }
}

/// Every test, in the order `all` runs them (reads first, writes last, delete at the end).
pub const ALL: &[Test] = &[
    t("point-query", Some("oltp_point_select"), Group::Point, Kind::PointQuery),
    t("random-points-pk", Some("oltp_inlist_select"), Group::Point, Kind::RandomPointsPk),
    t("random-points-si", Some("select_random_points"), Group::Point, Kind::RandomPointsSi),
    t("hot-points", None, Group::Point, Kind::HotPoints),
    t("points-covered-pk", None, Group::Point, Kind::PointsPk { covered: true }),
    t("points-covered-si", None, Group::Point, Kind::PointsSi { covered: true }),
    t("points-notcovered-pk", None, Group::Point, Kind::PointsPk { covered: false }),
    t("points-notcovered-si", None, Group::Point, Kind::PointsSi { covered: false }),
    t("range-covered-pk.range10", None, Group::Range, Kind::RangeCoveredPk(10)),
    t("range-covered-pk.range100", None, Group::Range, Kind::RangeCoveredPk(100)),
    t("range-covered-pk.range1000", None, Group::Range, Kind::RangeCoveredPk(1000)),
    t("range-pk.range10", None, Group::Range, Kind::RangePk(10)),
    t("range-pk.range100", None, Group::Range, Kind::RangePk(100)),
    t("range-pk.range1000", None, Group::Range, Kind::RangePk(1000)),
    t("range-covered-si.range10", None, Group::Range, Kind::RangeCoveredSi(10)),
    t("range-covered-si.range100", None, Group::Range, Kind::RangeCoveredSi(100)),
    t("range-covered-si.range1000", None, Group::Range, Kind::RangeCoveredSi(1000)),
    t("range-notcovered-si.range10", None, Group::Range, Kind::RangeNotCoveredSi(10)),
    t("range-notcovered-si.range100", None, Group::Range, Kind::RangeNotCoveredSi(100)),
    t("range-notcovered-si.range1000", None, Group::Range, Kind::RangeNotCoveredSi(1000)),
    t("scan", None, Group::Range, Kind::Scan),
    t("read-only", Some("oltp_read_only"), Group::Range, Kind::ReadOnly),
    t("update-index", Some("oltp_update_index"), Group::Write, Kind::UpdateIndex),
    t("update-nonindex", Some("oltp_update_non_index"), Group::Write, Kind::UpdateNonIndex),
    t("update-inlist", Some("oltp_inlist_update"), Group::Write, Kind::UpdateInlist),
    t("update-one", None, Group::Write, Kind::UpdateOne),
    t("update-zipf", None, Group::Write, Kind::UpdateZipf),
    t("read-write", Some("oltp_read_write"), Group::Write, Kind::ReadWrite),
    t("write-only", Some("oltp_write_only"), Group::Write, Kind::WriteOnly),
    t("insert", Some("oltp_insert"), Group::Write, Kind::Insert),
    t("delete", Some("oltp_delete"), Group::Write, Kind::Delete),
];

/// The tests a name selects: `all`, `post004`, a group name, a test name (`NAME.pre` for a
/// read test's pass before the writes) or a sysbench script name.
pub fn resolve(name: &str) -> Option<Vec<Test>> {
    let group = |g: Group| ALL.iter().filter(move |t| t.group == g).copied();
    let reads = || group(Group::Point).chain(group(Group::Range));
    match name {
        "all" => Some(ALL.to_vec()),
        "post004" => Some(
            reads()
                .map(|t| Test { pre: true, ..t })
                .chain(group(Group::Write))
                .chain(reads())
                .collect(),
        ),
        "point" => Some(group(Group::Point).collect()),
        "range" => Some(group(Group::Range).collect()),
        "write" => Some(group(Group::Write).collect()),
        n => match n.strip_suffix(".pre") {
            Some(base) => ALL
                .iter()
                .find(|t| t.name == base && t.group != Group::Write)
                .map(|t| vec![Test { pre: true, ..*t }]),
            None => ALL.iter().find(|t| t.name == n || t.alias == Some(n)).map(|t| vec![*t]),
        },
    }
}

/// The group of test `name` (as written in results, `.pre` included), if it is one of ours.
pub fn group_of(name: &str) -> Option<Group> {
    let base = name.strip_suffix(".pre").unwrap_or(name);
    ALL.iter().find(|t| t.name == base).map(|t| t.group)
}

/// The names for `--help`.
pub fn help_list() -> String {
    let mut s = String::new();
    for t in ALL {
        s.push_str("  ");
        s.push_str(t.name);
        if let Some(a) = t.alias {
            s.push_str(" (");
            s.push_str(a);
            s.push(')');
        }
        s.push('\n');
    }
    s.push_str("  NAME.pre (a point or range test, run before the writes)\n");
    s.push_str(
        "  post004 (point and range tests as .pre, the write tests, then point and range)\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_groups() {
        assert_eq!(resolve("oltp_read_write").unwrap()[0].name, "read-write");
        assert_eq!(resolve("all").unwrap().len(), ALL.len());
        let n = resolve("point").unwrap().len() + resolve("range").unwrap().len();
        assert_eq!(n + resolve("write").unwrap().len(), ALL.len());
        assert!(resolve("oltp_nope").is_none());
        assert_eq!(group_of("scan"), Some(Group::Range));
        let mut names: Vec<&str> = ALL.iter().map(|t| t.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len(), "unique names");
    }

    #[test]
    fn pre_passes_and_post004_order() {
        let t = &resolve("points-covered-si.pre").unwrap()[0];
        assert_eq!(
            (t.label(), t.group, t.pre),
            ("points-covered-si.pre".into(), Group::Point, true)
        );
        assert!(resolve("update-one.pre").is_none(), "writes have no .pre pass");
        assert_eq!(group_of("range-covered-pk.range100.pre"), Some(Group::Range));
        let p = resolve("post004").unwrap();
        let reads = ALL.iter().filter(|t| t.group != Group::Write).count();
        let writes = ALL.len() - reads;
        assert_eq!(p.len(), 2 * reads + writes);
        assert!(p[..reads].iter().all(|t| t.pre && t.group != Group::Write));
        assert!(p[reads..reads + writes].iter().all(|t| !t.pre && t.group == Group::Write));
        assert!(p[reads + writes..].iter().all(|t| !t.pre && t.group != Group::Write));
        for n in [
            "points-covered-pk",
            "points-covered-si",
            "points-notcovered-pk",
            "points-notcovered-si",
            "range-covered-pk.range10",
            "range-covered-pk.range100",
            "range-covered-pk.range1000",
            "update-inlist",
            "update-one",
            "update-zipf",
        ] {
            assert!(resolve(n).is_some(), "{n}");
        }
    }
}

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
//! | `range-pk.rangeN` | `SELECT c ... WHERE id BETWEEN ? AND ?+N-1` (the primary key is clustered: always covering) |
//! | `range-covered-si.rangeN` | `SELECT id, k ... WHERE k BETWEEN ? AND ?+N-1` (index only) |
//! | `range-notcovered-si.rangeN` | `SELECT c ... WHERE k BETWEEN ? AND ?+N-1` (a row fetch per entry) |
//! | `scan` | `SELECT COUNT(*) FROM sbtestN WHERE LENGTH(c) < 0` (every row read) |
//! | `read-only` (`oltp_read_only`) | sysbench's: 10 point selects, 4 range queries, in a transaction |
//! | `read-write` (`oltp_read_write`) | read-only's, plus index/non-index update, delete + insert |
//! | `write-only` (`oltp_write_only`) | the writes of read-write, in a transaction |
//! | `update-index` (`oltp_update_index`) | `UPDATE ... SET k=k+1 WHERE id=?` |
//! | `update-nonindex` (`oltp_update_non_index`) | `UPDATE ... SET c=? WHERE id=?` |
//! | `insert` (`oltp_insert`) | `INSERT` with the next id (as auto-increment) |
//! | `delete` (`oltp_delete`) | `DELETE ... WHERE id=?` |
//!
//! N is 10, 100 or 1000. `k` values are uniform in `1..=table_size` like the ids, so a k range
//! of N values holds about N rows.

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
}

const fn t(name: &'static str, alias: Option<&'static str>, group: Group, kind: Kind) -> Test {
    Test { name, alias, group, kind }
}

/// Every test, in the order `all` runs them (reads first, writes last, delete at the end).
pub const ALL: &[Test] = &[
    t("point-query", Some("oltp_point_select"), Group::Point, Kind::PointQuery),
    t("random-points-pk", Some("oltp_inlist_select"), Group::Point, Kind::RandomPointsPk),
    t("random-points-si", Some("select_random_points"), Group::Point, Kind::RandomPointsSi),
    t("hot-points", None, Group::Point, Kind::HotPoints),
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
    t("read-write", Some("oltp_read_write"), Group::Write, Kind::ReadWrite),
    t("write-only", Some("oltp_write_only"), Group::Write, Kind::WriteOnly),
    t("insert", Some("oltp_insert"), Group::Write, Kind::Insert),
    t("delete", Some("oltp_delete"), Group::Write, Kind::Delete),
];

/// The tests a name selects: `all`, a group name, a test name or a sysbench script name.
pub fn resolve(name: &str) -> Option<Vec<Test>> {
    let group = |g: Group| ALL.iter().filter(|t| t.group == g).copied().collect();
    match name {
        "all" => Some(ALL.to_vec()),
        "point" => Some(group(Group::Point)),
        "range" => Some(group(Group::Range)),
        "write" => Some(group(Group::Write)),
        n => ALL.iter().find(|t| t.name == n || t.alias == Some(n)).map(|t| vec![*t]),
    }
}

/// The group of test `name` (as written in results), if it is one of ours.
pub fn group_of(name: &str) -> Option<Group> {
    ALL.iter().find(|t| t.name == name).map(|t| t.group)
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
}

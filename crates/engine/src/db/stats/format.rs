//! Renders the counters of [`super::DbStats`] in RocksDB's `rocksdb.stats` layout, byte for
//! byte where Talus has the same quantity (the widths are those of RocksDB's
//! `internal_stats.cc`); the `WPreComp(GB)` column and the `AddFile` lines, which Talus has
//! no counterpart for, are left out.
//!
//! Blob files count as RocksDB counts them: `Rblob(GB)`/`Wblob(GB)` are the bytes garbage
//! collection read from and flushes and compactions wrote to blob files; `Read(GB)` and
//! `Rd(MB/s)` include the blob reads, `Write(GB)` and `Wnew(GB)` are tables only, `W-Amp`,
//! `Wr(MB/s)`, `Flush(GB)` and the `Cumulative compaction` lines include the blob writes.
//!
//! Pure functions of their inputs: `properties.rs` gathers the level shapes and counters and
//! calls [`render`]; tests call it with made-up numbers.

use std::fmt::Write as _;

use super::{DbSnap, LevelSnap, STALL_NAMES};
use crate::human::human_bytes;

const MB: f64 = 1024.0 * 1024.0;
const GB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The shape of one level in the current version.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct LevelShape {
    /// Live files.
    pub files: usize,
    /// Of which inputs of a running compaction.
    pub compacting: usize,
    /// Bytes of the live files.
    pub size: u64,
    /// Compaction score.
    pub score: f64,
}

/// Everything one dump shows.
pub(crate) struct StatsInput<'a> {
    /// The column family's name (the `Compaction Stats [NAME]` title).
    pub family: &'a str,
    /// Per level.
    pub shapes: &'a [LevelShape],
    /// Per-level counters now and at the previous dump.
    pub levels: &'a [LevelSnap],
    /// Per-level counters at the previous dump.
    pub prev_levels: &'a [LevelSnap],
    /// Flush counters now.
    pub flush: LevelSnap,
    /// Flush counters at the previous dump.
    pub prev_flush: LevelSnap,
    /// DB counters now.
    pub db: DbSnap,
    /// DB counters at the previous dump.
    pub prev_db: DbSnap,
    /// Seconds since open.
    pub uptime: f64,
    /// Seconds since the previous dump.
    pub interval: f64,
}

/// RocksDB's `NumberToHumanString`.
pub(crate) fn human_count(n: u64) -> String {
    if n < 10_000 {
        n.to_string()
    } else if n < 10_000_000 {
        format!("{}K", n / 1000)
    } else if n < 10_000_000_000 {
        format!("{}M", n / 1_000_000)
    } else {
        format!("{}G", n / 1_000_000_000)
    }
}

/// RocksDB's `AppendHumanMicros` in fixed format: `HH:MM:SS.mmm H:M:S`.
pub(crate) fn human_micros(us: u64) -> String {
    let secs_total = us / 1_000_000;
    let h = secs_total / 3600;
    let m = (secs_total / 60) % 60;
    let s = (us % 60_000_000) as f64 / 1e6;
    format!("{h:02}:{m:02}:{s:05.3} H:M:S")
}

fn header(s: &mut String, family: &str, group_by: &str) {
    let line = format!(
        "{group_by}    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) \
         Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) \
         KeyIn KeyDrop Rblob(GB) Wblob(GB)"
    );
    let _ = writeln!(s, "\n** Compaction Stats [{family}] **");
    let _ = writeln!(s, "{line}");
    let _ = writeln!(s, "{}", "-".repeat(line.len()));
}

/// One row; `w_amp_input` is what W-Amp divides by (flushed bytes for L0 and Sum, Rn else).
fn row(s: &mut String, name: &str, shape: LevelShape, st: &LevelSnap, w_amp_input: u64) {
    let read = st.rn + st.rnp1 + st.blob_read;
    let all_written = st.written + st.blob_written;
    let elapsed = (st.micros + 1) as f64 / 1e6;
    let w_amp = if w_amp_input == 0 { 0.0 } else { all_written as f64 / w_amp_input as f64 };
    let secs = st.micros as f64 / 1e6;
    let _ = writeln!(
        s,
        "{:>4} {:>6}/{:<3} {:>8} {:>5.1} {:>8.1} {:>7.1} {:>8.1} {:>9.1} {:>8.1} {:>9.1} {:>5.1} \
         {:>8.1} {:>8.1} {:>9.2} {:>17.2} {:>9} {:>8.3} {:>7} {:>6} {:>9.1} {:>9.1}",
        name,
        shape.files,
        shape.compacting,
        human_bytes(shape.size),
        shape.score,
        read as f64 / GB,
        st.rn as f64 / GB,
        st.rnp1 as f64 / GB,
        st.written as f64 / GB,
        (st.written as f64 - st.rnp1 as f64) / GB,
        st.moved as f64 / GB,
        w_amp,
        read as f64 / MB / elapsed,
        all_written as f64 / MB / elapsed,
        secs,
        secs,
        st.count,
        if st.count == 0 { 0.0 } else { secs / st.count as f64 },
        human_count(st.keys_in),
        human_count(st.keys_dropped),
        st.blob_read as f64 / GB,
        st.blob_written as f64 / GB,
    );
}

/// The whole `talus.stats` text: the family's compaction stats, then the DB stats.
#[cfg(test)]
pub(crate) fn render(i: &StatsInput<'_>) -> String {
    let mut s = render_cf(i);
    s.push_str(&render_db(i));
    s
}

/// The family's part (RocksDB's `rocksdb.cfstats`): the level and priority tables, flush and
/// compaction totals, stall counts.
pub(crate) fn render_cf(i: &StatsInput<'_>) -> String {
    let mut s = String::new();
    let up = i.uptime.max(0.001);
    let iv = i.interval.max(0.001);
    header(&mut s, i.family, "Level");
    let flushed = |f: &LevelSnap| f.written + f.blob_written;
    let ingest = flushed(&i.flush);
    let int_ingest = ingest.saturating_sub(flushed(&i.prev_flush));
    let mut sum = LevelSnap::default();
    let mut int = LevelSnap::default();
    let mut total = LevelShape::default();
    for (l, (shape, st)) in i.shapes.iter().zip(i.levels.iter()).enumerate() {
        let prev = i.prev_levels.get(l).copied().unwrap_or_default();
        sum.add(st);
        int.add(&st.sub(&prev));
        total.files += shape.files;
        total.compacting += shape.compacting;
        total.size += shape.size;
        if st.micros > 0 || shape.files > 0 {
            let input = if l == 0 { ingest } else { st.rn };
            row(&mut s, &format!("L{l}"), *shape, st, input);
        }
    }
    row(&mut s, "Sum", total, &sum, ingest);
    row(&mut s, "Int", LevelShape::default(), &int, int_ingest);

    header(&mut s, i.family, "Priority");
    let low = sum.sub(&i.flush);
    if low.micros > 0 || low.count > 0 {
        row(&mut s, "Low", LevelShape::default(), &low, low.rn);
    }
    if i.flush.micros > 0 || i.flush.count > 0 {
        row(&mut s, "High", LevelShape::default(), &i.flush, 0);
    }

    let _ = writeln!(s, "\nUptime(secs): {:.1} total, {:.1} interval", i.uptime, i.interval);
    let _ = writeln!(
        s,
        "Flush(GB): cumulative {:.3}, interval {:.3}",
        ingest as f64 / GB,
        int_ingest as f64 / GB
    );
    for (name, st, secs) in [("Cumulative", &sum, up), ("Interval", &int, iv)] {
        let w = (st.written + st.blob_written) as f64;
        let r = (st.rn + st.rnp1 + st.blob_read) as f64;
        let _ = writeln!(
            s,
            "{name} compaction: {:.2} GB write, {:.2} MB/s write, {:.2} GB read, {:.2} MB/s read, \
             {:.1} seconds",
            w / GB,
            w / MB / secs,
            r / GB,
            r / MB / secs,
            st.micros as f64 / 1e6
        );
    }
    let _ = write!(s, "Stalls(count): ");
    for (n, name) in i.db.stalls.iter().zip(STALL_NAMES.iter()) {
        let _ = write!(s, "{n} {name}, ");
    }
    // As RocksDB: the total leaves out the `_with_compaction` subsets.
    let total_stalls = |d: &DbSnap| -> u64 {
        d.stalls.iter().enumerate().filter(|(k, _)| *k != 1 && *k != 3).map(|(_, v)| v).sum()
    };
    let _ = writeln!(
        s,
        "interval {} total count",
        total_stalls(&i.db).saturating_sub(total_stalls(&i.prev_db))
    );
    s
}

/// The database's part (RocksDB's `rocksdb.dbstats`): writes, WAL and stall time.
pub(crate) fn render_db(i: &StatsInput<'_>) -> String {
    let mut s = String::new();
    let up = i.uptime.max(0.001);
    let iv = i.interval.max(0.001);
    let _ = writeln!(s, "\n** DB Stats **");
    let _ = writeln!(s, "Uptime(secs): {:.1} total, {:.1} interval", i.uptime, i.interval);
    let d = &i.db;
    let _ = writeln!(
        s,
        "Cumulative writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, \
         ingest: {:.2} GB, {:.2} MB/s",
        human_count(d.writes),
        human_count(d.keys),
        human_count(d.groups),
        d.writes as f64 / (d.groups + 1) as f64,
        d.ingest as f64 / GB,
        d.ingest as f64 / MB / up
    );
    let _ = writeln!(
        s,
        "Cumulative WAL: {} writes, {} syncs, {:.2} writes per sync, written: {:.2} GB, {:.2} MB/s",
        human_count(d.wal_writes),
        human_count(d.wal_syncs),
        d.wal_writes as f64 / (d.wal_syncs + 1) as f64,
        d.wal_bytes as f64 / GB,
        d.wal_bytes as f64 / MB / up
    );
    let _ = writeln!(
        s,
        "Cumulative stall: {}, {:.1} percent",
        human_micros(d.stall_micros),
        d.stall_micros as f64 / 10000.0 / up
    );
    let p = &i.prev_db;
    let w = d.writes.saturating_sub(p.writes);
    let k = d.keys.saturating_sub(p.keys);
    let g = d.groups.saturating_sub(p.groups);
    let ingest = d.ingest.saturating_sub(p.ingest);
    let _ = writeln!(
        s,
        "Interval writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, \
         ingest: {:.2} MB, {:.2} MB/s",
        human_count(w),
        human_count(k),
        human_count(g),
        w as f64 / (g + 1) as f64,
        ingest as f64 / MB,
        ingest as f64 / MB / iv
    );
    let (ww, ws) =
        (d.wal_writes.saturating_sub(p.wal_writes), d.wal_syncs.saturating_sub(p.wal_syncs));
    let wb = d.wal_bytes.saturating_sub(p.wal_bytes);
    let _ = writeln!(
        s,
        "Interval WAL: {} writes, {} syncs, {:.2} writes per sync, written: {:.2} GB, {:.2} MB/s",
        human_count(ww),
        human_count(ws),
        ww as f64 / (ws + 1) as f64,
        wb as f64 / GB,
        wb as f64 / MB / iv
    );
    let stall = d.stall_micros.saturating_sub(p.stall_micros);
    let _ = writeln!(
        s,
        "Interval stall: {}, {:.1} percent",
        human_micros(stall),
        stall as f64 / 10000.0 / iv
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_strings_match_rocksdb() {
        assert_eq!(human_count(5752), "5752");
        assert_eq!(human_count(29_000), "29K");
        assert_eq!(human_count(323_456), "323K");
        assert_eq!(human_count(12_000_000), "12M");
        assert_eq!(human_micros(744_000), "00:00:0.744 H:M:S");
        assert_eq!(human_micros(3_723_500_000), "01:02:3.500 H:M:S");
    }

    #[test]
    fn rows_line_up_with_rocksdb() {
        // The L0 row of RocksDB 7.8.3's db_bench output (10.4.2's lays out the blob columns
        // the same way: `KeyDrop` then `Rblob(GB)` and `Wblob(GB)` at 9 characters each).
        let shapes = [LevelShape { files: 4, compacting: 4, size: 1_887_437, score: 0.0 }];
        let flush =
            LevelSnap { written: 12 << 20, micros: 750_000, count: 28, ..Default::default() };
        let input = StatsInput {
            family: "default",
            shapes: &shapes,
            levels: &[flush],
            prev_levels: &[],
            flush,
            prev_flush: LevelSnap::default(),
            db: DbSnap::default(),
            prev_db: DbSnap::default(),
            uptime: 4.2,
            interval: 1.2,
        };
        let text = render(&input);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "** Compaction Stats [default] **");
        assert!(lines[2].starts_with("Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB)"));
        assert_eq!(lines[3].len(), lines[2].len());
        assert_eq!(
            lines[4],
            "  L0      4/4    1.80 MB   0.0      0.0     0.0      0.0       0.0      0.0       \
             0.0   1.0      0.0     16.0      0.75              0.75        28    0.027       \
             0      0       0.0       0.0"
        );
        assert!(lines[5].starts_with(" Sum      4/4    1.80 MB"));
        assert!(text.contains("\nFlush(GB): cumulative 0.012, interval 0.012\n"));
        assert!(
            text.contains("Stalls(count): 0 level0_slowdown, 0 level0_slowdown_with_compaction")
        );
        assert!(text.contains("\nCumulative stall: 00:00:0.000 H:M:S, 0.0 percent\n"));
    }
}

//! The engine's stats text (`rocksdb.stats`, RocksDB's layout) after a step, and the summary
//! columns parsed from it: the interval (`Int`, since the previous step's dump) W-Amp and
//! compaction write GB, the L0->base `Avg(sec)` (the row of the first level below L0 that had
//! compactions: compaction stats are kept by output level, so that row is L0->base; cumulative,
//! RocksDB keeps no per-level interval), the interval stall percent and the cumulative stall
//! counts by cause. Pure text parsing; the caller saves the text as `<step>.stats.txt`.

/// Columns parsed from one dump.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineStats {
    /// `W-Amp` of the `Int` row.
    pub w_amp: Option<f64>,
    /// `Write(GB)` of the `Int` row.
    pub comp_write_gb: Option<f64>,
    /// `Avg(sec)` of the base level's row (L0->base compactions), cumulative.
    pub l0_base_avg_sec: Option<f64>,
    /// `Comp(cnt)` of the base level's row, cumulative.
    pub l0_base_count: Option<u64>,
    /// `Interval stall: ... N percent`.
    pub stall_pct: Option<f64>,
    /// `Stalls(count)`: `(cause, count)`, cumulative.
    pub stalls: Vec<(String, u64)>,
}

/// Parses the first `** Compaction Stats **` table and the stall lines of `text`.
pub fn parse(text: &str) -> EngineStats {
    let mut out = EngineStats::default();
    let mut header: Vec<&str> = Vec::new();
    let mut in_levels = false;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"Level") && header.is_empty() {
            header = words.clone();
            in_levels = true;
            continue;
        }
        if in_levels {
            if line.trim().is_empty() {
                in_levels = false;
                continue;
            }
            let col = |name: &str| -> Option<&str> {
                // "Files" and "Size" take two words in the rows ("13/4", "9.84 MB").
                let i = header.iter().position(|h| *h == name)?;
                words.get(i + 1).copied()
            };
            let num = |name: &str| col(name).and_then(|v| v.parse::<f64>().ok());
            match words.first().copied() {
                Some("Int") => {
                    out.w_amp = num("W-Amp");
                    out.comp_write_gb = num("Write(GB)");
                }
                Some(l) if l.starts_with('L') && l != "L0" && out.l0_base_avg_sec.is_none() => {
                    let count = num("Comp(cnt)").map(|c| c as u64);
                    if count.is_some_and(|c| c > 0) {
                        out.l0_base_avg_sec = num("Avg(sec)");
                        out.l0_base_count = count;
                    }
                }
                _ => {}
            }
        }
        if let Some(rest) = line.strip_prefix("Interval stall: ") {
            out.stall_pct = rest
                .split(", ")
                .nth(1)
                .and_then(|p| p.split_whitespace().next())
                .and_then(|p| p.parse().ok());
        }
        if let Some(rest) = line.strip_prefix("Stalls(count): ") {
            for part in rest.split(", ") {
                if part.starts_with("interval") {
                    continue;
                }
                if let Some((n, cause)) = part.split_once(' ') {
                    if let Ok(n) = n.parse() {
                        out.stalls.push((cause.replace(' ', "_"), n));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
** Compaction Stats [default] **
Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop
-----------------------------------------------------------------
  L0      2/0   849.94 KB   0.5      0.0     0.0      0.0       0.0      0.0       0.0   1.0      0.0     83.1      0.15              0.15        30    0.005       0      0
  L4      0/0    0.00 KB   0.0      0.0     0.0      0.0       0.0      0.0       0.0   0.0      0.0      0.0      0.00              0.00         0    0.000       0      0
  L5      5/1    4.43 MB   1.2      0.0     0.0      0.0       0.0      0.0       0.0   2.0    123.8    113.1      0.12              0.12         4    0.029    221K    19K
  L6      6/3    4.57 MB   0.0      0.0     0.0      0.0       0.0      0.0       0.0   1.7    140.8    123.7      0.08              0.08         4    0.020    176K    16K
 Sum     13/4    9.84 MB   0.0      0.0     0.0      0.0       0.0      0.0       0.0   2.9     74.1    102.6      0.35              0.35        38    0.009    397K    36K
 Int      0/0    0.00 KB   0.0      0.1     0.0      0.0       1.5      0.0       0.0   3.4     74.1    102.6      0.35              0.35        38    0.009    397K    36K

Stalls(count): 3 level0_slowdown, 0 level0_slowdown_with_compaction, 2 level0_numfiles, 0 level0_numfiles_with_compaction, 0 stop for pending_compaction_bytes, 0 slowdown for pending_compaction_bytes, 1 memtable_compaction, 0 memtable_slowdown, interval 1 total count
Cumulative stall: 00:00:0.005 H:M:S, 1.0 percent
Interval stall: 00:00:0.005 H:M:S, 2.5 percent
";

    #[test]
    fn columns_from_rocksdb_layout() {
        let s = parse(TEXT);
        assert_eq!(s.w_amp, Some(3.4));
        assert_eq!(s.comp_write_gb, Some(1.5));
        assert_eq!(s.l0_base_avg_sec, Some(0.029), "L4 had no compactions: L5 is the base");
        assert_eq!(s.l0_base_count, Some(4));
        assert_eq!(s.stall_pct, Some(2.5));
        assert_eq!(s.stalls[0], ("level0_slowdown".into(), 3));
        assert_eq!(s.stalls[2], ("level0_numfiles".into(), 2));
        assert_eq!(s.stalls[4].0, "stop_for_pending_compaction_bytes");
        assert_eq!(s.stalls.len(), 8);
        assert_eq!(parse(""), EngineStats::default());
    }
}

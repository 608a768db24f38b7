//! Human-readable sizes in RocksDB's formats, shared by the stats dump (`db/stats/format.rs`)
//! and the block-cache entry stats (`sst/cache_stats.rs`), so both print a size the same way.

/// RocksDB's `BytesToHumanString`: kilobytes at least, two decimals (`0.09 KB`, `1.80 MB`).
pub(crate) fn human_bytes(b: u64) -> String {
    const NAMES: [&str; 4] = ["KB", "MB", "GB", "TB"];
    let mut v = b as f64 / 1024.0;
    let mut i = 0;
    while i < NAMES.len() - 1 && v >= 1024.0 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.2} {}", NAMES[i])
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn sizes_print_as_rocksdb_prints_them() {
        assert_eq!(human_bytes(0), "0.00 KB");
        assert_eq!(human_bytes(92), "0.09 KB");
        assert_eq!(human_bytes(1_887_437), "1.80 MB");
        assert_eq!(human_bytes(8 << 20), "8.00 MB");
        assert_eq!(human_bytes(3 << 30), "3.00 GB");
        assert_eq!(human_bytes(5 << 40), "5.00 TB");
        assert_eq!(human_bytes(5 << 50), "5120.00 TB");
    }
}

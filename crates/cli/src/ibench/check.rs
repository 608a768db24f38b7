//! The `check` step of `talus ibench`: the content checksum of every table and secondary index
//! ([`crate::oltp::checksum`]: one canonical function of the contents), so a seeded run on
//! Talus, RocksDB and SQLite must print equal lines (rows are a function of the seed and the row
//! id: [`super::schema`]). An index's entries are its columns then `transactionid` (once: the
//! unique index already ends with it). Prints one line per table and index and writes
//! `check.csv` (`what,entries,xxh3`) with `--results`.

pub use crate::oltp::checksum::{csv, lines, Hasher};

use super::schema::IndexSpec;

/// The columns an index's checksum covers: its own, then `transactionid` unless it ends with it.
pub fn index_columns(ix: &IndexSpec) -> Vec<&'static str> {
    let mut cols = ix.columns.clone();
    if cols.last() != Some(&"transactionid") {
        cols.push("transactionid");
    }
    cols
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unique_index_ends_with_the_primary_key_once() {
        let ix = IndexSpec { name: "u", columns: vec!["price", "transactionid"], unique: true };
        assert_eq!(index_columns(&ix), ["price", "transactionid"]);
        let ix = IndexSpec { name: "n", columns: vec!["price"], unique: false };
        assert_eq!(index_columns(&ix), ["price", "transactionid"]);
    }
}

//! sysbench's `sbtestN` tables and their contents, as `oltp_common.lua` makes them.
//!
//! `CREATE TABLE sbtestN (id INTEGER NOT NULL, k INTEGER NOT NULL, c CHAR(120) NOT NULL,
//! pad CHAR(60) NOT NULL, PRIMARY KEY (id))`, then (after loading) `CREATE INDEX k_N ON
//! sbtestN(k)`. Row `id` (1..=table_size) has `k` uniform in `1..=table_size`, `c` ten groups
//! of 11 random digits joined by `-` (119 characters) and `pad` five such groups (59). Ids are
//! `I64`, `k` is `I32` (MySQL's INT).

use super::dist::Dist;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use talus_table::{ColumnDef, ColumnType, IndexDef, Row, TableDef, Value};

/// Column positions.
pub const ID: usize = 0;
/// `k`.
pub const K: usize = 1;
/// `c`.
pub const C: usize = 2;

/// `sbtest<n>` (n from 1).
pub fn table_name(n: usize) -> String {
    format!("sbtest{n}")
}

/// The secondary index on `k` of table `n`.
pub fn k_index(n: usize) -> IndexDef {
    IndexDef { name: format!("k_{n}"), columns: vec!["k".into()], unique: false }
}

/// Table `n`'s definition; with `index`, including `k_n` (prepare creates it after loading).
pub fn table_def(n: usize, index: bool) -> TableDef {
    let col = |name: &str, ty| ColumnDef { name: name.into(), ty, nullable: false };
    TableDef {
        name: table_name(n),
        columns: vec![
            col("id", ColumnType::I64),
            col("k", ColumnType::I32),
            col("c", ColumnType::Varchar),
            col("pad", ColumnType::Varchar),
        ],
        primary_key: vec!["id".into()],
        indexes: if index { vec![k_index(n)] } else { Vec::new() },
    }
}

/// Every table's definition, with the `k` index.
pub fn all_tables(tables: usize) -> Vec<TableDef> {
    (1..=tables).map(|n| table_def(n, true)).collect()
}

/// A thread's random source (sysbench's `sysbench.rand.*`).
pub struct SbRand {
    rng: StdRng,
}

impl SbRand {
    /// Seeded from `seed` and the thread number.
    pub fn new(seed: u64, thread: u64) -> SbRand {
        SbRand { rng: StdRng::seed_from_u64(seed ^ thread.wrapping_mul(0x9E37_79B9_7F4A_7C15)) }
    }

    /// Uniform in `lo..=hi`.
    pub fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        self.rng.gen_range(lo..=hi)
    }

    /// `sysbench.rand.default(lo, hi)`: a value in `lo..=hi` from `--rand_type`'s distribution.
    pub fn default(&mut self, dist: &Dist, lo: u64, hi: u64) -> u64 {
        match dist {
            Dist::Uniform => self.uniform(lo, hi),
            d => d.draw(lo, hi, || self.rng.gen::<f64>()),
        }
    }

    /// `groups` groups of 11 random digits joined by `-` (sysbench's `###########-...`).
    pub fn digits(&mut self, groups: usize) -> String {
        let mut s = String::with_capacity(groups * 12);
        for g in 0..groups {
            if g > 0 {
                s.push('-');
            }
            let mut x: u64 = self.rng.gen_range(0..100_000_000_000);
            let mut buf = [b'0'; 11];
            for b in buf.iter_mut().rev() {
                *b = b'0' + (x % 10) as u8;
                x /= 10;
            }
            s.extend(buf.iter().map(|&b| char::from(b)));
        }
        s
    }

    /// A `c` value (119 characters).
    pub fn c(&mut self) -> String {
        self.digits(10)
    }

    /// A `pad` value (59 characters).
    pub fn pad(&mut self) -> String {
        self.digits(5)
    }

    /// A row with primary key `id` for a table of `table_size` rows.
    pub fn row(&mut self, id: i64, table_size: u64) -> Row {
        let k = self.uniform(1, table_size) as i32;
        vec![Value::I64(id), Value::I32(k), Value::Varchar(self.c()), Value::Varchar(self.pad())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_look_like_sysbench() {
        let mut r = SbRand::new(7, 0);
        let row = r.row(5, 1000);
        let Value::Varchar(c) = &row[C] else { panic!() };
        assert_eq!(c.len(), 119);
        assert_eq!(c.matches('-').count(), 9);
        assert!(c.split('-').all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
        let Value::Varchar(pad) = &row[3] else { panic!() };
        assert_eq!(pad.len(), 59);
        let Value::I32(k) = row[K] else { panic!() };
        assert!((1..=1000).contains(&k));
        table_def(1, true).check_row(&row).unwrap();
        assert_ne!(SbRand::new(7, 1).c(), SbRand::new(7, 0).c());
    }
}

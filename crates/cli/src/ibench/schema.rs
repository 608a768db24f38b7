//! The insert benchmark's schema and its row and query generators.
//!
//! `purchases_index(transactionid bigint PK, dateandtime datetime, cashregisterid int,
//! customerid int, productid int, price int, data varchar)` with the secondary indexes
//! `marketsegment(productid, customerid, price)`, `registersegment(cashregisterid, customerid,
//! price)` and `pdc(price, dateandtime, customerid)`; with `--unique_index`, marketsegment is
//! UNIQUE on `(productid, customerid, price, transactionid)` (unique by construction, so no
//! insert fails, but every insert must read to check it: what read-free maintenance saves).
//! Transaction ids are assigned by the driver in increasing order (the auto-increment); every
//! other column is a function of `(--seed, transactionid)` only (a SplitMix64 stream seeded by
//! both), so a seeded run writes the same rows whatever the engine, the client that inserts a
//! row or the interleaving of clients sharing a table, and the `check` step's checksums compare
//! engines. `dateandtime` is a clock that ticks [`MICROS_PER_ID`] per row from 2024-01-01
//! (iibench uses the wall clock; only the order within a price matters to `pdc`). `data` is
//! `data_random` random lowercase letters followed by one repeated letter, so it compresses by
//! about `1 - data_random`. Owned by the driver threads; no locks.

use rand::rngs::StdRng as SmallRng;
use rand::{Rng, SeedableRng};

use super::config::Config;

/// The name of table `t` (one per client, or table 0 shared by all with `--shared_table`).
pub fn table_name(t: usize) -> String {
    format!("purchases_index_{t}")
}

/// The secondary indexes: (name, columns). Queries read exactly these columns (covering).
pub const INDEXES: [(&str, [&str; 3]); 3] = [
    ("marketsegment", ["productid", "customerid", "price"]),
    ("registersegment", ["cashregisterid", "customerid", "price"]),
    ("pdc", ["price", "dateandtime", "customerid"]),
];
const _: () = assert!(INDEXES.len() == super::config::MAX_SECONDARY_INDEXES);

/// The table's columns, in order (every engine's schema and the check step's row order).
pub const COLUMNS: [&str; 7] =
    ["transactionid", "dateandtime", "cashregisterid", "customerid", "productid", "price", "data"];

/// One secondary index as l.x creates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    /// Its name (one of [`INDEXES`]).
    pub name: &'static str,
    /// Its columns, in order.
    pub columns: Vec<&'static str>,
    /// UNIQUE.
    pub unique: bool,
}

/// The first `count` indexes; with `unique_first`, the first is UNIQUE with the primary key
/// appended (see the module doc).
pub fn index_specs(count: usize, unique_first: bool) -> Vec<IndexSpec> {
    INDEXES
        .iter()
        .take(count)
        .enumerate()
        .map(|(i, (name, cols))| {
            let unique = unique_first && i == 0;
            let mut columns = cols.to_vec();
            if unique {
                columns.push("transactionid");
            }
            IndexSpec { name, columns, unique }
        })
        .collect()
}

/// `dateandtime` of row 0: 2024-01-01T00:00:00Z, µs.
pub const DATE_BASE_US: i64 = 1_704_067_200_000_000;
/// `dateandtime` advances this much per transaction id.
pub const MICROS_PER_ID: i64 = 10;

/// SplitMix64: the per-row generator (one multiply-xorshift per value).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the bias of a 64-bit modulo is below 2^-32 here).
    fn below(&mut self, n: i32) -> i32 {
        (self.next() % n.max(1) as u64) as i32
    }
}

/// One row of purchases_index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purchase {
    /// Primary key.
    pub transactionid: i64,
    /// Microseconds since the Unix epoch.
    pub dateandtime: i64,
    /// In `0..cashregisters`.
    pub cashregisterid: i32,
    /// In `0..customers`.
    pub customerid: i32,
    /// In `0..products`.
    pub productid: i32,
    /// In `0..max_price`.
    pub price: i32,
    /// `data_length` bytes, ASCII.
    pub data: String,
}

/// Makes rows (a function of the seed and the row id) and one client's queries.
pub struct RowGen {
    rng: SmallRng,
    seed: u64,
    cashregisters: i32,
    products: i32,
    customers: i32,
    max_price: i32,
    random_len: usize,
    data_len: usize,
    /// Queries pick among the first this many of [`INDEXES`].
    indexes: usize,
}

impl RowGen {
    /// A generator for the run's seed; its queries are seeded by the client and the step too.
    pub fn new(cfg: &Config, client: usize, step_salt: u64) -> RowGen {
        let seed =
            cfg.seed ^ ((client as u64) << 32) ^ step_salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        RowGen {
            rng: SmallRng::seed_from_u64(seed),
            seed: cfg.seed,
            cashregisters: cfg.cashregisters,
            products: cfg.products,
            customers: cfg.customers,
            max_price: cfg.max_price,
            random_len: ((cfg.data_length as f64) * cfg.data_random).round() as usize,
            data_len: cfg.data_length,
            indexes: cfg.secondary_indexes.clamp(1, INDEXES.len()),
        }
    }

    /// The row with primary key `id`: the same for a seed and an id, whoever makes it.
    pub fn row(&self, id: i64) -> Purchase {
        let mut r = SplitMix(self.seed ^ (id as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93));
        let cashregisterid = r.below(self.cashregisters);
        let customerid = r.below(self.customers);
        let productid = r.below(self.products);
        let price = r.below(self.max_price);
        let mut data = String::with_capacity(self.data_len);
        let mut bits = 0u64;
        for i in 0..self.random_len {
            if i % 8 == 0 {
                bits = r.next();
            }
            data.push(char::from(b'a' + (bits & 0xFF) as u8 % 26));
            bits >>= 8;
        }
        while data.len() < self.data_len {
            data.push('x');
        }
        Purchase {
            transactionid: id,
            dateandtime: DATE_BASE_US.saturating_add(id.saturating_mul(MICROS_PER_ID)),
            cashregisterid,
            customerid,
            productid,
            price,
            data,
        }
    }

    /// A query: which of the first `--secondary_indexes` of [`INDEXES`] and the start value of
    /// its first column.
    pub fn query(&mut self) -> (usize, i32) {
        let idx = self.rng.gen_range(0..self.indexes);
        let start = match idx {
            0 => self.rng.gen_range(0..self.products),
            1 => self.rng.gen_range(0..self.cashregisters),
            _ => self.rng.gen_range(0..self.max_price),
        };
        (idx, start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_respect_the_ranges_and_data_shape() {
        let mut cfg = super::super::config::parse(&["--db=/x".to_string()]).unwrap().unwrap();
        cfg.data_length = 20;
        cfg.data_random = 0.5;
        let g = RowGen::new(&cfg, 0, 1);
        let other_client = RowGen::new(&cfg, 3, 2);
        for id in 0..1000 {
            let r = g.row(id);
            assert_eq!(r, other_client.row(id), "rows depend on the seed and id only");
            assert_eq!(r.dateandtime, DATE_BASE_US + 10 * id);
            assert_eq!(r.transactionid, id);
            assert!((0..1000).contains(&r.cashregisterid));
            assert!((0..100_000).contains(&r.customerid));
            assert!((0..10_000).contains(&r.productid));
            assert!((0..500).contains(&r.price));
            assert_eq!(r.data.len(), 20);
            assert!(r.data.ends_with("xxxxxxxxxx"));
        }
        cfg.seed = 7;
        assert_ne!(RowGen::new(&cfg, 0, 1).row(5), g.row(5), "another seed, other rows");
        let mut g = g;
        let (i, s) = g.query();
        assert!(i < 3 && s >= 0);
        cfg.secondary_indexes = 1;
        let mut g = RowGen::new(&cfg, 0, 1);
        assert!((0..100).all(|_| g.query().0 == 0), "one index: queries use only it");
    }
}

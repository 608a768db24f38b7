//! The insert benchmark's schema and its row and query generators.
//!
//! `purchases_index(transactionid bigint PK, dateandtime datetime, cashregisterid int,
//! customerid int, productid int, price int, data varchar)` with the secondary indexes
//! `marketsegment(productid, customerid, price)`, `registersegment(cashregisterid, customerid,
//! price)` and `pdc(price, dateandtime, customerid)`. Transaction ids are assigned by the driver
//! in increasing order (the auto-increment), the other columns are uniform random; `data` is
//! `data_random` random lowercase letters followed by one repeated letter, so it compresses by
//! about `1 - data_random`. Owned by the driver threads; no locks.

use rand::rngs::StdRng as SmallRng;
use rand::{Rng, SeedableRng};

use super::config::Config;

/// The table name of client `c`.
pub fn table_name(client: usize) -> String {
    format!("purchases_index_{client}")
}

/// The secondary indexes: (name, columns). Queries read exactly these columns (covering).
pub const INDEXES: [(&str, [&str; 3]); 3] = [
    ("marketsegment", ["productid", "customerid", "price"]),
    ("registersegment", ["cashregisterid", "customerid", "price"]),
    ("pdc", ["price", "dateandtime", "customerid"]),
];
const _: () = assert!(INDEXES.len() == super::config::MAX_SECONDARY_INDEXES);

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

/// Makes rows for one client.
pub struct RowGen {
    rng: SmallRng,
    cashregisters: i32,
    products: i32,
    customers: i32,
    max_price: i32,
    random_len: usize,
    data_len: usize,
    /// Queries pick among the first this many of [`INDEXES`].
    indexes: usize,
}

/// Wall-clock microseconds since the Unix epoch.
pub fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

impl RowGen {
    /// A generator seeded by the run's seed, the client and the step.
    pub fn new(cfg: &Config, client: usize, step_salt: u64) -> RowGen {
        let seed =
            cfg.seed ^ ((client as u64) << 32) ^ step_salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        RowGen {
            rng: SmallRng::seed_from_u64(seed),
            cashregisters: cfg.cashregisters,
            products: cfg.products,
            customers: cfg.customers,
            max_price: cfg.max_price,
            random_len: ((cfg.data_length as f64) * cfg.data_random).round() as usize,
            data_len: cfg.data_length,
            indexes: cfg.secondary_indexes.clamp(1, INDEXES.len()),
        }
    }

    /// The row with primary key `id`.
    pub fn row(&mut self, id: i64, now: i64) -> Purchase {
        let mut data = String::with_capacity(self.data_len);
        for _ in 0..self.random_len {
            data.push(char::from(b'a' + self.rng.gen_range(0..26u8)));
        }
        while data.len() < self.data_len {
            data.push('x');
        }
        Purchase {
            transactionid: id,
            dateandtime: now,
            cashregisterid: self.rng.gen_range(0..self.cashregisters),
            customerid: self.rng.gen_range(0..self.customers),
            productid: self.rng.gen_range(0..self.products),
            price: self.rng.gen_range(0..self.max_price),
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
        let mut g = RowGen::new(&cfg, 0, 1);
        for id in 0..1000 {
            let r = g.row(id, 5);
            assert_eq!(r.transactionid, id);
            assert!((0..1000).contains(&r.cashregisterid));
            assert!((0..100_000).contains(&r.customerid));
            assert!((0..10_000).contains(&r.productid));
            assert!((0..500).contains(&r.price));
            assert_eq!(r.data.len(), 20);
            assert!(r.data.ends_with("xxxxxxxxxx"));
        }
        let (i, s) = g.query();
        assert!(i < 3 && s >= 0);
        cfg.secondary_indexes = 1;
        let mut g = RowGen::new(&cfg, 0, 1);
        assert!((0..100).all(|_| g.query().0 == 0), "one index: queries use only it");
    }
}

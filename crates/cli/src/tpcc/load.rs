//! The initial database (clause 4.3.3): `--items` items, and per warehouse its stock (one row
//! per item), 10 districts, `--customers` customers per district each with one history row,
//! as many orders per district (customers in random order; the last 30% undelivered, with a
//! new_order row each) and 5 to 15 order lines per order.
//!
//! Threads take warehouses round robin (thread 0 also loads the items first); rows go in with
//! `insert_many`, up to [`BATCH`] rows per atomic batch, in primary-key order per table.
//! History ids are numbered per warehouse so that loader threads never collide.

use talus_table::{Row, Value};

use super::config::Config;
use super::random::{last_name, TpccRand, C_LAST_LOAD};
use super::schema::{
    CUSTOMER, DISTRICT, HISTORY, ITEM, NEW_ORDER, ORDERS, ORDER_LINE, STOCK, WAREHOUSE,
};
use crate::oltp::engine::{OResult, Session};

/// Rows per insert batch.
pub const BATCH: usize = 1000;

fn vi(x: i64) -> Value {
    Value::I32(x as i32)
}

fn vs(s: String) -> Value {
    Value::Varchar(s)
}

/// Buffers rows per table and writes them in batches.
struct Loader<'a, S: Session> {
    sess: &'a mut S,
    bufs: Vec<(usize, Vec<Row>)>,
    rows: u64,
}

impl<S: Session> Loader<'_, S> {
    fn put(&mut self, table: usize, row: Row) -> OResult<()> {
        let i = match self.bufs.iter().position(|b| b.0 == table) {
            Some(i) => i,
            None => {
                self.bufs.push((table, Vec::with_capacity(BATCH)));
                self.bufs.len() - 1
            }
        };
        self.bufs[i].1.push(row);
        if self.bufs[i].1.len() >= BATCH {
            let rows = std::mem::take(&mut self.bufs[i].1);
            self.sess.insert_many(table, &rows)?;
            self.rows += rows.len() as u64;
        }
        Ok(())
    }

    fn finish(&mut self) -> OResult<u64> {
        for (t, rows) in std::mem::take(&mut self.bufs) {
            if !rows.is_empty() {
                self.sess.insert_many(t, &rows)?;
                self.rows += rows.len() as u64;
            }
        }
        Ok(self.rows)
    }
}

/// Loads the item table.
pub fn load_items<S: Session>(sess: &mut S, cfg: &Config, r: &mut TpccRand) -> OResult<u64> {
    let mut l = Loader { sess, bufs: Vec::new(), rows: 0 };
    for id in 1..=cfg.items {
        let row = vec![
            vi(id),
            vi(r.uniform(1, 10_000)),
            vs(r.astring(14, 24)),
            Value::I64(r.uniform(100, 10_000)),
            vs(r.data()),
        ];
        l.put(ITEM, row)?;
    }
    l.finish()
}

fn address(r: &mut TpccRand) -> [Value; 5] {
    [
        vs(r.astring(10, 20)),
        vs(r.astring(10, 20)),
        vs(r.astring(10, 20)),
        vs(r.state()),
        vs(r.zip()),
    ]
}

/// The date the loader writes (`o_entry_d`, `h_date`, ...): now, or with a fixed `--rand_seed`
/// a fixed date (2024-01-01), so a seeded load writes the same rows on every engine (`check`'s
/// checksums compare them).
fn load_time(cfg: &Config) -> i64 {
    if cfg.seed != 0 {
        return 1_704_067_200_000_000;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Loads warehouse `wid` with everything that belongs to it; returns the rows written.
pub fn load_warehouse<S: Session>(
    sess: &mut S,
    cfg: &Config,
    wid: i64,
    r: &mut TpccRand,
) -> OResult<u64> {
    let mut l = Loader { sess, bufs: Vec::new(), rows: 0 };
    let now = load_time(cfg);
    let mut row = vec![vi(wid), vs(r.astring(6, 10))];
    row.extend(address(r));
    row.extend([vi(r.uniform(0, 2000)), Value::I64(30_000_000)]);
    l.put(WAREHOUSE, row)?;
    for id in 1..=cfg.items {
        let mut row = vec![vi(id), vi(wid), vi(r.uniform(10, 100))];
        row.extend((0..10).map(|_| vs(r.astring(24, 24))));
        row.extend([Value::I64(0), vi(0), vi(0), vs(r.data())]);
        l.put(STOCK, row)?;
    }
    let n = cfg.customers;
    let first_new = n - cfg.new_orders() + 1;
    for did in 1..=Config::DISTRICTS {
        let mut row = vec![vi(did), vi(wid), vs(r.astring(6, 10))];
        row.extend(address(r));
        row.extend([vi(r.uniform(0, 2000)), Value::I64(3_000_000), vi(n + 1)]);
        l.put(DISTRICT, row)?;
        for cid in 1..=n {
            let last = if cid <= 1000 { cid - 1 } else { r.nurand(255, 0, 999, C_LAST_LOAD) };
            let mut row = vec![
                vi(cid),
                vi(did),
                vi(wid),
                vs(r.astring(8, 16)),
                vs("OE".into()),
                vs(last_name(last % n.min(1000))),
            ];
            row.extend(address(r));
            row.extend([
                vs(r.nstring(16, 16)),
                Value::DateTime(now),
                vs(if r.pct(10) { "BC" } else { "GC" }.into()),
                Value::I64(5_000_000),
                vi(r.uniform(0, 5000)),
                Value::I64(-1000),
                Value::I64(1000),
                vi(1),
                vi(0),
                vs(r.astring(300, 500)),
            ]);
            l.put(CUSTOMER, row)?;
            let h_id = ((wid - 1) * Config::DISTRICTS + did - 1) * n + cid;
            let h = vec![
                Value::I64(h_id),
                vi(cid),
                vi(did),
                vi(wid),
                vi(did),
                vi(wid),
                Value::DateTime(now),
                Value::I64(1000),
                vs(r.astring(12, 24)),
            ];
            l.put(HISTORY, h)?;
        }
        let custs = r.permutation(n);
        for (k, &cid) in custs.iter().enumerate() {
            let oid = k as i64 + 1;
            let lines = r.uniform(5, 15);
            let delivered = oid < first_new;
            let carrier = if delivered { vi(r.uniform(1, 10)) } else { Value::Null };
            let ord = vec![
                vi(oid),
                vi(did),
                vi(wid),
                vi(cid),
                Value::DateTime(now),
                carrier,
                vi(lines),
                vi(1),
            ];
            l.put(ORDERS, ord)?;
            for num in 1..=lines {
                let line = vec![
                    vi(oid),
                    vi(did),
                    vi(wid),
                    vi(num),
                    vi(r.uniform(1, cfg.items)),
                    vi(wid),
                    if delivered { Value::DateTime(now) } else { Value::Null },
                    vi(5),
                    Value::I64(if delivered { 0 } else { r.uniform(1, 999_999) }),
                    vs(r.astring(24, 24)),
                ];
                l.put(ORDER_LINE, line)?;
            }
            if !delivered {
                l.put(NEW_ORDER, vec![vi(oid), vi(did), vi(wid)])?;
            }
        }
    }
    l.finish()
}

//! One sysbench event (a transaction or a single statement) on a [`Session`], written once for
//! both engines: the statements of `oltp_common.lua` as handler calls.
//!
//! `SELECT ... WHERE id=?` is a primary-key read; `BETWEEN` a bounded index scan; `SUM`,
//! `ORDER BY` and `DISTINCT` are computed here over the scanned rows (as MySQL's SQL layer does
//! above its storage engine); an `UPDATE` reads the row and writes the new image; `DELETE` and
//! `INSERT` are single row writes. Statement counts follow sysbench: each `SELECT` is a read,
//! each `UPDATE`/`DELETE`/`INSERT` a write, `BEGIN` and `COMMIT` are "other". A single-statement
//! update runs in its own transaction (autocommit), counted as one write.

use std::sync::atomic::{AtomicI64, Ordering};

use talus_table::{Row, Scan, Value};

use super::config::{Config, Fault};
use super::schema::{SbRand, C, ID, K};
use super::workloads::Kind;
use crate::oltp::engine::{Lease, OResult, OltpError, Session};

/// Statements of one event: reads, writes, other.
pub type Counts = [u64; 3];

/// One thread's state for a test.
pub struct Worker<'a, S: Session> {
    /// The thread's session.
    pub session: Lease<'a, S>,
    rng: SbRand,
    cfg: &'a Config,
    /// Per table, the next id `insert` uses (shared by the threads).
    next_ids: &'a [AtomicI64],
    /// Folds what the queries return, so no read is dead code.
    pub sink: u64,
}

fn text_len(v: Option<&Value>) -> u64 {
    match v {
        Some(Value::Varchar(s)) => s.len() as u64,
        _ => 0,
    }
}

fn int(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::I32(x)) => i64::from(*x),
        Some(Value::I64(x)) => *x,
        _ => 0,
    }
}

impl<'a, S: Session> Worker<'a, S> {
    /// A worker with `session`, seeded with `seed`.
    pub fn new(
        session: Lease<'a, S>,
        cfg: &'a Config,
        next_ids: &'a [AtomicI64],
        seed: u64,
        thread: u64,
    ) -> Self {
        Worker { session, rng: SbRand::new(seed, thread), cfg, next_ids, sink: 0 }
    }

    fn table(&mut self) -> usize {
        self.rng.uniform(0, self.cfg.tables as u64 - 1) as usize
    }

    /// `sysbench.rand.default(1, table_size)`: an id (or a `k` value) from `--rand_type`.
    fn id(&mut self) -> i64 {
        self.rng.default(&self.cfg.dist, 1, self.cfg.table_size) as i64
    }

    /// `--random_points` ids (or `k` values) for an IN list.
    fn points(&mut self) -> Vec<i64> {
        (0..self.cfg.random_points).map(|_| self.id()).collect()
    }

    /// Runs one event of `kind`; returns its statement counts. On an error the caller rolls
    /// back (a [`OltpError::Conflict`] or [`OltpError::Duplicate`] is sysbench's "ignored
    /// error": the event is dropped and the next one starts).
    pub fn event(&mut self, kind: Kind) -> OResult<Counts> {
        let mut c = [0u64; 3];
        match kind {
            Kind::PointQuery => {
                let t = self.table();
                self.point_select(t)?;
                c[0] = 1;
            }
            Kind::RandomPointsPk | Kind::HotPoints => {
                let t = self.table();
                let pks: Vec<Vec<Value>> = if kind == Kind::HotPoints {
                    let hi = self.cfg.hot_points.min(self.cfg.table_size);
                    (0..self.cfg.random_points)
                        .map(|_| vec![Value::I64(self.rng.uniform(1, hi) as i64)])
                        .collect()
                } else {
                    self.points().into_iter().map(|id| vec![Value::I64(id)]).collect()
                };
                for r in self.session.get_many(t, &pks)?.iter().flatten() {
                    self.sink += text_len(r.get(C));
                }
                c[0] = 1;
            }
            Kind::RandomPointsSi => {
                let t = self.table();
                for k in self.points() {
                    let k = [Value::I32(k as i32)];
                    let s = Scan { index: &self.k_index(t), from: &k, to: &k, ..Scan::index("") };
                    let sink = &mut self.sink;
                    self.session.scan(t, &s, |r| *sink += text_len(r.get(C)))?;
                }
                c[0] = 1;
            }
            Kind::PointsPk { covered } => {
                // The primary key is clustered: both read the row; `covered` decodes only id.
                let t = self.table();
                let pks: Vec<Vec<Value>> =
                    self.points().into_iter().map(|id| vec![Value::I64(id)]).collect();
                for r in self.session.get_many(t, &pks)?.iter().flatten() {
                    self.sink += int(r.get(ID)) as u64;
                    if !covered {
                        self.sink += text_len(r.get(C));
                    }
                }
                c[0] = 1;
            }
            Kind::PointsSi { covered } => {
                let t = self.table();
                let ix = self.k_index(t);
                let cols: &[&str] = if covered { &["k"] } else { &["k", "c"] };
                for k in self.points() {
                    let k = [Value::I32(k as i32)];
                    let s = Scan {
                        index: &ix,
                        from: &k,
                        to: &k,
                        columns: Some(cols),
                        ..Scan::index("")
                    };
                    let sink = &mut self.sink;
                    self.session.scan(t, &s, |r| {
                        *sink += int(r.first()) as u64 + text_len(r.get(1));
                    })?;
                }
                c[0] = 1;
            }
            Kind::RangeCoveredPk(n) => {
                let t = self.table();
                self.range(t, "PRIMARY", n, &["id"], |rows| {
                    rows.iter().map(|r| int(r.first()) as u64).sum()
                })?;
                c[0] = 1;
            }
            Kind::RangePk(n) => {
                let t = self.table();
                self.range(t, "PRIMARY", n, &["c"], |rows| {
                    rows.iter().map(|r| text_len(r.first())).sum()
                })?;
                c[0] = 1;
            }
            Kind::RangeCoveredSi(n) => {
                let t = self.table();
                let ix = self.k_index(t);
                self.range(t, &ix, n, &["id", "k"], |rows| {
                    rows.iter().map(|r| int(r.first()) as u64).sum()
                })?;
                c[0] = 1;
            }
            Kind::RangeNotCoveredSi(n) => {
                let t = self.table();
                let ix = self.k_index(t);
                self.range(t, &ix, n, &["c"], |rows| {
                    rows.iter().map(|r| text_len(r.first())).sum()
                })?;
                c[0] = 1;
            }
            Kind::Scan => {
                let t = self.table();
                let mut matched = 0u64;
                let s = Scan { columns: Some(&["c"]), ..Scan::index("PRIMARY") };
                self.session.scan(t, &s, |r| {
                    // WHERE LENGTH(c) < 0: nothing matches, every row is read.
                    if (text_len(r.first()) as i64) < 0 {
                        matched += 1;
                    }
                })?;
                self.sink += matched;
                c[0] = 1;
            }
            Kind::ReadOnly | Kind::ReadWrite | Kind::WriteOnly => self.transaction(kind, &mut c)?,
            Kind::UpdateIndex | Kind::UpdateNonIndex => {
                let t = self.table();
                let id = self.id();
                self.session.begin(false)?;
                self.update(t, id, kind == Kind::UpdateIndex)?;
                self.session.commit()?;
                c[1] = 1;
            }
            Kind::UpdateInlist => {
                let t = self.table();
                let ids = self.points();
                self.session.begin(false)?;
                for id in ids {
                    self.update(t, id, false)?;
                }
                self.session.commit()?;
                c[1] = 1;
            }
            Kind::UpdateOne | Kind::UpdateZipf => {
                let t = self.table();
                let id = if kind == Kind::UpdateOne {
                    1
                } else {
                    self.rng.default(&self.cfg.zipf, 1, self.cfg.table_size) as i64
                };
                self.session.begin(false)?;
                self.update(t, id, false)?;
                self.session.commit()?;
                c[1] = 1;
            }
            Kind::Insert => {
                let t = self.table();
                let id = self.next_ids[t].fetch_add(1, Ordering::Relaxed);
                let row = self.rng.row(id, self.cfg.table_size);
                self.session.insert(t, &row)?;
                c[1] = 1;
            }
            Kind::Delete => {
                let t = self.table();
                let id = self.id();
                self.session.delete(t, &[Value::I64(id)])?;
                c[1] = 1;
            }
        }
        Ok(c)
    }

    fn k_index(&self, t: usize) -> String {
        format!("k_{}", t + 1)
    }

    fn point_select(&mut self, t: usize) -> OResult<()> {
        let id = self.id();
        if let Some(r) = self.session.get(t, &[Value::I64(id)])? {
            self.sink += text_len(r.get(C));
        }
        Ok(())
    }

    /// `index BETWEEN x AND x+n-1` returning `cols`; `fold` digests the rows.
    fn range(
        &mut self,
        t: usize,
        index: &str,
        n: u64,
        cols: &[&str],
        fold: impl FnOnce(&[Row]) -> u64,
    ) -> OResult<()> {
        let lo = self.id();
        let hi = lo + n as i64 - 1;
        let (from, to) = if index == "PRIMARY" {
            ([Value::I64(lo)], [Value::I64(hi)])
        } else {
            let clamp = |v: i64| Value::I32(v.min(i64::from(i32::MAX)) as i32);
            ([clamp(lo)], [clamp(hi)])
        };
        let s = Scan { index, from: &from, to: &to, columns: Some(cols), ..Scan::index("") };
        let mut rows = Vec::with_capacity(n.min(4096) as usize);
        self.session.scan(t, &s, |r| rows.push(r))?;
        self.sink += fold(&rows);
        Ok(())
    }

    /// `UPDATE SET k=k+1` (`index`) or `SET c=?` on row `id`, if it exists.
    fn update(&mut self, t: usize, id: i64, index: bool) -> OResult<()> {
        let Some(old) = self.session.get(t, &[Value::I64(id)])? else { return Ok(()) };
        let mut new = old.clone();
        if index {
            let k = match old.get(K) {
                Some(Value::I32(k)) => *k,
                other => return Err(OltpError::Failed(format!("sbtest k is {other:?}"))),
            };
            new[K] = Value::I32(k.wrapping_add(1));
        } else {
            new[C] = Value::Varchar(self.rng.c());
        }
        self.session.update(t, &old, &new)?;
        Ok(())
    }

    /// sysbench's oltp_read_only / read_write / write_only transaction.
    fn transaction(&mut self, kind: Kind, c: &mut Counts) -> OResult<()> {
        let cfg = self.cfg;
        let trx = !cfg.skip_trx;
        if trx {
            self.session.begin(kind == Kind::ReadOnly)?;
            c[2] += 1;
        }
        if kind != Kind::WriteOnly {
            for _ in 0..cfg.point_selects {
                let t = self.table();
                self.point_select(t)?;
                c[0] += 1;
            }
            if cfg.range_selects {
                let n = cfg.range_size;
                for _ in 0..cfg.simple_ranges {
                    let t = self.table();
                    self.range(t, "PRIMARY", n, &["c"], |rows| rows.len() as u64)?;
                    c[0] += 1;
                }
                for _ in 0..cfg.sum_ranges {
                    let t = self.table();
                    self.range(t, "PRIMARY", n, &["k"], |rows| {
                        rows.iter().map(|r| int(r.first())).sum::<i64>() as u64
                    })?;
                    c[0] += 1;
                }
                for _ in 0..cfg.order_ranges {
                    let t = self.table();
                    self.range(t, "PRIMARY", n, &["c"], |rows| {
                        let mut v: Vec<&Value> = rows.iter().filter_map(|r| r.first()).collect();
                        v.sort_by(|a, b| cmp_text(a, b));
                        v.len() as u64
                    })?;
                    c[0] += 1;
                }
                for _ in 0..cfg.distinct_ranges {
                    let t = self.table();
                    self.range(t, "PRIMARY", n, &["c"], |rows| {
                        let mut v: Vec<&Value> = rows.iter().filter_map(|r| r.first()).collect();
                        v.sort_by(|a, b| cmp_text(a, b));
                        v.dedup();
                        v.len() as u64
                    })?;
                    c[0] += 1;
                }
            }
        }
        if kind != Kind::ReadOnly {
            for _ in 0..cfg.index_updates {
                let (t, id) = (self.table(), self.id());
                self.update(t, id, true)?;
                c[1] += 1;
            }
            for _ in 0..cfg.non_index_updates {
                let (t, id) = (self.table(), self.id());
                self.update(t, id, false)?;
                c[1] += 1;
            }
            for _ in 0..cfg.delete_inserts {
                let (t, id) = (self.table(), self.id());
                self.session.delete(t, &[Value::I64(id)])?;
                c[1] += 1;
                if cfg.fault != Some(Fault::ReadWriteSkipsInsert) {
                    let row = self.rng.row(id, cfg.table_size);
                    self.session.insert(t, &row)?;
                    c[1] += 1;
                }
            }
        }
        if trx {
            self.session.commit()?;
            c[2] += 1;
        }
        Ok(())
    }
}

fn cmp_text(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Varchar(x), Value::Varchar(y)) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    }
}

/// The largest id in table `t` (0 if empty), for `insert`'s next id.
pub fn max_id<S: Session>(s: &mut S, t: usize) -> OResult<i64> {
    let mut max = 0;
    let sc = Scan {
        columns: Some(&["id"]),
        dir: talus_table::Direction::Reverse,
        limit: 1,
        ..Scan::index("PRIMARY")
    };
    s.scan(t, &sc, |r| max = int(r.get(ID)))?;
    Ok(max)
}

//! The five TPC-C transactions (clauses 2.4 to 2.8), written once over the handler interface
//! of [`crate::oltp::engine`], so Talus and SQLite receive the same row operations.
//!
//! Inputs are drawn first ([`Input`]), so a transaction that hits a write-write conflict is
//! retried with the same inputs (clause 5.2.5: a retried transaction is the same business
//! transaction). Each `exec` runs in one engine transaction: NewOrder, Payment and Delivery as
//! writers, OrderStatus and StockLevel read-only. A NewOrder whose last item is the unused
//! item id rolls back (the spec's 1%) and returns [`Outcome::RolledBack`]. Reads that the
//! spec writes as `SELECT ... FOR UPDATE` are plain reads: Talus detects the conflict at
//! commit, SQLite serializes writers. Delivery runs inline (not queued), as sysbench-tpcc does.

use talus_table::{Direction, Row, Scan, Value};

use super::config::{Config, Fault};
use super::random::{last_name, TpccRand, C_ID, C_ITEM, C_LAST_RUN};
use super::schema::{c, d, i, o, ol, s, w, CUSTOMER, CUSTOMER_BY_NAME, DISTRICT, HISTORY, ITEM};
use super::schema::{NEW_ORDER, ORDERS, ORDERS_BY_CUSTOMER, ORDER_LINE, STOCK, WAREHOUSE};
use crate::oltp::engine::{OResult, OltpError, RowExt, Session};

/// The transaction types, in the order of the mix and of the latency histograms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// New-Order.
    NewOrder = 0,
    /// Payment.
    Payment = 1,
    /// Order-Status.
    OrderStatus = 2,
    /// Delivery.
    Delivery = 3,
    /// Stock-Level.
    StockLevel = 4,
}

/// Every kind, by index.
pub const KINDS: [Kind; 5] =
    [Kind::NewOrder, Kind::Payment, Kind::OrderStatus, Kind::Delivery, Kind::StockLevel];

impl Kind {
    /// Short name for output.
    pub fn name(self) -> &'static str {
        ["NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel"][self as usize]
    }

    /// Picks a kind with the mix's weights: 45 / 43 / 4 / 4 / 4.
    pub fn draw(r: &mut TpccRand) -> Kind {
        match r.uniform(1, 100) {
            1..=45 => Kind::NewOrder,
            46..=88 => Kind::Payment,
            89..=92 => Kind::OrderStatus,
            93..=96 => Kind::Delivery,
            _ => Kind::StockLevel,
        }
    }
}

/// How a customer is chosen.
#[derive(Debug, Clone)]
pub enum CustomerKey {
    /// By id.
    Id(i64),
    /// By last name (the middle one of those with that name, by first name).
    Last(String),
}

/// One transaction's inputs.
#[derive(Debug, Clone)]
pub enum Input {
    /// Warehouse, district, customer, items as (item id, supply warehouse, quantity).
    NewOrder { w: i64, d: i64, c: i64, items: Vec<(i64, i64, i64)> },
    /// Warehouse, district, customer's warehouse and district, customer, amount in cents.
    Payment { w: i64, d: i64, cw: i64, cd: i64, c: CustomerKey, amount: i64 },
    /// Warehouse, district, customer.
    OrderStatus { w: i64, d: i64, c: CustomerKey },
    /// Warehouse, carrier.
    Delivery { w: i64, carrier: i64 },
    /// Warehouse, district, threshold.
    StockLevel { w: i64, d: i64, threshold: i64 },
}

/// How a transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Committed.
    Committed,
    /// The NewOrder with an unused item id, rolled back as the spec asks.
    RolledBack,
}

fn other_warehouse(r: &mut TpccRand, w: i64, n: i64) -> i64 {
    if n == 1 {
        return w;
    }
    let x = r.uniform(1, n - 1);
    if x >= w {
        x + 1
    } else {
        x
    }
}

fn customer_key(r: &mut TpccRand, cfg: &Config) -> CustomerKey {
    if r.pct(60) {
        let n = r.nurand(255, 0, 999, C_LAST_RUN);
        CustomerKey::Last(last_name(n % cfg.customers.min(1000)))
    } else {
        CustomerKey::Id(r.nurand(1023, 1, cfg.customers, C_ID))
    }
}

/// Draws the inputs of a `kind` transaction (clauses 2.4.1, 2.5.1, 2.6.1, 2.7.1, 2.8.1).
pub fn draw(kind: Kind, r: &mut TpccRand, cfg: &Config) -> Input {
    let nw = cfg.warehouses;
    let w = r.uniform(1, nw);
    let dist = r.uniform(1, Config::DISTRICTS);
    match kind {
        Kind::NewOrder => {
            let c = r.nurand(1023, 1, cfg.customers, C_ID);
            let n = r.uniform(5, 15);
            let rollback = r.pct(1);
            let items = (0..n)
                .map(|k| {
                    let id = if rollback && k == n - 1 {
                        cfg.items + 1
                    } else {
                        r.nurand(8191, 1, cfg.items, C_ITEM)
                    };
                    let supply = if r.pct(1) { other_warehouse(r, w, nw) } else { w };
                    (id, supply, r.uniform(1, 10))
                })
                .collect();
            Input::NewOrder { w, d: dist, c, items }
        }
        Kind::Payment => {
            let (cw, cd) =
                if r.pct(85) { (w, dist) } else { (other_warehouse(r, w, nw), r.uniform(1, 10)) };
            let c = customer_key(r, cfg);
            Input::Payment { w, d: dist, cw, cd, c, amount: r.uniform(100, 500_000) }
        }
        Kind::OrderStatus => Input::OrderStatus { w, d: dist, c: customer_key(r, cfg) },
        Kind::Delivery => Input::Delivery { w, carrier: r.uniform(1, 10) },
        Kind::StockLevel => Input::StockLevel { w, d: dist, threshold: r.uniform(10, 20) },
    }
}

fn vi(x: i64) -> Value {
    Value::I32(x as i32)
}

fn now() -> Value {
    let us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    Value::DateTime(us)
}

fn missing(what: &str) -> OltpError {
    OltpError::Failed(format!("tpcc: {what} is missing (the database is not a loaded TPC-C one)"))
}

/// Reads a row that must exist.
fn must<S: Session>(sess: &mut S, t: usize, pk: &[Value], what: &str) -> OResult<Row> {
    sess.get(t, pk)?.ok_or_else(|| missing(what))
}

/// The customer id of `key` in warehouse `w`, district `dist`; `None` if no customer has that
/// last name (only possible with `--customers` below 1000).
fn customer_id<S: Session>(
    sess: &mut S,
    w: i64,
    dist: i64,
    key: &CustomerKey,
) -> OResult<Option<i64>> {
    match key {
        CustomerKey::Id(id) => Ok(Some(*id)),
        CustomerKey::Last(name) => {
            let p = [vi(w), vi(dist), Value::Varchar(name.clone())];
            let sc = Scan {
                index: CUSTOMER_BY_NAME,
                from: &p,
                to: &p,
                columns: Some(&["c_id"]),
                ..Scan::index("")
            };
            let mut ids = Vec::new();
            sess.scan(CUSTOMER, &sc, |r| ids.push(r.int(0)))?;
            // Sorted by first name (the index order); the spec takes position ceil(n / 2).
            match ids.len() {
                0 => Ok(None),
                n => ids[(n - 1) / 2].clone().map(Some),
            }
        }
    }
}

/// Runs `input` as one transaction on `sess`. On an error the transaction may still be open;
/// the caller rolls back.
pub fn exec<S: Session>(sess: &mut S, input: &Input, cfg: &Config, h_id: i64) -> OResult<Outcome> {
    match input {
        Input::NewOrder { w, d, c, items } => new_order(sess, cfg, *w, *d, *c, items),
        Input::Payment { w, d, cw, cd, c, amount } => {
            payment(sess, cfg, (*w, *d), (*cw, *cd), c, *amount, h_id)
        }
        Input::OrderStatus { w, d, c } => order_status(sess, *w, *d, c),
        Input::Delivery { w, carrier } => delivery(sess, *w, *carrier),
        Input::StockLevel { w, d, threshold } => stock_level(sess, *w, *d, *threshold),
    }
}

fn new_order<S: Session>(
    sess: &mut S,
    cfg: &Config,
    wid: i64,
    did: i64,
    cid: i64,
    items: &[(i64, i64, i64)],
) -> OResult<Outcome> {
    sess.begin(false)?;
    let wh = must(sess, WAREHOUSE, &[vi(wid)], "warehouse")?;
    let _w_tax = wh.int(w::TAX)?;
    let dist = must(sess, DISTRICT, &[vi(wid), vi(did)], "district")?;
    let _d_tax = dist.int(d::TAX)?;
    let o_id = dist.int(d::NEXT_O_ID)?;
    let mut nd = dist.clone();
    nd[d::NEXT_O_ID] = vi(o_id + 1);
    sess.update(DISTRICT, &dist, &nd)?;
    let cust = must(sess, CUSTOMER, &[vi(wid), vi(did), vi(cid)], "customer")?;
    let _discount = cust.int(c::DISCOUNT)?;
    let all_local = items.iter().all(|x| x.1 == wid);
    let entry = now();
    let ord = vec![
        vi(o_id),
        vi(did),
        vi(wid),
        vi(cid),
        entry,
        Value::Null,
        vi(items.len() as i64),
        vi(i64::from(all_local)),
    ];
    sess.insert(ORDERS, &ord)?;
    sess.insert(NEW_ORDER, &vec![vi(o_id), vi(did), vi(wid)])?;
    for (n, &(item, supply, qty)) in items.iter().enumerate() {
        let Some(it) = sess.get(ITEM, &[vi(item)])? else {
            sess.rollback()?;
            return Ok(Outcome::RolledBack);
        };
        let price = it.int(i::PRICE)?;
        let st = must(sess, STOCK, &[vi(supply), vi(item)], "stock")?;
        let q = st.int(s::QUANTITY)?;
        let mut ns = st.clone();
        ns[s::QUANTITY] = vi(if q >= qty + 10 { q - qty } else { q - qty + 91 });
        ns[s::YTD] = Value::I64(st.int(s::YTD)? + qty);
        ns[s::ORDER_CNT] = vi(st.int(s::ORDER_CNT)? + 1);
        if supply != wid {
            ns[s::REMOTE_CNT] = vi(st.int(s::REMOTE_CNT)? + 1);
        }
        sess.update(STOCK, &st, &ns)?;
        let dist_info = st.get(s::DIST_01 + did as usize - 1).cloned().unwrap_or(Value::Null);
        if cfg.fault == Some(Fault::NewOrderSkipsOrderLine) && n + 1 == items.len() {
            continue;
        }
        let line = vec![
            vi(o_id),
            vi(did),
            vi(wid),
            vi(n as i64 + 1),
            vi(item),
            vi(supply),
            Value::Null,
            vi(qty),
            Value::I64(qty * price),
            dist_info,
        ];
        sess.insert(ORDER_LINE, &line)?;
    }
    sess.commit()?;
    Ok(Outcome::Committed)
}

fn payment<S: Session>(
    sess: &mut S,
    cfg: &Config,
    (wid, did): (i64, i64),
    (cw, cd): (i64, i64),
    key: &CustomerKey,
    amount: i64,
    h_id: i64,
) -> OResult<Outcome> {
    sess.begin(false)?;
    let wh = must(sess, WAREHOUSE, &[vi(wid)], "warehouse")?;
    let mut nw = wh.clone();
    nw[w::YTD] = Value::I64(wh.int(w::YTD)? + amount);
    sess.update(WAREHOUSE, &wh, &nw)?;
    let dist = must(sess, DISTRICT, &[vi(wid), vi(did)], "district")?;
    if cfg.fault != Some(Fault::PaymentSkipsDistrictYtd) {
        let mut nd = dist.clone();
        nd[d::YTD] = Value::I64(dist.int(d::YTD)? + amount);
        sess.update(DISTRICT, &dist, &nd)?;
    }
    let cid = match customer_id(sess, cw, cd, key)? {
        Some(id) => id,
        None => 1 + (amount % cfg.customers),
    };
    let cust = must(sess, CUSTOMER, &[vi(cw), vi(cd), vi(cid)], "customer")?;
    let mut nc = cust.clone();
    nc[c::BALANCE] = Value::I64(cust.int(c::BALANCE)? - amount);
    nc[c::YTD_PAYMENT] = Value::I64(cust.int(c::YTD_PAYMENT)? + amount);
    nc[c::PAYMENT_CNT] = vi(cust.int(c::PAYMENT_CNT)? + 1);
    if cust.text(c::CREDIT)? == "BC" {
        let mut data = format!("{cid} {cd} {cw} {did} {wid} {}.{:02}|", amount / 100, amount % 100);
        data.push_str(cust.text(c::DATA)?);
        data.truncate(500);
        nc[c::DATA] = Value::Varchar(data);
    }
    sess.update(CUSTOMER, &cust, &nc)?;
    let h_data = format!("{}    {}", wh.text(w::NAME)?, dist.text(d::NAME)?);
    let h = vec![
        Value::I64(h_id),
        vi(cid),
        vi(cd),
        vi(cw),
        vi(did),
        vi(wid),
        now(),
        Value::I64(amount),
        Value::Varchar(h_data),
    ];
    sess.insert(HISTORY, &h)?;
    sess.commit()?;
    Ok(Outcome::Committed)
}

fn order_status<S: Session>(
    sess: &mut S,
    wid: i64,
    did: i64,
    key: &CustomerKey,
) -> OResult<Outcome> {
    sess.begin(true)?;
    let cid = customer_id(sess, wid, did, key)?.unwrap_or(1);
    let _cust = must(sess, CUSTOMER, &[vi(wid), vi(did), vi(cid)], "customer")?;
    let p = [vi(wid), vi(did), vi(cid)];
    let last = Scan {
        index: ORDERS_BY_CUSTOMER,
        from: &p,
        to: &p,
        dir: Direction::Reverse,
        columns: Some(&["o_id"]),
        limit: 1,
    };
    let mut o_id = None;
    sess.scan(ORDERS, &last, |r| o_id = Some(r.int(0)))?;
    if let Some(o_id) = o_id.transpose()? {
        let _ord = must(sess, ORDERS, &[vi(wid), vi(did), vi(o_id)], "order")?;
        let k = [vi(wid), vi(did), vi(o_id)];
        let lines = Scan { from: &k, to: &k, ..Scan::index("PRIMARY") };
        sess.scan(ORDER_LINE, &lines, |_| {})?;
    }
    sess.commit()?;
    Ok(Outcome::Committed)
}

fn delivery<S: Session>(sess: &mut S, wid: i64, carrier: i64) -> OResult<Outcome> {
    sess.begin(false)?;
    for did in 1..=Config::DISTRICTS {
        let p = [vi(wid), vi(did)];
        let oldest = Scan {
            from: &p,
            to: &p,
            columns: Some(&["no_o_id"]),
            limit: 1,
            ..Scan::index("PRIMARY")
        };
        let mut no = None;
        sess.scan(NEW_ORDER, &oldest, |r| no = Some(r.int(0)))?;
        let Some(o_id) = no.transpose()? else { continue };
        if !sess.delete(NEW_ORDER, &[vi(wid), vi(did), vi(o_id)])? {
            return Err(OltpError::Conflict(format!("new order {wid}/{did}/{o_id} is gone")));
        }
        let ord = must(sess, ORDERS, &[vi(wid), vi(did), vi(o_id)], "order")?;
        let cid = ord.int(o::C_ID)?;
        let mut no2 = ord.clone();
        no2[o::CARRIER_ID] = vi(carrier);
        sess.update(ORDERS, &ord, &no2)?;
        let k = [vi(wid), vi(did), vi(o_id)];
        let mut lines = Vec::new();
        sess.scan(ORDER_LINE, &Scan { from: &k, to: &k, ..Scan::index("PRIMARY") }, |r| {
            lines.push(r)
        })?;
        let when = now();
        let mut total = 0;
        for line in lines {
            total += line.int(ol::AMOUNT)?;
            let mut nl = line.clone();
            nl[ol::DELIVERY_D] = when.clone();
            sess.update(ORDER_LINE, &line, &nl)?;
        }
        let cust = must(sess, CUSTOMER, &[vi(wid), vi(did), vi(cid)], "customer")?;
        let mut nc = cust.clone();
        nc[c::BALANCE] = Value::I64(cust.int(c::BALANCE)? + total);
        nc[c::DELIVERY_CNT] = vi(cust.int(c::DELIVERY_CNT)? + 1);
        sess.update(CUSTOMER, &cust, &nc)?;
    }
    sess.commit()?;
    Ok(Outcome::Committed)
}

fn stock_level<S: Session>(sess: &mut S, wid: i64, did: i64, threshold: i64) -> OResult<Outcome> {
    sess.begin(true)?;
    let dist = must(sess, DISTRICT, &[vi(wid), vi(did)], "district")?;
    let next = dist.int(d::NEXT_O_ID)?;
    let (from, to) = ([vi(wid), vi(did), vi(next - 20)], [vi(wid), vi(did), vi(next - 1)]);
    let recent =
        Scan { from: &from, to: &to, columns: Some(&["ol_i_id"]), ..Scan::index("PRIMARY") };
    let mut ids: Vec<i64> = Vec::new();
    let mut bad = None;
    sess.scan(ORDER_LINE, &recent, |r| match r.int(0) {
        Ok(x) => ids.push(x),
        Err(e) => bad = Some(e),
    })?;
    if let Some(e) = bad {
        return Err(e);
    }
    ids.sort_unstable();
    ids.dedup();
    let keys: Vec<Vec<Value>> = ids.iter().map(|&id| vec![vi(wid), vi(id)]).collect();
    let mut low = 0;
    for st in sess.get_many(STOCK, &keys)?.into_iter().flatten() {
        if st.int(s::QUANTITY)? < threshold {
            low += 1;
        }
    }
    std::hint::black_box(low);
    sess.commit()?;
    Ok(Outcome::Committed)
}

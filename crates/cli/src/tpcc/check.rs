//! The consistency conditions of clause 3.3.2, checked on one consistent view (a read-only
//! transaction) through the handler interface, the same code for both engines:
//!
//! 1. `W_YTD = sum(D_YTD)` for each warehouse;
//! 2. `D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)` for each district (the new-order part when
//!    the district has undelivered orders);
//! 3. `max(NO_O_ID) - min(NO_O_ID) + 1 =` the number of new_order rows, for each district;
//! 4. `sum(O_OL_CNT) =` the number of order_line rows, for each district.
//!
//! Returns a line per condition with how many warehouses or districts it covered, or the
//! first violation.

use talus_table::{Scan, Value};

use super::config::Config;
use super::schema::{d, w, DISTRICT, NEW_ORDER, ORDERS, ORDER_LINE, WAREHOUSE};
use crate::oltp::engine::{OResult, OltpError, RowExt, Session};

fn vi(x: i64) -> Value {
    Value::I32(x as i32)
}

/// Aggregates of one district.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct District {
    next_o_id: i64,
    ytd: i64,
    max_o_id: Option<i64>,
    sum_ol_cnt: i64,
    new_orders: i64,
    min_no: Option<i64>,
    max_no: Option<i64>,
    order_lines: i64,
}

fn district<S: Session>(s: &mut S, wid: i64, did: i64) -> OResult<District> {
    let row = s
        .get(DISTRICT, &[vi(wid), vi(did)])?
        .ok_or_else(|| OltpError::Failed(format!("district {wid}/{did} is missing")))?;
    let mut x = District {
        next_o_id: row.int(d::NEXT_O_ID)?,
        ytd: row.int(d::YTD)?,
        ..District::default()
    };
    let p = [vi(wid), vi(did)];
    let mut err = None;
    let all = Scan { from: &p, to: &p, ..Scan::index("PRIMARY") };
    s.scan(ORDERS, &Scan { columns: Some(&["o_id", "o_ol_cnt"]), ..all }, |r| {
        match (r.int(0), r.int(1)) {
            (Ok(id), Ok(n)) => {
                x.max_o_id = Some(x.max_o_id.map_or(id, |m| m.max(id)));
                x.sum_ol_cnt += n;
            }
            (Err(e), _) | (_, Err(e)) => err = Some(e),
        }
    })?;
    s.scan(NEW_ORDER, &Scan { columns: Some(&["no_o_id"]), ..all }, |r| match r.int(0) {
        Ok(id) => {
            x.new_orders += 1;
            x.min_no = Some(x.min_no.map_or(id, |m| m.min(id)));
            x.max_no = Some(x.max_no.map_or(id, |m| m.max(id)));
        }
        Err(e) => err = Some(e),
    })?;
    s.scan(ORDER_LINE, &Scan { columns: Some(&["ol_number"]), ..all }, |_| x.order_lines += 1)?;
    match err {
        Some(e) => Err(e),
        None => Ok(x),
    }
}

/// Checks conditions 1 to 4 over every warehouse and district.
pub fn check<S: Session>(s: &mut S, cfg: &Config) -> Result<Vec<String>, String> {
    s.begin(true).map_err(|e| e.to_string())?;
    let r = check_in(s, cfg);
    let _ = s.rollback();
    r
}

fn check_in<S: Session>(s: &mut S, cfg: &Config) -> Result<Vec<String>, String> {
    let e = |e: OltpError| e.to_string();
    let mut districts = 0;
    let mut with_new = 0;
    for wid in 1..=cfg.warehouses {
        let wh = s
            .get(WAREHOUSE, &[vi(wid)])
            .map_err(e)?
            .ok_or_else(|| format!("warehouse {wid} is missing"))?;
        let w_ytd = wh.int(w::YTD).map_err(e)?;
        let mut sum = 0;
        for did in 1..=Config::DISTRICTS {
            let x = district(s, wid, did).map_err(e)?;
            sum += x.ytd;
            districts += 1;
            let at = format!("warehouse {wid} district {did}");
            if x.max_o_id != Some(x.next_o_id - 1) {
                return Err(format!(
                    "condition 2 fails at {at}: D_NEXT_O_ID - 1 = {} but max(O_ID) = {:?}",
                    x.next_o_id - 1,
                    x.max_o_id
                ));
            }
            if let (Some(lo), Some(hi)) = (x.min_no, x.max_no) {
                with_new += 1;
                if hi != x.next_o_id - 1 {
                    return Err(format!(
                        "condition 2 fails at {at}: D_NEXT_O_ID - 1 = {} but max(NO_O_ID) = {hi}",
                        x.next_o_id - 1
                    ));
                }
                if hi - lo + 1 != x.new_orders {
                    return Err(format!(
                        "condition 3 fails at {at}: max(NO_O_ID) - min(NO_O_ID) + 1 = {} but \
                         {} new_order rows",
                        hi - lo + 1,
                        x.new_orders
                    ));
                }
            }
            if x.sum_ol_cnt != x.order_lines {
                return Err(format!(
                    "condition 4 fails at {at}: sum(O_OL_CNT) = {} but {} order_line rows",
                    x.sum_ol_cnt, x.order_lines
                ));
            }
        }
        if w_ytd != sum {
            return Err(format!(
                "condition 1 fails at warehouse {wid}: W_YTD = {w_ytd} but sum(D_YTD) = {sum} \
                 (cents)"
            ));
        }
    }
    Ok(vec![
        format!("condition 1 (W_YTD = sum(D_YTD)): ok, {} warehouses", cfg.warehouses),
        format!(
            "condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)): ok, {districts} districts \
             ({with_new} with undelivered orders)"
        ),
        format!("condition 3 (max(NO_O_ID) - min(NO_O_ID) + 1 = new_order rows): ok, {with_new} districts"),
        format!("condition 4 (sum(O_OL_CNT) = order_line rows): ok, {districts} districts"),
    ])
}

//! The TPC-C schema (clause 1.3) as talus-table definitions, which SQLite gets as generated
//! DDL: the nine tables with their primary keys, the customer last-name index and the orders
//! customer index (the two secondary indexes the transactions need).
//!
//! Types: identifiers are `I32`; money is `I64` cents (`DECIMAL(12,2)` exactly, so the
//! consistency conditions compare exact sums); tax and discount rates are `I32` in units of
//! 1/10000 (`DECIMAL(4,4)`); timestamps are `DateTime` (µs); text is `Varchar`. History has no
//! key in the spec; `h_id` (`I64`, increasing) is added as its primary key, as sysbench-tpcc
//! adds an auto-increment id. Column positions are the `const`s below (row order = spec order).

use talus_table::{ColumnDef, ColumnType, IndexDef, TableDef};

/// Table positions in [`tables`].
pub const WAREHOUSE: usize = 0;
/// district.
pub const DISTRICT: usize = 1;
/// customer.
pub const CUSTOMER: usize = 2;
/// history.
pub const HISTORY: usize = 3;
/// new_order.
pub const NEW_ORDER: usize = 4;
/// orders.
pub const ORDERS: usize = 5;
/// order_line.
pub const ORDER_LINE: usize = 6;
/// item.
pub const ITEM: usize = 7;
/// stock.
pub const STOCK: usize = 8;

/// warehouse columns.
pub mod w {
    /// w_name.
    pub const NAME: usize = 1;
    /// w_tax.
    pub const TAX: usize = 7;
    /// w_ytd.
    pub const YTD: usize = 8;
}

/// district columns.
pub mod d {
    /// d_name.
    pub const NAME: usize = 2;
    /// d_tax.
    pub const TAX: usize = 8;
    /// d_ytd.
    pub const YTD: usize = 9;
    /// d_next_o_id.
    pub const NEXT_O_ID: usize = 10;
}

/// customer columns.
pub mod c {
    /// c_credit.
    pub const CREDIT: usize = 13;
    /// c_discount.
    pub const DISCOUNT: usize = 15;
    /// c_balance.
    pub const BALANCE: usize = 16;
    /// c_ytd_payment.
    pub const YTD_PAYMENT: usize = 17;
    /// c_payment_cnt.
    pub const PAYMENT_CNT: usize = 18;
    /// c_delivery_cnt.
    pub const DELIVERY_CNT: usize = 19;
    /// c_data.
    pub const DATA: usize = 20;
}

/// orders columns.
pub mod o {
    /// o_c_id.
    pub const C_ID: usize = 3;
    /// o_carrier_id.
    pub const CARRIER_ID: usize = 5;
}

/// order_line columns.
pub mod ol {
    /// ol_delivery_d.
    pub const DELIVERY_D: usize = 6;
    /// ol_amount.
    pub const AMOUNT: usize = 8;
}

/// item columns.
pub mod i {
    /// i_price.
    pub const PRICE: usize = 3;
}

/// stock columns.
pub mod s {
    /// s_quantity.
    pub const QUANTITY: usize = 2;
    /// s_dist_01 (s_dist_XX is `DIST_01 + XX - 1`).
    pub const DIST_01: usize = 3;
    /// s_ytd.
    pub const YTD: usize = 13;
    /// s_order_cnt.
    pub const ORDER_CNT: usize = 14;
    /// s_remote_cnt.
    pub const REMOTE_CNT: usize = 15;
}

/// The secondary index on customer (w, d, last, first).
pub const CUSTOMER_BY_NAME: &str = "idx_customer";
/// The secondary index on orders (w, d, c, o_id).
pub const ORDERS_BY_CUSTOMER: &str = "idx_orders";

fn def(
    name: &str,
    cols: &[(&str, ColumnType)],
    pk: &[&str],
    idx: Option<(&str, &[&str])>,
) -> TableDef {
    TableDef {
        name: name.into(),
        columns: cols
            .iter()
            .map(|(n, ty)| ColumnDef {
                name: (*n).into(),
                ty: *ty,
                nullable: matches!(*n, "o_carrier_id" | "ol_delivery_d"),
            })
            .collect(),
        primary_key: pk.iter().map(|c| c.to_string()).collect(),
        indexes: idx
            .map(|(n, c)| IndexDef {
                name: n.into(),
                columns: c.iter().map(|x| x.to_string()).collect(),
                unique: false,
            })
            .into_iter()
            .collect(),
    }
}

fn borrow(v: &[(String, ColumnType)]) -> Vec<(&str, ColumnType)> {
    v.iter().map(|(n, t)| (n.as_str(), *t)).collect()
}

/// The nine tables, in the order of the position constants.
pub fn tables() -> Vec<TableDef> {
    use ColumnType::{DateTime as T, Varchar as V, I32, I64};
    let addr = |p: &str| -> Vec<(String, ColumnType)> {
        ["street_1", "street_2", "city", "state", "zip"]
            .iter()
            .map(|f| (format!("{p}_{f}"), V))
            .collect()
    };
    let with_addr = |head: &[(&str, ColumnType)], p: &str, tail: &[(&str, ColumnType)]| {
        let mut v: Vec<(String, ColumnType)> =
            head.iter().map(|(n, t)| (n.to_string(), *t)).collect();
        v.extend(addr(p));
        v.extend(tail.iter().map(|(n, t)| (n.to_string(), *t)));
        v
    };
    let warehouse =
        with_addr(&[("w_id", I32), ("w_name", V)], "w", &[("w_tax", I32), ("w_ytd", I64)]);
    let district = with_addr(
        &[("d_id", I32), ("d_w_id", I32), ("d_name", V)],
        "d",
        &[("d_tax", I32), ("d_ytd", I64), ("d_next_o_id", I32)],
    );
    let customer = with_addr(
        &[
            ("c_id", I32),
            ("c_d_id", I32),
            ("c_w_id", I32),
            ("c_first", V),
            ("c_middle", V),
            ("c_last", V),
        ],
        "c",
        &[
            ("c_phone", V),
            ("c_since", T),
            ("c_credit", V),
            ("c_credit_lim", I64),
            ("c_discount", I32),
            ("c_balance", I64),
            ("c_ytd_payment", I64),
            ("c_payment_cnt", I32),
            ("c_delivery_cnt", I32),
            ("c_data", V),
        ],
    );
    let mut stock: Vec<(String, ColumnType)> =
        vec![("s_i_id".into(), I32), ("s_w_id".into(), I32), ("s_quantity".into(), I32)];
    stock.extend((1..=10).map(|i| (format!("s_dist_{i:02}"), V)));
    stock.extend(
        [("s_ytd", I64), ("s_order_cnt", I32), ("s_remote_cnt", I32), ("s_data", V)]
            .iter()
            .map(|(n, t)| (n.to_string(), *t)),
    );
    let (wv, dv, cv, sv) =
        (borrow(&warehouse), borrow(&district), borrow(&customer), borrow(&stock));
    vec![
        def("warehouse", &wv, &["w_id"], None),
        def("district", &dv, &["d_w_id", "d_id"], None),
        def(
            "customer",
            &cv,
            &["c_w_id", "c_d_id", "c_id"],
            Some((CUSTOMER_BY_NAME, &["c_w_id", "c_d_id", "c_last", "c_first"])),
        ),
        def(
            "history",
            &[
                ("h_id", I64),
                ("h_c_id", I32),
                ("h_c_d_id", I32),
                ("h_c_w_id", I32),
                ("h_d_id", I32),
                ("h_w_id", I32),
                ("h_date", T),
                ("h_amount", I64),
                ("h_data", V),
            ],
            &["h_id"],
            None,
        ),
        def(
            "new_order",
            &[("no_o_id", I32), ("no_d_id", I32), ("no_w_id", I32)],
            &["no_w_id", "no_d_id", "no_o_id"],
            None,
        ),
        def(
            "orders",
            &[
                ("o_id", I32),
                ("o_d_id", I32),
                ("o_w_id", I32),
                ("o_c_id", I32),
                ("o_entry_d", T),
                ("o_carrier_id", I32),
                ("o_ol_cnt", I32),
                ("o_all_local", I32),
            ],
            &["o_w_id", "o_d_id", "o_id"],
            Some((ORDERS_BY_CUSTOMER, &["o_w_id", "o_d_id", "o_c_id", "o_id"])),
        ),
        def(
            "order_line",
            &[
                ("ol_o_id", I32),
                ("ol_d_id", I32),
                ("ol_w_id", I32),
                ("ol_number", I32),
                ("ol_i_id", I32),
                ("ol_supply_w_id", I32),
                ("ol_delivery_d", T),
                ("ol_quantity", I32),
                ("ol_amount", I64),
                ("ol_dist_info", V),
            ],
            &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
            None,
        ),
        def(
            "item",
            &[("i_id", I32), ("i_im_id", I32), ("i_name", V), ("i_price", I64), ("i_data", V)],
            &["i_id"],
            None,
        ),
        def("stock", &sv, &["s_w_id", "s_i_id"], None),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_match_the_definitions() {
        let t = tables();
        let pos = |table: usize, name: &str| t[table].column_index(name).unwrap();
        assert_eq!(t.len(), 9);
        assert_eq!(t[WAREHOUSE].name, "warehouse");
        assert_eq!(t[STOCK].name, "stock");
        assert_eq!((pos(WAREHOUSE, "w_tax"), pos(WAREHOUSE, "w_ytd")), (w::TAX, w::YTD));
        assert_eq!(pos(WAREHOUSE, "w_name"), w::NAME);
        assert_eq!(
            (pos(DISTRICT, "d_name"), pos(DISTRICT, "d_tax"), pos(DISTRICT, "d_ytd")),
            (d::NAME, d::TAX, d::YTD)
        );
        assert_eq!(pos(DISTRICT, "d_next_o_id"), d::NEXT_O_ID);
        for (n, p) in [
            ("c_credit", c::CREDIT),
            ("c_discount", c::DISCOUNT),
            ("c_balance", c::BALANCE),
            ("c_ytd_payment", c::YTD_PAYMENT),
            ("c_payment_cnt", c::PAYMENT_CNT),
            ("c_delivery_cnt", c::DELIVERY_CNT),
            ("c_data", c::DATA),
        ] {
            assert_eq!(pos(CUSTOMER, n), p, "{n}");
        }
        assert_eq!((pos(ORDERS, "o_c_id"), pos(ORDERS, "o_carrier_id")), (o::C_ID, o::CARRIER_ID));
        assert_eq!(pos(ORDER_LINE, "ol_amount"), ol::AMOUNT);
        assert_eq!(pos(ORDER_LINE, "ol_delivery_d"), ol::DELIVERY_D);
        assert_eq!(pos(ITEM, "i_price"), i::PRICE);
        assert_eq!(pos(STOCK, "s_dist_01"), s::DIST_01);
        assert_eq!(pos(STOCK, "s_remote_cnt"), s::REMOTE_CNT);
        assert!(t[ORDERS].columns[o::CARRIER_ID].nullable);
    }
}

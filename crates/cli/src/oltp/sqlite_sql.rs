//! The SQL text SQLite runs for each handler call, generated from the same [`TableDef`] Talus
//! uses. Pure functions, no IO; called by [`super::sqlite_engine`] when a table is registered
//! (the fixed statements) and per call for scans and updates (shapes vary; the session caches
//! the text and rusqlite caches the prepared statements by text).
//!
//! Schema mapping: integer types and `DateTime` are `INTEGER`, `F64` is `REAL`, `Varchar`
//! `TEXT`, `Bytes` `BLOB`. A single-column integer primary key is the rowid (`INTEGER PRIMARY
//! KEY`); any other primary key makes a `WITHOUT ROWID` table. Either way the rows are stored
//! in primary-key order, as Talus stores them. Secondary indexes are `CREATE INDEX` with the
//! same columns (and `DESC` where the definition says so).
//!
//! Scans: a [`Scan`] whose bounds share a prefix of equal values becomes `col = ?` for that
//! prefix and at most one range on the next column (`>=` / `<=`, flipped for a `DESC` column),
//! ordered by the index columns then the primary key (the order of Talus's index entries),
//! with `INDEXED BY` for a secondary index. Bounds that need a multi-column range or a NULL
//! bound are refused (no benchmark issues them).

use std::fmt::Write;

use talus_table::{ColumnType, Direction, IndexDef, Scan, TableDef, Value};

/// The SQLite type of a column type.
pub fn sql_type(t: ColumnType) -> &'static str {
    match t {
        ColumnType::I64 | ColumnType::U64 | ColumnType::I32 | ColumnType::DateTime => "INTEGER",
        ColumnType::F64 => "REAL",
        ColumnType::Varchar => "TEXT",
        ColumnType::Bytes => "BLOB",
    }
}

/// Splits an index column spec (`"c DESC"`) into the name and whether it is descending.
pub fn col_spec(spec: &str) -> (&str, bool) {
    match spec.strip_suffix(" DESC") {
        Some(n) => (n.trim(), true),
        None => (spec.trim(), false),
    }
}

/// True if the table's primary key is its rowid.
pub fn rowid_pk(def: &TableDef) -> bool {
    match def.primary_key.as_slice() {
        [one] => def.columns.iter().any(|c| {
            &c.name == one && matches!(c.ty, ColumnType::I64 | ColumnType::I32) && !c.nullable
        }),
        _ => false,
    }
}

/// `CREATE TABLE` for `def` (its secondary indexes are separate: [`create_index`]).
pub fn create_table(def: &TableDef) -> String {
    let rowid = rowid_pk(def);
    let mut s = format!("CREATE TABLE {} (", def.name);
    for (i, c) in def.columns.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{} {}", c.name, sql_type(c.ty));
        if !c.nullable {
            s.push_str(" NOT NULL");
        }
        if rowid && def.primary_key[0] == c.name {
            s.push_str(" PRIMARY KEY");
        }
    }
    if !rowid {
        let _ = write!(s, ", PRIMARY KEY ({})", def.primary_key.join(", "));
    }
    s.push(')');
    if !rowid {
        s.push_str(" WITHOUT ROWID");
    }
    s
}

/// `CREATE [UNIQUE] INDEX` for `idx` on `table`.
pub fn create_index(table: &str, idx: &IndexDef) -> String {
    let cols: Vec<String> = idx
        .columns
        .iter()
        .map(|c| match col_spec(c) {
            (n, true) => format!("{n} DESC"),
            (n, false) => n.to_string(),
        })
        .collect();
    let unique = if idx.unique { "UNIQUE " } else { "" };
    format!("CREATE {unique}INDEX {} ON {table} ({})", idx.name, cols.join(", "))
}

/// `a = ?1 AND b = ?2 ...` for the primary key, numbering from `first`.
fn pk_where(def: &TableDef, first: usize) -> String {
    let parts: Vec<String> =
        def.primary_key.iter().enumerate().map(|(i, c)| format!("{c} = ?{}", first + i)).collect();
    parts.join(" AND ")
}

/// The fixed statements of one table.
#[derive(Debug, Clone)]
pub struct TableSql {
    /// The definition.
    pub def: TableDef,
    /// Column types, in row order.
    pub types: Vec<ColumnType>,
    /// Row positions of the primary key columns.
    pub pk: Vec<usize>,
    /// `SELECT * ... WHERE pk`.
    pub select: String,
    /// `INSERT INTO ... VALUES (?, ...)`.
    pub insert: String,
    /// `DELETE ... WHERE pk`.
    pub delete: String,
}

impl TableSql {
    /// The statements for `def`.
    pub fn new(def: &TableDef) -> TableSql {
        let n = def.columns.len();
        let qs: Vec<String> = (1..=n).map(|i| format!("?{i}")).collect();
        TableSql {
            def: def.clone(),
            types: def.columns.iter().map(|c| c.ty).collect(),
            pk: def
                .primary_key
                .iter()
                .filter_map(|p| def.columns.iter().position(|c| &c.name == p))
                .collect(),
            select: format!("SELECT * FROM {} WHERE {}", def.name, pk_where(def, 1)),
            insert: format!("INSERT INTO {} VALUES ({})", def.name, qs.join(", ")),
            delete: format!("DELETE FROM {} WHERE {}", def.name, pk_where(def, 1)),
        }
    }

    /// `SELECT * ... WHERE pk IN (?1..?n)` for a single-column primary key.
    pub fn select_in(&self, n: usize) -> Option<String> {
        let [pk] = self.def.primary_key.as_slice() else { return None };
        let qs: Vec<String> = (1..=n).map(|i| format!("?{i}")).collect();
        Some(format!("SELECT * FROM {} WHERE {pk} IN ({})", self.def.name, qs.join(", ")))
    }

    /// `UPDATE ... SET` the columns in `changed` (a bit per column) `WHERE pk`: the set values
    /// are `?1..`, in column order, then the primary key.
    pub fn update(&self, changed: u64) -> String {
        let mut s = format!("UPDATE {} SET ", self.def.name);
        let mut n = 0;
        for (i, c) in self.def.columns.iter().enumerate() {
            if changed & (1 << i) != 0 {
                if n > 0 {
                    s.push_str(", ");
                }
                n += 1;
                let _ = write!(s, "{} = ?{n}", c.name);
            }
        }
        let _ = write!(s, " WHERE {}", pk_where(&self.def, n + 1));
        s
    }

    /// Row positions of the projected columns (`None`: all).
    pub fn projection(&self, columns: Option<&[&str]>) -> Result<Vec<usize>, String> {
        match columns {
            None => Ok((0..self.types.len()).collect()),
            Some(names) => names
                .iter()
                .map(|n| {
                    self.def
                        .column_index(n)
                        .ok_or_else(|| format!("table {}: no column {n}", self.def.name))
                })
                .collect(),
        }
    }

    /// The SQL of scan `s` (parameters: the equal prefix, then the lower and upper bound of the
    /// next column where given, then the limit) and the parameters' values.
    pub fn scan<'v>(&self, s: &Scan<'v>) -> Result<(String, Vec<&'v Value>), String> {
        let d = &self.def;
        // (name, desc) of the key columns in entry order.
        let mut key: Vec<(&str, bool)> = Vec::new();
        let mut hint = String::new();
        if s.index == "PRIMARY" {
            key.extend(d.primary_key.iter().map(|c| (c.as_str(), false)));
        } else {
            let idx = d
                .indexes
                .iter()
                .find(|i| i.name == s.index)
                .ok_or_else(|| format!("table {}: no index {}", d.name, s.index))?;
            key.extend(idx.columns.iter().map(|c| col_spec(c)));
            for p in &d.primary_key {
                if !key.iter().any(|(n, _)| n == p) {
                    key.push((p.as_str(), false));
                }
            }
            hint = format!(" INDEXED BY {}", idx.name);
        }
        if s.from.len().max(s.to.len()) > key.len() {
            return Err(format!("scan of {}: bound longer than the key", s.index));
        }
        if s.from.iter().chain(s.to).any(|v| matches!(v, Value::Null)) {
            return Err(format!("scan of {}: NULL bounds are not supported on sqlite", s.index));
        }
        let eq = s.from.iter().zip(s.to).take_while(|(a, b)| a == b).count();
        if s.from.len() > eq + 1 || s.to.len() > eq + 1 {
            return Err(format!("scan of {}: multi-column range bounds on sqlite", s.index));
        }
        let cols = self.projection(s.columns)?;
        let names: Vec<&str> = cols.iter().map(|&i| d.columns[i].name.as_str()).collect();
        let mut sql = format!("SELECT {} FROM {}{hint}", names.join(", "), d.name);
        let mut params: Vec<&Value> = Vec::new();
        let mut conds: Vec<String> = Vec::new();
        for (i, v) in s.from.iter().take(eq).enumerate() {
            params.push(v);
            conds.push(format!("{} = ?{}", key[i].0, params.len()));
        }
        let (name, desc) = key.get(eq).copied().unwrap_or(("", false));
        if let Some(v) = s.from.get(eq) {
            params.push(v);
            conds.push(format!("{name} {} ?{}", if desc { "<=" } else { ">=" }, params.len()));
        }
        if let Some(v) = s.to.get(eq) {
            params.push(v);
            conds.push(format!("{name} {} ?{}", if desc { ">=" } else { "<=" }, params.len()));
        }
        if !conds.is_empty() {
            let _ = write!(sql, " WHERE {}", conds.join(" AND "));
        }
        let reverse = matches!(s.dir, Direction::Reverse);
        let order: Vec<String> = key
            .iter()
            .map(|(n, desc)| format!("{n} {}", if desc ^ reverse { "DESC" } else { "ASC" }))
            .collect();
        let _ = write!(sql, " ORDER BY {} LIMIT ?{}", order.join(", "), params.len() + 1);
        Ok((sql, params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use talus_table::ColumnDef;

    fn def() -> TableDef {
        let c = |n: &str, ty| ColumnDef { name: n.into(), ty, nullable: false };
        TableDef {
            name: "orders".into(),
            columns: vec![
                c("o_w_id", ColumnType::I32),
                c("o_id", ColumnType::I32),
                c("o_c_id", ColumnType::I32),
                ColumnDef { name: "o_note".into(), ty: ColumnType::Varchar, nullable: true },
            ],
            primary_key: vec!["o_w_id".into(), "o_id".into()],
            indexes: vec![IndexDef {
                name: "idx_orders".into(),
                columns: vec!["o_w_id".into(), "o_c_id DESC".into()],
                unique: false,
            }],
        }
    }

    #[test]
    fn ddl() {
        let d = def();
        assert_eq!(
            create_table(&d),
            "CREATE TABLE orders (o_w_id INTEGER NOT NULL, o_id INTEGER NOT NULL, o_c_id INTEGER \
             NOT NULL, o_note TEXT, PRIMARY KEY (o_w_id, o_id)) WITHOUT ROWID"
        );
        assert_eq!(
            create_index("orders", &d.indexes[0]),
            "CREATE INDEX idx_orders ON orders (o_w_id, o_c_id DESC)"
        );
        let mut one = d.clone();
        one.primary_key = vec!["o_id".into()];
        assert!(create_table(&one).contains("o_id INTEGER NOT NULL PRIMARY KEY"));
        assert!(!create_table(&one).contains("WITHOUT ROWID"));
        let t = TableSql::new(&d);
        assert_eq!(t.select, "SELECT * FROM orders WHERE o_w_id = ?1 AND o_id = ?2");
        assert_eq!(t.insert, "INSERT INTO orders VALUES (?1, ?2, ?3, ?4)");
        assert_eq!(
            t.update(0b1100),
            "UPDATE orders SET o_c_id = ?1, o_note = ?2 WHERE o_w_id = ?3 AND o_id = ?4"
        );
        assert!(t.select_in(3).is_none());
    }

    #[test]
    fn scan_shapes() {
        let t = TableSql::new(&def());
        let (w, lo, hi) = (Value::I32(1), Value::I32(10), Value::I32(20));
        let eq = [w.clone()];
        let (from, to) = ([w.clone(), lo.clone()], [w.clone(), hi.clone()]);
        let s = Scan { from: &from, to: &to, ..Scan::index("PRIMARY") };
        let (sql, p) = t.scan(&s).unwrap();
        assert_eq!(
            sql,
            "SELECT o_w_id, o_id, o_c_id, o_note FROM orders WHERE o_w_id = ?1 AND o_id >= ?2 \
             AND o_id <= ?3 ORDER BY o_w_id ASC, o_id ASC LIMIT ?4"
        );
        assert_eq!(p, vec![&w, &lo, &hi]);
        // A descending index column flips the bound operators and the order.
        let s = Scan {
            index: "idx_orders",
            from: &eq,
            to: &from,
            dir: Direction::Reverse,
            columns: Some(&["o_id"]),
            limit: 1,
        };
        let (sql, _) = t.scan(&s).unwrap();
        assert_eq!(
            sql,
            "SELECT o_id FROM orders INDEXED BY idx_orders WHERE o_w_id = ?1 AND o_c_id >= ?2 \
             ORDER BY o_w_id DESC, o_c_id ASC, o_id DESC LIMIT ?3"
        );
        let none: [Value; 0] = [];
        let s = Scan { from: &none, to: &none, ..Scan::index("PRIMARY") };
        assert!(t
            .scan(&s)
            .unwrap()
            .0
            .ends_with("FROM orders ORDER BY o_w_id ASC, o_id ASC LIMIT ?1"));
        let s = Scan { from: &from, to: &[hi.clone(), lo.clone()], ..Scan::index("PRIMARY") };
        assert!(t.scan(&s).unwrap_err().contains("multi-column"));
        let s = Scan { from: &[Value::Null], ..Scan::index("PRIMARY") };
        assert!(t.scan(&s).unwrap_err().contains("NULL"));
        assert!(t.scan(&Scan::index("nope")).unwrap_err().contains("no index"));
    }
}

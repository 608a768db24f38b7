//! [`Table`]: a handle on one table. Writes go through `write::commit_ops` (one atomic batch
//! each, under the table's write lock); `get` and `get_many` read the latest state without
//! locks; scans are in `scan`.

use std::sync::Arc;

use talus::ReadOptions;

use crate::catalog::CatalogInner;
use crate::error::Result;
use crate::scan::Scan;
use crate::schema::{Direction, Row, TableDef, Value};
use crate::write::{commit_ops, pk_key, Ctx, Op, TableShared};

/// A handle on one table. Cheap to clone; `Send + Sync`. Each call is its own atomic batch.
#[derive(Clone)]
pub struct Table {
    pub(crate) cat: Arc<CatalogInner>,
    pub(crate) shared: Arc<TableShared>,
    /// The definition when the handle was made (writes always use the current one).
    def: Arc<TableDef>,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({})", self.def.name)
    }
}

impl Table {
    pub(crate) fn new(cat: Arc<CatalogInner>, shared: Arc<TableShared>) -> Table {
        let def = Arc::new(shared.meta().def.clone());
        Table { cat, shared, def }
    }

    /// The table's definition as of when this handle was made (indexes created later are
    /// maintained by every handle, and listed by handles made after them).
    pub fn def(&self) -> &TableDef {
        &self.def
    }

    fn one(&self, op: Op<'_>) -> Result<bool> {
        let r = commit_ops(&self.cat, std::slice::from_ref(&self.shared), &[(0, op)], None, None)?;
        Ok(r.first().copied().unwrap_or(false))
    }

    /// Inserts `row`: one batch with the row and its index entries. Refuses a row that does
    /// not fit the schema ([`crate::TableError::Schema`]) and an existing primary or unique key
    /// ([`crate::TableError::DuplicateKey`]); then nothing is written.
    pub fn insert(&self, row: &Row) -> Result<()> {
        self.one(Op::Insert(row)).map(|_| ())
    }

    /// Inserts all `rows` in one batch, all or nothing (a duplicate within `rows` is refused
    /// too).
    pub fn insert_many(&self, rows: &[Row]) -> Result<()> {
        let ops: Vec<(usize, Op<'_>)> = rows.iter().map(|r| (0, Op::Insert(r))).collect();
        commit_ops(&self.cat, std::slice::from_ref(&self.shared), &ops, None, None).map(|_| ())
    }

    /// The row with primary key `pk`, if any.
    pub fn get(&self, pk: &[Value]) -> Result<Option<Row>> {
        let m = self.shared.meta();
        let key = pk_key(&m, pk)?;
        let ro = ReadOptions::default();
        Ctx::new(&self.cat.db, &ro, &self.cat.stats).read_row(&m, &key)
    }

    /// Replaces the row with `row`'s primary key (reading the old row to fix the changed index
    /// entries); false if there is none.
    pub fn update(&self, row: &Row) -> Result<bool> {
        self.one(Op::Update(row))
    }

    /// Deletes the row with primary key `pk` and its index entries; false if there is none.
    pub fn delete(&self, pk: &[Value]) -> Result<bool> {
        self.one(Op::Delete(pk))
    }

    /// Rows in index order (`index` = `"PRIMARY"` or a ready secondary index) from the first
    /// entry whose index columns are `>= from` (a prefix of the index columns; empty = the
    /// start), at most `limit`, in `dir` (Reverse starts from the last entry whose prefix is
    /// `<= from`, or the end if `from` is empty).
    pub fn scan(
        &self,
        index: &str,
        from: &[Value],
        limit: usize,
        dir: Direction,
    ) -> Result<Vec<Row>> {
        crate::scan::scan(self, index, from, limit, dir, None)
    }

    /// Like [`Table::scan`], returning only `columns` (in that order). When they are all in the
    /// index (index columns + primary key), the rows come from the index entries alone.
    pub fn scan_columns(
        &self,
        index: &str,
        from: &[Value],
        limit: usize,
        dir: Direction,
        columns: &[&str],
    ) -> Result<Vec<Row>> {
        crate::scan::scan(self, index, from, limit, dir, Some(columns))
    }

    /// Range scan `s` (see [`Scan`]) at the latest state: calls `visit` with each row in index
    /// order until it returns false or the range ends.
    ///
    /// ```
    /// # use talus_table::*;
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
    /// # let cat = Catalog::open(db).unwrap();
    /// # let t = cat.create_table(TableDef {
    /// #     name: "t".into(),
    /// #     columns: vec![ColumnDef { name: "id".into(), ty: ColumnType::I64, nullable: false }],
    /// #     primary_key: vec!["id".into()],
    /// #     indexes: vec![],
    /// # }).unwrap();
    /// for i in 0..10 {
    ///     t.insert(&vec![Value::I64(i)]).unwrap();
    /// }
    /// let mut ids = Vec::new();
    /// let s = Scan { from: &[Value::I64(3)], to: &[Value::I64(5)], ..Scan::index("PRIMARY") };
    /// t.scan_range(&s, |row| {
    ///     ids.push(row[0].clone());
    ///     true
    /// })
    /// .unwrap();
    /// assert_eq!(ids, vec![Value::I64(3), Value::I64(4), Value::I64(5)]);
    /// ```
    pub fn scan_range(&self, s: &Scan<'_>, visit: impl FnMut(Row) -> bool) -> Result<()> {
        crate::scan::scan_range(self, s, None, visit)
    }

    /// The rows with primary keys `pks` (an SQL `IN` list), in the order given, from one
    /// consistent view, read with the engine's batched `multi_get`.
    pub fn get_many<K: AsRef<[Value]>>(&self, pks: &[K]) -> Result<Vec<Option<Row>>> {
        crate::scan::get_many(self, pks, None)
    }

    /// Checks, on one snapshot, that every ready secondary index holds exactly the entries
    /// derived from the rows; returns the number of rows, or [`crate::TableError::Corruption`]
    /// naming the first mismatch. Memory: all expected entries of the table.
    pub fn verify_indexes(&self) -> Result<u64> {
        crate::verify::verify_indexes(self)
    }

    /// The smallest primary key, if the table has rows.
    pub fn first_pk(&self) -> Result<Option<Vec<Value>>> {
        crate::scan::first_pk(self)
    }
}

//! [`Table`]: a handle on one table. Writes go through `write::commit_ops` (one atomic batch
//! each, under the table's write lock); `get` and `get_many` read the latest state without
//! locks; scans are in `scan`.

use std::sync::Arc;

use talus::Db;

use crate::error::Result;
use crate::schema::{Row, TableDef, Value};
use crate::shared::{CatalogInner, TableShared};
use crate::storage::Storage;
use crate::write::{commit_ops, pk_key, Ctx, Op};

/// A handle on one table of a catalog on storage `S`. Cheap to clone; `Send + Sync`. Each call
/// is its own atomic batch.
pub struct Table<S: Storage = Db> {
    pub(crate) cat: Arc<CatalogInner<S>>,
    pub(crate) shared: Arc<TableShared>,
    /// The definition when the handle was made (writes always use the current one).
    def: Arc<TableDef>,
}

impl<S: Storage> Clone for Table<S> {
    fn clone(&self) -> Self {
        Table { cat: self.cat.clone(), shared: self.shared.clone(), def: self.def.clone() }
    }
}

impl<S: Storage> std::fmt::Debug for Table<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({})", self.def.name)
    }
}

impl<S: Storage> Table<S> {
    pub(crate) fn new(cat: Arc<CatalogInner<S>>, shared: Arc<TableShared>) -> Table<S> {
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
        let ro = self.cat.db.read_options(None);
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
}

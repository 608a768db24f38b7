//! Tables, secondary indexes and transactions on one key-value engine, with MyRocks's key
//! layout: [`talus::Db`] by default, or any [`Storage`]. The catalog, key encoding, row codec, transactions and
//! index maintenance are the same on every engine; only the [`storage`] module knows which one
//! is below, and dispatch is static (the handles take the engine as a type parameter).
//!
//! Every table row is stored under `index_id (4 bytes BE) + primary key columns` with the row
//! as value; every secondary index entry under `index_id + index columns + primary key
//! columns` with an empty value, so a non-unique secondary index is maintained with blind
//! writes (no read before write). A unique index stores `index_id + index columns -> primary
//! key`. Keys use a memcomparable encoding (byte order = value order), rows a compact codec;
//! both are specified byte for byte in `docs/format/table-keys.md`. The catalog (table and
//! index definitions) lives in the same engine under the reserved index id 0.
//!
//! ```
//! use talus_table::*;
//! let dir = tempfile::tempdir().unwrap();
//! let db = Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
//! let cat = Catalog::open(db).unwrap();
//! let t = cat.create_table(TableDef {
//!     name: "t".into(),
//!     columns: vec![
//!         ColumnDef { name: "id".into(), ty: ColumnType::I64, nullable: false },
//!         ColumnDef { name: "v".into(), ty: ColumnType::Varchar, nullable: true },
//!     ],
//!     primary_key: vec!["id".into()],
//!     indexes: vec![IndexDef { name: "by_v".into(), columns: vec!["v".into()], unique: false }],
//! }).unwrap();
//! t.insert(&vec![Value::I64(1), Value::Varchar("a".into())]).unwrap();
//! assert_eq!(t.get(&[Value::I64(1)]).unwrap().unwrap()[1], Value::Varchar("a".into()));
//! let rows = t.scan("by_v", &[], 10, Direction::Forward).unwrap();
//! assert_eq!(rows.len(), 1);
//! ```
//!
//! Modules: `storage` (the engine trait and its Talus implementation, live sizes,
//! which engine wrote a directory), `schema` (types), `error`, `keycodec` (memcomparable
//! keys), `rowcodec` (row values), `meta` (resolved table metadata and its catalog encoding),
//! `catalog` (the
//! [`Catalog`] handle and DDL), `write` (row writes and their index entries), `table`
//! ([`Table`]), `scan` (bounded range scans, [`Scan`], and `get_many`), `txn`
//! ([`Transaction`]), `build` (create index on a populated table: external sort and
//! ingestion), `stats`, `verify` (index consistency check).
#![warn(missing_docs)]

mod build;
mod catalog;
mod error;
pub mod keycodec;
mod meta;
mod open_catalogs;
pub mod rowcodec;
mod scan;
mod schema;
mod shared;
mod stats;
pub mod storage;
mod table;
mod txn;
mod verify;
mod write;

pub use build::CreateIndexOptions;
pub use catalog::Catalog;
pub use error::{Result, TableError};
pub use scan::Scan;
pub use schema::{ColumnDef, ColumnType, Direction, IndexDef, Row, TableDef, Value};
pub use stats::TableStats;
pub use storage::talus_db::open_talus;
pub use storage::{LiveSize, Storage};
pub use table::Table;
pub use talus::{Db, Options};
pub use txn::Transaction;

/// The README's Rust example, compiled and run as a doctest.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

//! [`TableError`], the one error type of the table layer, and its `Result` alias.
//!
//! Engine errors pass through unchanged as [`TableError::Engine`]; every other variant names
//! what the table layer refused and guarantees that nothing was written.

/// The table layer's result type.
pub type Result<T> = std::result::Result<T, TableError>;

/// What went wrong in a table operation. Every variant except `Engine` and `Corruption` means
/// the operation was refused before anything was written.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// An error from the storage engine.
    #[error("engine: {0}")]
    Engine(#[from] talus::Error),
    /// The primary key or a unique index already holds this key; nothing was written.
    #[error("duplicate key in table {table}, index {index}")]
    DuplicateKey {
        /// The table.
        table: String,
        /// `PRIMARY` or the unique index's name.
        index: String,
    },
    /// A row or key does not fit the schema (wrong type, missing non-null column, unknown
    /// column); `column` names the column.
    #[error("column {column}: {detail}")]
    Schema {
        /// The offending column.
        column: String,
        /// What is wrong with it.
        detail: String,
    },
    /// `create_table` of a name that exists.
    #[error("table {0} exists")]
    TableExists(String),
    /// No table of that name.
    #[error("no table {0}")]
    NoSuchTable(String),
    /// `create_index` of a name that exists on the table.
    #[error("index {0} exists")]
    IndexExists(String),
    /// No index of that name (or it is still being built).
    #[error("no index {0}")]
    NoSuchIndex(String),
    /// A transaction wrote a primary key that another commit wrote after it began; nothing of
    /// the transaction was written.
    #[error("write conflict in table {table}")]
    Conflict {
        /// The table holding the conflicting key.
        table: String,
    },
    /// The directory holds a database another engine wrote (Talus opened as RocksDB or the
    /// reverse); refused before anything was opened or written.
    #[error(
        "{dir} is a {found} database ({detail}), not a {wanted} one: open it with --engine={found}"
    )]
    OtherEngine {
        /// The database directory.
        dir: String,
        /// The engine that wrote it.
        found: &'static str,
        /// The file that tells, and what it says.
        detail: String,
        /// The engine asked for.
        wanted: &'static str,
    },
    /// Stored key, row or catalog bytes that do not decode.
    #[error("corruption: {detail}")]
    Corruption {
        /// What failed to decode, and where.
        detail: String,
    },
}

impl TableError {
    pub(crate) fn corrupt(detail: impl Into<String>) -> TableError {
        TableError::Corruption { detail: detail.into() }
    }
    pub(crate) fn schema(column: &str, detail: impl Into<String>) -> TableError {
        TableError::Schema { column: column.to_string(), detail: detail.into() }
    }
}

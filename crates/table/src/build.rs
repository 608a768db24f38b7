//! `create_index` on a populated table (unfinished).

use std::path::PathBuf;

use crate::catalog::Catalog;
use crate::error::Result;
use crate::schema::IndexDef;

/// Options of [`Catalog::create_index`].
#[derive(Clone, Debug)]
pub struct CreateIndexOptions {
    /// Memory budget of the external sort: a sorted run is spilled to a temp file when the
    /// buffered entries reach this many bytes.
    pub sort_memory_bytes: usize,
    /// Where the sorted runs and SST files go (`None`: `<db>/tmp`).
    pub temp_dir: Option<PathBuf>,
}

impl Default for CreateIndexOptions {
    fn default() -> Self {
        CreateIndexOptions { sort_memory_bytes: 64 << 20, temp_dir: None }
    }
}

pub(crate) fn create_index(
    _cat: &Catalog,
    _table: &str,
    _def: IndexDef,
    _opts: &CreateIndexOptions,
) -> Result<()> {
    todo!("create_index")
}

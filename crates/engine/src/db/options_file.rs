//! `OPTIONS-NNNNNN`: the options a database was opened with, written after a successful
//! read-write open (RocksDB's ini format and names: `crate::options_file::render`). Advisory: a failure is logged, not
//! returned. Older OPTIONS files are removed.

use super::core::DbInner;
use crate::filename::{parse_file_name, FileType};

impl DbInner {
    /// Writes `OPTIONS-NNNNNN` (an ini-style dump of the options, as RocksDB's) and removes
    /// older ones. Advisory: failures are logged, not returned.
    pub(super) fn write_options_file(&self) {
        let n = self.versions.lock().new_file_number();
        let text = {
            let st = self.state.lock();
            let others: Vec<(&str, &crate::options::Options)> = st
                .cfs
                .range(crate::column_family::DEFAULT_COLUMN_FAMILY_ID + 1..)
                .map(|(_, c)| (c.data.name.as_str(), &*c.data.opts))
                .collect();
            crate::options_file::render_families(&self.opts, &others)
        };
        let name = crate::filename::options_name(n);
        if let Err(e) =
            crate::fs::write_file_atomic(self.fs.as_ref(), &self.path, &name, text.as_bytes())
        {
            self.info_log.log(&format!("[WARN] could not write {name}: {e}"));
            return;
        }
        if let Ok(names) = self.fs.list_dir(&self.path) {
            for old in names {
                if let Some(FileType::Options(m)) = parse_file_name(&old) {
                    if m < n {
                        let _ = self.fs.remove_file(&self.path.join(old));
                    }
                }
            }
        }
    }
}

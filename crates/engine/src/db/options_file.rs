//! `OPTIONS-NNNNNN`: the options a database was opened with, written after a successful
//! read-write open (an ini-style dump, as RocksDB's). Advisory: a failure is logged, not
//! returned. Older OPTIONS files are removed.

use super::core::DbInner;
use crate::filename::{parse_file_name, FileType};

impl DbInner {
    /// Writes `OPTIONS-NNNNNN` (an ini-style dump of the options, as RocksDB's) and removes
    /// older ones. Advisory: failures are logged, not returned.
    pub(super) fn write_options_file(&self) {
        let n = self.versions.lock().new_file_number();
        let o = &self.opts;
        let text = format!(
            "[Version]\n  talus_version={}\n\n[DBOptions]\n  create_if_missing={}\n  paranoid_checks={}\n  max_open_files={}\n  max_background_jobs={}\n  wal_recovery_mode={}\n\n[CFOptions \"default\"]\n  write_buffer_size={}\n  max_write_buffer_number={}\n  level0_file_num_compaction_trigger={}\n  level0_slowdown_writes_trigger={}\n  level0_stop_writes_trigger={}\n  max_bytes_for_level_base={}\n  max_bytes_for_level_multiplier={}\n  target_file_size_base={}\n  num_levels={}\n  compaction_style={:?}\n  compression={}\n  disable_auto_compactions={}\n\n[TableOptions/BlockBasedTable \"default\"]\n  block_size={}\n  block_restart_interval={}\n  bloom_bits_per_key={}\n  block_cache_capacity={}\n",
            env!("CARGO_PKG_VERSION"),
            o.create_if_missing,
            o.paranoid_checks,
            o.max_open_files,
            o.max_background_jobs,
            o.wal_recovery_mode.name(),
            o.write_buffer_size,
            o.max_write_buffer_number,
            o.level0_file_num_compaction_trigger,
            o.level0_slowdown_writes_trigger,
            o.level0_stop_writes_trigger,
            o.max_bytes_for_level_base,
            o.max_bytes_for_level_multiplier,
            o.target_file_size_base,
            o.num_levels,
            o.compaction_style,
            o.compression.name(),
            o.disable_auto_compactions,
            o.block_size,
            o.block_restart_interval,
            o.bloom_bits_per_key,
            o.block_cache_capacity,
        );
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

//! The blob file options' checks (RocksDB's names: `min_blob_size`, `blob_file_size`,
//! `blob_garbage_collection_age_cutoff`, `blob_garbage_collection_force_threshold`). Pure; no
//! IO. The blob cache's option types ([`BlobCacheRef`], [`PrepopulateBlobCache`]) live here;
//! the cache itself is `blob::cache`. (The separation a job applies, from these options:
//! `blob::separate::SeparationPolicy`.)

use std::sync::Arc;

use super::{invalid, Options};
use crate::cache::Cache;
use crate::error::Result;

/// A cache of blob values, shareable between databases (RocksDB's `std::shared_ptr<Cache>`).
pub type BlobCacheRef = Arc<dyn Cache<Vec<u8>>>;

/// When values enter the blob cache besides reads (RocksDB's `PrepopulateBlobCache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrepopulateBlobCache {
    /// Only reads insert (`kDisable`, the default).
    #[default]
    Disable,
    /// A flush inserts every value it writes to a blob file (`kFlushOnly`).
    FlushOnly,
}

impl Options {
    /// Refuses blob options out of range, naming the option.
    pub(super) fn validate_blob_options(&self) -> Result<()> {
        if self.blob_file_size == 0 {
            return Err(invalid("blob_file_size", "must be positive"));
        }
        for (name, v) in [
            ("blob_garbage_collection_age_cutoff", self.blob_garbage_collection_age_cutoff),
            (
                "blob_garbage_collection_force_threshold",
                self.blob_garbage_collection_force_threshold,
            ),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(invalid(name, format!("{v} is outside [0, 1]")));
            }
        }
        if self.blob_file_starting_level >= self.num_levels.max(1) {
            return Err(invalid(
                "blob_file_starting_level",
                format!(
                    "{} is not below num_levels {}",
                    self.blob_file_starting_level, self.num_levels
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_blob_values_are_refused_by_name() {
        let cases: [(&str, Options); 4] = [
            ("blob_file_size", Options { blob_file_size: 0, ..Default::default() }),
            (
                "blob_garbage_collection_age_cutoff",
                Options { blob_garbage_collection_age_cutoff: 1.5, ..Default::default() },
            ),
            (
                "blob_garbage_collection_age_cutoff",
                Options { blob_garbage_collection_age_cutoff: -0.1, ..Default::default() },
            ),
            (
                "blob_garbage_collection_force_threshold",
                Options { blob_garbage_collection_force_threshold: f64::NAN, ..Default::default() },
            ),
        ];
        for (name, o) in cases {
            let e = o.validate().expect_err(name).to_string();
            assert!(e.contains(name), "{e}");
        }
        let o = Options { blob_file_starting_level: 7, num_levels: 7, ..Default::default() };
        assert!(o.validate().unwrap_err().to_string().contains("blob_file_starting_level"));
        Options { enable_blob_files: true, min_blob_size: 4096, ..Default::default() }
            .validate()
            .unwrap();
    }
}

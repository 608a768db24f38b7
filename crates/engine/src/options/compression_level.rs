//! Compression levels (RocksDB's `compression_opts.level` and `bottommost_compression_opts`):
//! which level a table's writer uses, and which levels a compressor takes.
//!
//! The level is the writer's choice only: a block's bytes say their compression type, never the
//! level, so reading needs nothing from here and the format does not change. Zstd takes levels
//! [`ZSTD_MIN_LEVEL`] to [`ZSTD_MAX_LEVEL`]; [`DEFAULT_COMPRESSION_LEVEL`] (RocksDB's
//! `kDefaultCompressionLevel`) means each library's default (zstd 3). LZ4 reads a negative level
//! as an acceleration factor in RocksDB; Talus's LZ4 (`lz4_flex`) has only acceleration 1, so a
//! negative level with LZ4 in use is refused by name; levels 0 and up are LZ4's one mode.
//! Snappy has no levels. Called by `Options::validate` and `Options::table_builder_options`.

use super::{invalid, CompressionType, Options};
use crate::error::Result;

/// RocksDB's `kDefaultCompressionLevel`: the library's default level.
pub const DEFAULT_COMPRESSION_LEVEL: i32 = 32767;
/// zstd's lowest level (`ZSTD_minCLevel`, the fastest).
pub const ZSTD_MIN_LEVEL: i32 = -131072;
/// zstd's highest level (`ZSTD_maxCLevel`).
pub const ZSTD_MAX_LEVEL: i32 = 22;
/// The level zstd uses for [`DEFAULT_COMPRESSION_LEVEL`] (`ZSTD_CLEVEL_DEFAULT`).
pub const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// The zstd level a compressor asked for `level` uses.
pub fn zstd_level(level: i32) -> i32 {
    if level == DEFAULT_COMPRESSION_LEVEL {
        ZSTD_DEFAULT_LEVEL
    } else {
        level
    }
}

/// Why `level` is not a level any compressor here takes, if it is not.
pub fn check_level(level: i32) -> std::result::Result<(), String> {
    if level == DEFAULT_COMPRESSION_LEVEL || (ZSTD_MIN_LEVEL..=ZSTD_MAX_LEVEL).contains(&level) {
        return Ok(());
    }
    Err(format!(
        "level {level} is outside zstd's {ZSTD_MIN_LEVEL}..={ZSTD_MAX_LEVEL} (or \
         {DEFAULT_COMPRESSION_LEVEL}, the library's default)"
    ))
}

impl Options {
    /// The compression level of blocks written to `level` of a tree whose bottommost non-empty
    /// level is `bottommost` (with [`Options::compression_for_level`]'s type): the bottommost
    /// options' level where they are enabled, else `compression_level`.
    pub fn compression_level_for(&self, is_bottommost: bool) -> i32 {
        match (is_bottommost, self.bottommost_compression_level) {
            (true, Some(l)) => l,
            _ => self.compression_level,
        }
    }

    /// Checks both levels: in range, and no negative level (an LZ4 acceleration) where LZ4 is
    /// used.
    pub(super) fn validate_compression_levels(&self) -> Result<()> {
        check_level(self.compression_level).map_err(|e| invalid("compression_opts", e))?;
        if let Some(l) = self.bottommost_compression_level {
            check_level(l).map_err(|e| invalid("bottommost_compression_opts", e))?;
        }
        let lz4_anywhere = self.compression == CompressionType::Lz4
            || self.compression_per_level.contains(&CompressionType::Lz4);
        let lz4_bottom =
            self.bottommost_compression.map_or(lz4_anywhere, |c| c == CompressionType::Lz4);
        if lz4_anywhere && self.compression_level < 0 {
            return Err(invalid(
                "compression_opts",
                format!(
                    "level {} asks LZ4 for acceleration {}: Talus's LZ4 has only acceleration 1 \
                     (use a level of 0 or more)",
                    self.compression_level,
                    -i64::from(self.compression_level)
                ),
            ));
        }
        if let Some(l) = self.bottommost_compression_level.filter(|l| *l < 0 && lz4_bottom) {
            return Err(invalid(
                "bottommost_compression_opts",
                format!("level {l} asks LZ4 for an acceleration Talus's LZ4 does not have"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_by_library() {
        assert_eq!(zstd_level(DEFAULT_COMPRESSION_LEVEL), 3);
        assert_eq!(zstd_level(-5), -5);
        for ok in [DEFAULT_COMPRESSION_LEVEL, 1, 19, 22, 0, -131072] {
            check_level(ok).unwrap();
        }
        for bad in [23, 100, -131073, 32766] {
            assert!(check_level(bad).unwrap_err().contains(&bad.to_string()));
        }
    }

    #[test]
    fn validation_names_the_option_and_refuses_lz4_acceleration() {
        let zstd = Options { compression: CompressionType::Zstd, ..Default::default() };
        Options { compression_level: -7, ..zstd.clone() }.validate().unwrap();
        let e = Options { compression_level: 23, ..zstd.clone() }.validate().unwrap_err();
        assert!(e.to_string().contains("compression_opts"), "{e}");
        let e = Options { bottommost_compression_level: Some(99), ..zstd }.validate().unwrap_err();
        assert!(e.to_string().contains("bottommost_compression_opts"), "{e}");
        let lz4 = Options { compression_level: -3, ..Default::default() };
        assert!(lz4.validate().unwrap_err().to_string().contains("acceleration 3"));
        // Post 002's setting: LZ4 on every level, zstd level 1 at the bottom.
        let post002 = Options {
            compression_per_level: vec![CompressionType::Lz4],
            bottommost_compression: Some(CompressionType::Zstd),
            compression_level: 1,
            ..Default::default()
        };
        post002.validate().unwrap();
        assert_eq!(
            (post002.compression_level_for(true), post002.compression_level_for(false)),
            (1, 1)
        );
        let split = Options { bottommost_compression_level: Some(19), ..post002 };
        assert_eq!(
            (split.compression_level_for(true), split.compression_level_for(false)),
            (19, 1)
        );
    }
}

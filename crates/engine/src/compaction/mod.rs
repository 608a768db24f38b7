//! Compaction: which files to merge ([`picker`]: [`leveled`], [`universal`]), the merge itself ([`job`]) and the split of
//! one merge into key ranges run in parallel ([`subcompaction`]).
//!
//! Leveled compaction with RocksDB's semantics: dynamic level bytes, L0→base when L0 reaches
//! `level0_file_num_compaction_trigger`, Ln→Ln+1 when a level exceeds its target size, intra-L0,
//! trivial moves when inputs overlap nothing below. Old versions are dropped unless a snapshot
//! needs them; tombstones are dropped only where nothing older can lie beneath. The design
//! notes are in `docs/design/compaction.md`.

use std::sync::Arc;

use crate::options::{CompactionStyle, Options};
use crate::version::FileMetaData;

pub mod blob_gc;
pub(crate) mod iterator;
pub mod job;
pub mod leveled;
pub mod picker;
pub mod subcompaction;
pub mod universal;

/// The picker of `opts.compaction_style`.
pub fn picker_for(opts: &Options) -> &'static dyn picker::CompactionPicker {
    match opts.compaction_style {
        CompactionStyle::Level => &leveled::LeveledPicker,
        CompactionStyle::Universal => &universal::UniversalPicker,
    }
}

/// A chosen compaction: `inputs[0]` from `level`, `inputs[1]` from `output_level`, and (universal
/// compaction only) whole sorted runs of the levels in between in `middle`.
#[derive(Debug, Clone)]
pub struct Compaction {
    /// The level the compaction starts at.
    pub level: usize,
    /// Where outputs go.
    pub output_level: usize,
    /// Input files at `level` and at `output_level`.
    pub inputs: [Vec<Arc<FileMetaData>>; 2],
    /// No older data for the key range lies below `output_level`.
    pub bottommost: bool,
    /// Move the single input file down without rewriting it.
    pub trivial_move: bool,
    /// Why it was picked (for the info log).
    pub reason: &'static str,
    /// Output files are cut once they reach this size.
    pub target_file_size: u64,
    /// Input files of levels strictly between `level` and `output_level`, level by level.
    pub middle: Vec<(usize, Vec<Arc<FileMetaData>>)>,
}

impl Compaction {
    /// Every input file.
    pub fn input_files(&self) -> impl Iterator<Item = &Arc<FileMetaData>> {
        self.inputs[0]
            .iter()
            .chain(self.middle.iter().flat_map(|(_, files)| files.iter()))
            .chain(self.inputs[1].iter())
    }

    /// Total input bytes.
    pub fn input_bytes(&self) -> u64 {
        self.input_files().map(|f| f.file_size).sum()
    }
}

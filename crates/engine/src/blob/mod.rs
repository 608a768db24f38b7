//! Key-value separation (RocksDB's integrated BlobDB): values of at least `min_blob_size` bytes
//! written by a flush (or a compaction into a level at or below `blob_file_starting_level`)
//! go to blob files; the SST keeps a `BlobIndex` entry (file number, offset, size,
//! compression) in their place.
//!
//! - `format`: the blob file and blob index encodings (`docs/format/blob.md`);
//! - `file_crc`: the whole-file crc32c the MANIFEST records, combined from the records' crcs;
//! - `writer`: writes one blob file; `separate`: decides which values go to blob files and
//!   rotates files at `blob_file_size`;
//! - `reader`: reads values back ([`reader::BlobSource`], the database's open blob files);
//! - `cache`: the blob cache (`blob_cache`, `prepopulate_blob_cache`).
//!
//! The MANIFEST records each blob file (`version::blob_meta`); obsolete-file deletion keeps
//! every blob file a live version lists.

pub mod cache;
pub mod file_crc;
pub mod format;
pub mod gc;
pub mod reader;
pub mod separate;
pub mod writer;

//! Placeholder: the RocksDB backend is written later.

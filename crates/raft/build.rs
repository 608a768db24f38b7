//! With the `rocksdb` feature, links the C++ runtime that RocksDB needs. `librocksdb-sys` leaves
//! that to whoever compiles C++ with the `cc` crate (talus-cli and talus-table do, for their
//! shims); this crate has no C++ of its own, and its tests link RocksDB without them.

fn main() {
    println!("cargo:rerun-if-env-changed=CARGO_FEATURE_ROCKSDB");
    if std::env::var_os("CARGO_FEATURE_ROCKSDB").is_some() {
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
}

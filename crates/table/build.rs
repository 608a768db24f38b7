//! With the `rocksdb` feature, compiles the RocksDB backend's C++ shim
//! (`src/storage/rocksdb/shim.cc`, and `throttle_fs.cc`, its capped device) against the RocksDB source tree `librocksdb-sys` builds (its
//! manifest directory, which that crate publishes to its dependents), with the language level and
//! defines it compiles RocksDB with ($CXXFLAGS, e.g. bench/build_rocksdb_adapter.sh's, are
//! appended by `cc` as for RocksDB itself). Without the feature it does nothing.

fn main() {
    #[cfg(feature = "rocksdb")]
    rocksdb_shim();
}

#[cfg(feature = "rocksdb")]
fn rocksdb_shim() {
    let files = ["src/storage/rocksdb/shim.cc", "src/storage/rocksdb/throttle_fs.cc"];
    for f in files.iter().chain(&["src/storage/rocksdb/throttle_fs.h"]) {
        println!("cargo:rerun-if-changed={f}");
    }
    let Ok(dir) = std::env::var("DEP_ROCKSDB_CARGO_MANIFEST_DIR") else {
        panic!(
            "librocksdb-sys did not publish its source directory (DEP_ROCKSDB_CARGO_MANIFEST_DIR)"
        );
    };
    let include = std::path::Path::new(&dir).join("rocksdb").join("include");
    cc::Build::new()
        .cpp(true)
        .files(files)
        .include(include)
        .flag("-std=c++17")
        .define("NDEBUG", Some("1"))
        .define("OS_LINUX", None)
        .define("ROCKSDB_PLATFORM_POSIX", None)
        .define("ROCKSDB_LIB_IO_POSIX", None)
        .warnings(true)
        .compile("talus_table_rocksdb_shim");
}

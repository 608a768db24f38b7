//! Records how the `talus` binary was built, for db_bench's header (`crate::build_info`):
//! the cargo profile (the directory cargo builds into: `release`, `release-lto`, `debug`, ...)
//! and the `-C target-cpu` given through RUSTFLAGS (`default` when none was). With the `rocksdb`
//! feature it also compiles the `rocksdb` engine's C++ shim against the RocksDB source tree
//! `librocksdb-sys` builds (its manifest directory, which that crate publishes to us).

fn main() {
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    // OUT_DIR is <target-dir>[/<triple>]/<profile>/build/<pkg>-<hash>/out.
    let out = std::env::var("OUT_DIR").unwrap_or_default();
    let parts: Vec<&str> = out.split(std::path::MAIN_SEPARATOR).collect();
    let profile = parts
        .iter()
        .rposition(|p| *p == "build")
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| parts.get(i))
        .copied()
        .unwrap_or("unknown");
    println!("cargo:rustc-env=TALUS_BUILD_PROFILE={profile}");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let mut cpu = "default".to_string();
    let mut prev_c = false;
    for f in flags.split('\x1f') {
        let f = f.trim();
        let opt = f.strip_prefix("-C").map(str::trim).filter(|o| !o.is_empty());
        let opt = if prev_c { Some(f) } else { opt };
        if let Some(v) = opt.and_then(|o| o.strip_prefix("target-cpu=")) {
            cpu = v.to_string();
        }
        prev_c = f == "-C";
    }
    println!("cargo:rustc-env=TALUS_TARGET_CPU={cpu}");
    #[cfg(feature = "rocksdb")]
    rocksdb_shim();
}

/// Compiles `src/db_bench/engines/rocksdb_engine/shim.cc` with the language level and defines
/// `librocksdb-sys` compiles RocksDB with ($CXXFLAGS, e.g. bench/build_rocksdb_adapter.sh's, are
/// appended by `cc` as for RocksDB itself).
#[cfg(feature = "rocksdb")]
fn rocksdb_shim() {
    let shim = "src/db_bench/engines/rocksdb_engine/shim.cc";
    println!("cargo:rerun-if-changed={shim}");
    let Ok(dir) = std::env::var("DEP_ROCKSDB_CARGO_MANIFEST_DIR") else {
        panic!(
            "librocksdb-sys did not publish its source directory (DEP_ROCKSDB_CARGO_MANIFEST_DIR)"
        );
    };
    let include = std::path::Path::new(&dir).join("rocksdb").join("include");
    cc::Build::new()
        .cpp(true)
        .file(shim)
        .include(include)
        .flag("-std=c++17")
        .define("NDEBUG", Some("1"))
        .define("OS_LINUX", None)
        .define("ROCKSDB_PLATFORM_POSIX", None)
        .define("ROCKSDB_LIB_IO_POSIX", None)
        .warnings(true)
        .compile("talus_rocksdb_shim");
}

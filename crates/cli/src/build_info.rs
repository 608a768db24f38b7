//! How this `talus` binary was built: cargo profile, `-C target-cpu` and global allocator
//! (recorded by `build.rs` and the `jemalloc` / `mimalloc` features). db_bench prints it in its
//! header so a result line can be traced to its build; `bench/regress.py` reads it back.
//!
//! The allocator itself is installed here: with feature `jemalloc` (tikv-jemallocator) or
//! `mimalloc`, that is the process's `#[global_allocator]`; without either, the system malloc.

#[cfg(all(feature = "jemalloc", feature = "mimalloc"))]
compile_error!("features `jemalloc` and `mimalloc` both set a global allocator: pick one");

#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The cargo profile the binary was built with (its target subdirectory: `release`,
/// `release-lto`, `debug`, ...).
pub const PROFILE: &str = env!("TALUS_BUILD_PROFILE");

/// The `-C target-cpu` from RUSTFLAGS, or `default`.
pub const TARGET_CPU: &str = env!("TALUS_TARGET_CPU");

/// The global allocator: `jemalloc`, `mimalloc` or `system`.
pub const ALLOCATOR: &str = if cfg!(feature = "jemalloc") {
    "jemalloc"
} else if cfg!(feature = "mimalloc") {
    "mimalloc"
} else {
    "system"
};

/// One line for headers: `profile release-lto, target-cpu native, allocator jemalloc`.
pub fn describe() -> String {
    format!("profile {PROFILE}, target-cpu {TARGET_CPU}, allocator {ALLOCATOR}")
}

//! Records how the `talus` binary was built, for db_bench's header (`crate::build_info`):
//! the cargo profile (the directory cargo builds into: `release`, `release-lto`, `debug`, ...)
//! and the `-C target-cpu` given through RUSTFLAGS (`default` when none was).

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
}

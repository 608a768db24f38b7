//! The options layer every tool uses: gflags' command-line syntax ([`gflags`]) over the engine
//! options of the `talus-options` crate (every engine option by RocksDB's name, RocksDB's
//! numbers, option strings and OPTIONS files; the Python binding shares them), of which the
//! tools use [`engine`], [`number`], [`values`], [`apply_file`] and [`apply_string`].
//!
//! A tool that opens a database sets `engine: true` in its [`Spec`], so it accepts every engine
//! option, `--options_file=PATH` (`--ignore_unknown_options` to skip what Talus lacks) and
//! `--options="k=v;..."`; [`engine_options`] then builds its [`talus::Options`] from the tool's
//! defaults. Order, later wins: the tool's defaults, the OPTIONS file, the option string, then
//! the single flags in command-line order. Everything is parsed and checked before any file is
//! touched: [`Parsed::check`] applies `--options` and `--options_file` to a scratch
//! [`talus::Options`] (the OPTIONS file is read, bounded and never blocking: [`talus_options::file::read`];
//! nothing is written).

pub mod gflags;
pub use talus_options::{apply_file, apply_string, engine, number, values};

pub use gflags::{bad, Parsed, Spec};

/// The layer's own flags, accepted with `engine: true`.
pub const LAYER_FLAGS: &[&str] = &["options_file", "options", "ignore_unknown_options"];

/// The `--help` lines for the engine options.
pub fn engine_help() -> String {
    let mut s = String::from(
        "engine options (RocksDB's names; later wins: --options_file, --options, single flags):\n\
         \x20 --options_file=PATH       a RocksDB/Talus OPTIONS file (--ignore_unknown_options skips\n\
         \x20                           the options Talus does not have instead of refusing them)\n\
         \x20 --options=\"k=v;k=v\"       RocksDB option string (block_based_table_factory={...})\n\
         \x20 integers take RocksDB's k/m/g/t suffixes everywhere (64k = 65536, 1M = 1048576)\n",
    );
    for o in engine::all() {
        let bool_mark = if o.boolean { " (bool)" } else { "" };
        s.push_str(&format!("  --{}{bool_mark}: {}\n", o.name, o.help));
    }
    s
}

/// `base` with `--options_file`, `--options` and every engine option of `p` applied, except the
/// names in `skip` (options the tool maps itself). `p` must have been checked with
/// `engine: true`.
pub fn engine_options(
    p: &Parsed,
    mut base: talus::Options,
    skip: &[&str],
) -> Result<talus::Options, String> {
    if let Some(path) = p.value("options_file") {
        let applied = apply_file(&mut base, path, p.flag("ignore_unknown_options"))?;
        if !applied.ignored.is_empty() {
            eprintln!(
                "--options_file={path}: ignored {} option(s) Talus does not have",
                applied.ignored.len()
            );
        }
    }
    if let Some(s) = p.value("options") {
        apply_string(&mut base, s).map_err(|e| format!("--options: {e}"))?;
    }
    for name in p.names() {
        if skip.contains(&name.as_str()) || engine::find(name).is_none() {
            continue;
        }
        let v = match p.value(name) {
            Some(v) => v.to_string(),
            None => "true".to_string(),
        };
        engine::set(&mut base, name, &v)?;
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_file_then_string_then_flags() {
        let dir = std::env::temp_dir().join(format!("talus-opts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("OPTIONS-000001");
        let from_file =
            talus::Options { write_buffer_size: 111, block_size: 222, ..Default::default() };
        std::fs::write(&path, talus::options_file::render(&from_file)).unwrap();
        let mut p = Parsed::parse(&[
            "--max_subcompactions=4".to_string(),
            format!("--options_file={}", path.display()),
            "--options=block_size=333;num_levels=5".into(),
            "--num_levels=6".into(),
            "--nointra_l0_compaction".into(),
        ]);
        p.check(&Spec { engine: true, ..Spec::default() }).unwrap();
        let o = engine_options(&p, talus::Options::default(), &[]).unwrap();
        assert_eq!((o.write_buffer_size, o.block_size, o.num_levels), (111, 333, 6));
        assert_eq!(o.max_subcompactions, 4);
        assert!(!o.intra_l0_compaction);
        let o = engine_options(&p, talus::Options::default(), &["num_levels"]).unwrap();
        assert_eq!(o.num_levels, 5, "skipped names are the tool's own");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

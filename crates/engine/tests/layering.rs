//! The layering rule of docs/design/architecture.md ("Layers"): inside the engine the arrows point
//! down only. Nothing under `compaction/`, `sst/`, `version/`, `iter/`, `memtable/`, `cache/`,
//! `wal/` or `fs/` names `db/`: a picker, a table, a version never reach up into the database.
//!
//! The check reads the sources: every path that names the `db` module (`crate::db`,
//! `super::db`, `super::super::db`, or `db::` in a `use crate::{...}` group) outside `db/`
//! fails it, comments aside. The module graph and its circles: `bench/module_graph.py
//! crates/engine/src --depth 2 --cycles`.

use std::path::{Path, PathBuf};

const LOWER: [&str; 8] = ["compaction", "sst", "version", "iter", "memtable", "cache", "wal", "fs"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The offending lines of `src`: code (not comments) that names the `db` module.
fn names_db(src: &str) -> Vec<(usize, String)> {
    let mut bad = Vec::new();
    let mut in_use_group = false;
    for (i, line) in src.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("").trim();
        if code.is_empty() {
            continue;
        }
        let group_start = code.starts_with("use crate::{") || code.starts_with("pub use crate::{");
        let hit = code
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .any(|t| names_db_path(t, in_use_group || group_start));
        if hit {
            bad.push((i + 1, line.to_string()));
        }
        if group_start && !code.ends_with("};") {
            in_use_group = true;
        } else if in_use_group && code.ends_with("};") {
            in_use_group = false;
        }
    }
    bad
}

/// `t` is a path whose first module after `crate`/`super` prefixes is `db` (inside a
/// `use crate::{...}` group a bare `db` or `db::...` counts too).
fn names_db_path(t: &str, in_group: bool) -> bool {
    let mut segs = t.split("::").filter(|s| !s.is_empty()).peekable();
    let mut prefixed = false;
    while let Some(&s) = segs.peek() {
        if s == "crate" || s == "super" {
            prefixed = true;
            segs.next();
        } else {
            break;
        }
    }
    (prefixed || (in_group && !t.contains('{'))) && segs.next() == Some("db")
}

#[test]
fn lower_modules_do_not_import_db() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    for m in LOWER {
        let mut files = Vec::new();
        rust_files(&src.join(m), &mut files);
        let single = src.join(format!("{m}.rs"));
        if single.exists() {
            files.push(single);
        }
        assert!(!files.is_empty(), "src/{m} has no sources: is LOWER out of date?");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (line, code) in names_db(&text) {
                bad.push(format!("{}:{line}: {}", f.display(), code.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "lower modules import db/ (see docs/design/architecture.md):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_sees_each_form_of_import() {
    for src in [
        "use crate::db::flush::table_options;",
        "    let t = crate::db::flush::table_options(o, 1, true);",
        "use super::super::db::core::DbState;",
        "use crate::{\n    db::core::DbState,\n    key::user_key,\n};",
        "use crate::{db, key};",
    ] {
        assert!(!names_db(src).is_empty(), "not caught: {src}");
    }
    for src in [
        "// crate::db::flush is not imported here",
        "use crate::dbg_helpers;",
        "let db = open();",
        "use crate::{key, version};",
    ] {
        assert!(names_db(src).is_empty(), "false alarm: {src}");
    }
}

//! RocksDB's OPTIONS file (`OPTIONS-NNNNNN`, an ini file) read into [`talus::Options`]: the
//! inverse of `talus::options_file::render`, and a reader of the files RocksDB writes (tested
//! against every file RocksDB 7.8.3 and 10.4.2 wrote in `crates/cli/tests/data`).
//!
//! [`read`] takes the file from disk (a regular file of at most 1 MiB, never blocking: `read.rs`);
//! [`apply`] parses its text (`ini.rs`: `#` comments, also after a value; a UTF-8 BOM; CRLF; a
//! repeated name or section refused naming both lines) and applies it. A file must have
//! `[Version]`, `[DBOptions]` and `[CFOptions "default"]`, else it is refused naming each
//! missing one, so an empty or truncated file never reads as defaults (RocksDB requires the
//! last two; every file it writes has all three). `[Version]` is checked for
//! `options_file_version` 1.x; `[TableOptions/BlockBasedTable "default"]` is read too.
//!
//! [`families`] reads a file of several column families (RocksDB writes one `[CFOptions "NAME"]`
//! and one `[TableOptions/BlockBasedTable "NAME"]` per family): each family's options are
//! `[DBOptions]` plus its own two sections, so per-family values (write buffer, compression per
//! level, compaction style, block size, ...) land in that family only.
//!
//! Every `name=value` goes through [`super::engine::set`], the same validation as the option's
//! flag and option-string spellings. A name Talus does not have, a column family other than
//! `default`, or a section it does not know is collected, and the read fails naming all of
//! them unless `ignore_unknown` (RocksDB's `ignore_unknown_options`) is set. A value Talus
//! refuses is an error either way, naming its line. Nothing is applied to the caller's
//! [`Options`] unless the whole file is good.

use talus::Options;

use super::engine;

mod ini;
mod read;
#[cfg(test)]
mod tests;

pub use read::read;

/// What applying a file did: the options it could not apply (when ignoring them).
#[derive(Debug, Default)]
pub struct Applied {
    /// `section: name` of each option skipped as unknown.
    pub ignored: Vec<String>,
}

/// The sections every OPTIONS file must have.
const REQUIRED: [&str; 3] = ["[Version]", "[DBOptions]", "[CFOptions \"default\"]"];

/// The family a `[CFOptions "NAME"]` header names.
fn cf_section(header: &str) -> Option<&str> {
    header.strip_prefix("[CFOptions \"")?.strip_suffix("\"]")
}

/// The family a `[TableOptions/BlockBasedTable "NAME"]` header names.
fn table_section(header: &str) -> Option<&str> {
    header.strip_prefix("[TableOptions/BlockBasedTable \"")?.strip_suffix("\"]")
}

/// True if `header` is a section of every family (`[Version]`, `[DBOptions]`) or one of
/// `family`'s.
fn read_for(header: &str, family: &str) -> bool {
    header == "[Version]"
        || header == "[DBOptions]"
        || cf_section(header) == Some(family)
        || table_section(header) == Some(family)
}

/// Applies the OPTIONS file `text` to `o` (the `default` family); on `Err`, `o` is unchanged.
/// Another family's sections are unknown (see the module doc; [`families`] reads them).
pub fn apply(o: &mut Options, text: &str, ignore_unknown: bool) -> Result<Applied, String> {
    let sections = checked_sections(text)?;
    let (out, unknown) = apply_family(o, &sections, "default", &|_| false)?;
    check_unknown(&unknown, ignore_unknown)?;
    *o = out;
    Ok(Applied { ignored: unknown })
}

/// Every column family of the OPTIONS file `text`, in file order (`default` first in every file
/// RocksDB writes): its name and `base` with `[DBOptions]` and its own sections applied. Unknown
/// options of any family are handled as in [`apply`] (a `[TableOptions/BlockBasedTable]` of a
/// family without `[CFOptions]` is an unknown section).
pub fn families(
    base: &Options,
    text: &str,
    ignore_unknown: bool,
) -> Result<(Vec<(String, Options)>, Applied), String> {
    let sections = checked_sections(text)?;
    let names: Vec<&str> = sections.iter().filter_map(|s| cf_section(&s.header)).collect();
    let has_cf = |h: &str| table_section(h).is_some_and(|t| names.contains(&t));
    let mut out = Vec::new();
    let mut ignored: Vec<String> = Vec::new();
    for name in &names {
        // Sections of every other family are theirs, not unknown; what every family reads
        // (`[DBOptions]`, an unknown section) is reported once.
        let other = |h: &str| cf_section(h).is_some() || has_cf(h);
        let (o, unknown) = apply_family(base, &sections, name, &other)?;
        for u in unknown {
            if !ignored.contains(&u) {
                ignored.push(u);
            }
        }
        out.push((name.to_string(), o));
    }
    check_unknown(&ignored, ignore_unknown)?;
    Ok((out, Applied { ignored }))
}

/// The sections of `text`, refused if a required one is missing.
fn checked_sections(text: &str) -> Result<Vec<ini::Section>, String> {
    let sections = ini::parse(text)?;
    let missing: Vec<&str> =
        REQUIRED.iter().copied().filter(|r| !sections.iter().any(|s| s.header == *r)).collect();
    if !missing.is_empty() {
        let what = if sections.is_empty() { "no sections at all" } else { "a partial file" };
        return Err(format!(
            "not a complete OPTIONS file ({what}: empty or truncated?): missing {}; every \
             OPTIONS file has [Version], [DBOptions] and [CFOptions \"default\"]",
            missing.join(", ")
        ));
    }
    Ok(sections)
}

/// `base` with `[DBOptions]` and `family`'s sections applied, and the unknown options and
/// sections (a section for which `other` is true is skipped silently).
fn apply_family(
    base: &Options,
    sections: &[ini::Section],
    family: &str,
    other: &dyn Fn(&str) -> bool,
) -> Result<(Options, Vec<String>), String> {
    let mut out = base.clone();
    let mut unknown: Vec<String> = Vec::new();
    for section in sections {
        let header = section.header.as_str();
        if !read_for(header, family) {
            if !other(header) {
                unknown.push(format!("{header} (a section or column family Talus does not have)"));
            }
            continue;
        }
        for e in &section.entries {
            let (name, value) = (e.name.as_str(), e.value.as_str());
            if header == "[Version]" {
                if name == "options_file_version" && !value.starts_with("1.") {
                    return Err(format!(
                        "line {}: options_file_version {value} is not supported (1.x)",
                        e.line
                    ));
                }
                continue;
            }
            let in_table = header.starts_with("[TableOptions");
            let table_option = engine::TABLE_OPTIONS.contains(&name);
            if engine::find(name).is_none()
                || table_option != in_table
                || name == "block_based_table_factory"
            {
                unknown.push(format!("{header} {name}"));
                continue;
            }
            engine::set(&mut out, name, value).map_err(|err| format!("line {}: {err}", e.line))?;
        }
    }
    Ok((out, unknown))
}

/// Refuses `unknown` options unless `ignore_unknown`.
fn check_unknown(unknown: &[String], ignore_unknown: bool) -> Result<(), String> {
    if !unknown.is_empty() && !ignore_unknown {
        return Err(format!(
            "{} option(s) Talus does not have (pass --ignore_unknown_options to skip them): {}",
            unknown.len(),
            unknown.join(", ")
        ));
    }
    Ok(())
}

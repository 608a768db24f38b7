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

/// The sections Talus reads.
fn known(header: &str) -> bool {
    REQUIRED.contains(&header) || header == "[TableOptions/BlockBasedTable \"default\"]"
}

/// Applies the OPTIONS file `text` to `o`; on `Err`, `o` is unchanged.
pub fn apply(o: &mut Options, text: &str, ignore_unknown: bool) -> Result<Applied, String> {
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
    let mut out = o.clone();
    let mut unknown: Vec<String> = Vec::new();
    for section in &sections {
        let header = section.header.as_str();
        if !known(header) {
            unknown.push(format!("{header} (a section or column family Talus does not have)"));
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
    if !unknown.is_empty() && !ignore_unknown {
        return Err(format!(
            "{} option(s) Talus does not have (pass --ignore_unknown_options to skip them): {}",
            unknown.len(),
            unknown.join(", ")
        ));
    }
    *o = out;
    Ok(Applied { ignored: unknown })
}

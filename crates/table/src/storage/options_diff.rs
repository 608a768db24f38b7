//! Two engines' OPTIONS files compared as `bench/compare.py` compares them: the options both
//! write (same section, same name) must have equal values, after the spellings that differ but
//! mean the same are normalized (numbers by value: `10` and `10.000000`; `bloomfilter:10:false`
//! and `bloomfilter:10:true` as `bloom:10`); a nested struct (`compaction_options_universal=
//! {a=1;b=2}`) is compared field by field (`compaction_options_universal.a`). A difference is
//! refused unless its name is in the caller's accepted list. Options only one engine has are
//! not compared (they are listed in each file for the reader).
//!
//! Used by the RocksDB backend's opener (Talus's rendering against RocksDB's serialization of
//! the options it parsed, before either opens a file) and by the tools that print the result.
//! Pure text: no IO.

use std::collections::BTreeMap;

/// The sections compared.
pub const SECTIONS: [&str; 3] =
    ["DBOptions", "CFOptions \"default\"", "TableOptions/BlockBasedTable \"default\""];

/// `(section, name, value)` of every `name=value` line under a `[section]` header, in order.
pub fn parse_sections(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.to_string();
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            out.push((section.clone(), k.trim().to_string(), v.trim().to_string()));
        }
    }
    out
}

/// The compared options of one file: `(section, name)` -> normalized value; nested structs
/// as `name.field`.
fn options_of(text: &str) -> BTreeMap<(String, String), String> {
    let mut m = BTreeMap::new();
    for (section, name, value) in parse_sections(text) {
        if !SECTIONS.contains(&section.as_str()) {
            continue;
        }
        match value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
            Some(inner) => {
                for part in inner.split(';') {
                    if let Some((f, v)) = part.split_once('=') {
                        let key = (section.clone(), format!("{name}.{}", f.trim()));
                        m.insert(key, normalize(f.trim(), v.trim()));
                    }
                }
            }
            None => {
                let v = normalize(&name, &value);
                m.insert((section, name), v);
            }
        }
    }
    m
}

/// One spelling per meaning: booleans as written, numbers by value, bloom filters by bits.
fn normalize(name: &str, value: &str) -> String {
    if value == "true" || value == "false" {
        return value.to_string();
    }
    if let Ok(x) = value.parse::<f64>() {
        return format!("{x:?}");
    }
    if name == "filter_policy" {
        if let Some(bits) = value.strip_prefix("bloomfilter:").and_then(|r| r.split(':').next()) {
            if let Ok(b) = bits.parse::<f64>() {
                return format!("bloom:{b:?}");
            }
        }
    }
    value.to_string()
}

/// One option both files have with different values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionDiff {
    /// `section` of the files.
    pub section: String,
    /// The option (`name.field` inside a struct).
    pub name: String,
    /// The first file's value (normalized).
    pub left: String,
    /// The second file's value (normalized).
    pub right: String,
    /// Named in the accepted list.
    pub accepted: bool,
}

/// The result of [`compare`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OptionsComparison {
    /// Options both files have.
    pub compared: usize,
    /// Those whose values differ.
    pub diffs: Vec<OptionDiff>,
}

impl OptionsComparison {
    /// The differences not accepted.
    pub fn refused(&self) -> Vec<&OptionDiff> {
        self.diffs.iter().filter(|d| !d.accepted).collect()
    }

    /// One line per difference, `  name: left=.. right=..` (with `(accepted)`), for `left` and
    /// `right` named as given.
    pub fn lines(&self, left: &str, right: &str) -> Vec<String> {
        self.diffs
            .iter()
            .map(|d| {
                let mark = if d.accepted { "  (accepted)" } else { "" };
                format!("  {}: {left}={} {right}={}{mark}", d.name, d.left, d.right)
            })
            .collect()
    }
}

/// The options two engines were compared on when one was opened.
#[derive(Clone, Debug)]
pub struct OptionsReport {
    /// The OPTIONS file Talus writes for these options.
    pub talus: String,
    /// RocksDB's serialization of the options it parsed (what its OPTIONS file holds).
    pub rocksdb: String,
    /// The comparison, `talus` left (its differences were all accepted, or the open was
    /// refused).
    pub comparison: OptionsComparison,
}

/// Compares the options of OPTIONS texts `left` and `right`; a difference is accepted when its
/// name, or the struct it is a field of, is in `accept`.
pub fn compare(left: &str, right: &str, accept: &[String]) -> OptionsComparison {
    let (l, r) = (options_of(left), options_of(right));
    let mut out = OptionsComparison::default();
    for (key, lv) in &l {
        let Some(rv) = r.get(key) else { continue };
        out.compared += 1;
        if lv != rv {
            let name = key.1.clone();
            let parent = name.split('.').next().unwrap_or(&name).to_string();
            let accepted = accept.iter().any(|a| *a == name || *a == parent);
            out.diffs.push(OptionDiff {
                section: key.0.clone(),
                name,
                left: lv.clone(),
                right: rv.clone(),
                accepted,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TALUS: &str = "# a Talus file\n[Version]\n  talus_version=0.1.0\n\n[DBOptions]\n  \
        max_open_files=-1\n  wal_mmap_writes=true\n  delayed_write_rate=16777216\n\n\
        [CFOptions \"default\"]\n  max_bytes_for_level_multiplier=10.000000\n  \
        compaction_options_universal={size_ratio=1;min_merge_width=2}\n\n\
        [TableOptions/BlockBasedTable \"default\"]\n  filter_policy=bloomfilter:10:false\n";
    const ROCKS: &str = "[Version]\n  rocksdb_version=10.4.2\n[DBOptions]\n  max_open_files=-1\n  \
        delayed_write_rate=8388608\n  two_write_queues=false\n[CFOptions \"default\"]\n  \
        max_bytes_for_level_multiplier=10\n  \
        compaction_options_universal={incremental=false;size_ratio=1;min_merge_width=3;}\n\
        [TableOptions/BlockBasedTable \"default\"]\n  filter_policy=bloomfilter:10:true\n";

    #[test]
    fn shared_options_compare_by_meaning() {
        let c = compare(TALUS, ROCKS, &[]);
        assert_eq!(c.compared, 6, "{c:?}");
        let names: Vec<&str> = c.diffs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["compaction_options_universal.min_merge_width", "delayed_write_rate"]);
        assert_eq!(c.refused().len(), 2);
        let c = compare(
            TALUS,
            ROCKS,
            &["delayed_write_rate".into(), "compaction_options_universal".into()],
        );
        assert!(c.refused().is_empty());
        assert_eq!(
            c.lines("talus", "rocksdb")[1],
            "  delayed_write_rate: talus=16777216.0 rocksdb=8388608.0  (accepted)"
        );
        assert!(compare(TALUS, TALUS, &[]).diffs.is_empty());
    }
}

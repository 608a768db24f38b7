//! The ini syntax of an OPTIONS file, as RocksDB's `RocksDBOptionsParser`
//! (`options/options_parser.cc`) reads it, into [`Section`]s of [`Entry`]s with line numbers.
//!
//! - Lines end in `\n` or `\r\n`; a UTF-8 byte order mark at the start of the file is skipped
//!   (RocksDB refuses it: "A valid statement must have a '='. (at line 1)").
//! - `#` starts a comment anywhere on a line (a whole-line comment or one after a value, as
//!   RocksDB's `TrimAndRemoveComment`), except when escaped as `\#`, which is a literal `#`.
//! - Blanks around names, values and lines are dropped; a blank line is skipped.
//! - `[Title]` or `[Title "argument"]` starts a section; `name=value` (split at the first `=`)
//!   is an entry of the current section; anything else is an error naming its line.
//! - Talus is stricter than RocksDB where RocksDB reads a damaged file silently: a name repeated
//!   in a section (RocksDB keeps the first) or a repeated section header (RocksDB refuses only
//!   some) is refused naming both lines, and so is an entry before any section.
//!
//! Pure; which sections must be present, and what the entries mean, is [`super`]'s business.

/// One `name=value` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The name, trimmed.
    pub name: String,
    /// The value, trimmed, comment removed, `\#` unescaped.
    pub value: String,
    /// 1-based line number.
    pub line: usize,
}

/// One `[...]` section and its entries, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The header as written, trimmed (`[CFOptions "default"]`).
    pub header: String,
    /// 1-based line number of the header.
    pub line: usize,
    /// The entries, in file order (no name twice).
    pub entries: Vec<Entry>,
}

/// The UTF-8 byte order mark.
const BOM: char = '\u{feff}';

/// `line` without its comment (from the first `#` not preceded by `\`).
fn strip_comment(line: &str) -> &str {
    let mut prev = None;
    for (i, c) in line.char_indices() {
        if c == '#' && prev != Some('\\') {
            return line.get(..i).unwrap_or(line);
        }
        prev = Some(c);
    }
    line
}

/// Parses `text` into its sections; `Err` names the line and what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Section>, String> {
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            if line.len() < 2 || !line.ends_with(']') {
                return Err(format!("line {no}: malformed section header {line:?}"));
            }
            if let Some(first) = sections.iter().find(|s| s.header == line) {
                return Err(format!(
                    "line {no}: section {line} appears twice (lines {} and {no})",
                    first.line
                ));
            }
            sections.push(Section { header: line.to_string(), line: no, entries: Vec::new() });
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            return Err(format!("line {no}: expected name=value or [section], got {line:?}"));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(format!("line {no}: {line:?} has no name before '='"));
        }
        let Some(section) = sections.last_mut() else {
            return Err(format!("line {no}: {name} is outside any section"));
        };
        if let Some(first) = section.entries.iter().find(|e| e.name == name) {
            return Err(format!(
                "line {no}: {name} is set twice in {} (lines {} and {no})",
                section.header, first.line
            ));
        }
        let value = value.trim().replace("\\#", "#");
        section.entries.push(Entry { name: name.to_string(), value, line: no });
    }
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Vec<(String, String, usize)> {
        parse(text)
            .unwrap()
            .into_iter()
            .flat_map(|s| s.entries)
            .map(|e| (e.name, e.value, e.line))
            .collect()
    }

    #[test]
    fn comments_bom_crlf_and_blanks() {
        let text = "\u{feff}# a RocksDB file\r\n[DBOptions]  # trailing\r\n  a=1 # why\r\n\r\n\
                    b = x\\#y # real comment\r\n\tc=\r\n";
        let s = parse(text).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].header.as_str(), s[0].line), ("[DBOptions]", 2));
        assert_eq!(
            entries(text),
            vec![
                ("a".into(), "1".into(), 3),
                ("b".into(), "x#y".into(), 5),
                ("c".into(), "".into(), 6)
            ]
        );
        assert!(parse("").unwrap().is_empty());
        assert!(parse("\u{feff}").unwrap().is_empty());
    }

    #[test]
    fn a_value_keeps_later_equal_signs_and_braces() {
        let e = entries("[CFOptions \"default\"]\n  t={a=1;b=2}\n  m=x=y\n");
        assert_eq!(e[0].1, "{a=1;b=2}");
        assert_eq!(e[1].1, "x=y");
    }

    #[test]
    fn duplicates_name_both_lines() {
        let e = parse("[DBOptions]\n  a=1\n  b=2\n  a=1\n").unwrap_err();
        assert!(e.contains("a is set twice in [DBOptions] (lines 2 and 4)"), "{e}");
        let e = parse("[DBOptions]\n  a=1\n[CFOptions \"x\"]\n  a=1\n[DBOptions]\n").unwrap_err();
        assert!(e.contains("section [DBOptions] appears twice (lines 1 and 5)"), "{e}");
        // The same name in two sections is fine.
        assert_eq!(entries("[A]\na=1\n[B]\na=2\n").len(), 2);
    }

    #[test]
    fn malformed_lines_are_named() {
        for (text, want) in [
            ("a=1\n", "line 1: a is outside any section"),
            ("[A]\njunk\n", "line 2: expected name=value"),
            ("[A]\n=1\n", "line 2:"),
            ("[A\n", "line 1: malformed section header"),
            ("\u{feff}\u{feff}[A]\n", "line 1: expected name=value"),
            ("[A]\n\0\0\0\n", "line 2: expected name=value"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}

//! The result files' CSV (header + rows, no quoting), read by every loader of `talus report`.

use std::collections::BTreeMap;

/// Parses a header + rows CSV without quoting (ibench writes none); returns the rows and how
/// many had the wrong number of fields.
pub fn parse_csv(text: &str) -> (Vec<BTreeMap<String, String>>, usize) {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else { return (Vec::new(), 0) };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let mut rows = Vec::new();
    let mut bad = 0;
    for l in lines {
        let vals: Vec<&str> = l.split(',').map(str::trim).collect();
        if vals.len() != names.len() {
            bad += 1;
            continue;
        }
        rows.push(names.iter().zip(vals).map(|(k, v)| (k.to_string(), v.to_string())).collect());
    }
    (rows, bad)
}

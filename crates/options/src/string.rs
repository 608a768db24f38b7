//! RocksDB's option-string syntax (`GetOptionsFromString`): `k=v;k=v`, where a value in braces
//! (`block_based_table_factory={block_size=16384;filter_policy=bloomfilter:10:false}`) is kept
//! whole, nested braces included. Used for `--options=...` and for the nested values of
//! [`super::engine`] and OPTIONS files.

/// Splits `s` into `(key, value)` pairs; a trailing `;` and blanks around names are allowed.
/// `Err` says what is malformed (a pair without `=`, unbalanced braces, an empty name).
pub fn split(s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once('=')
            .ok_or_else(|| format!("{rest:?} has no '=' (expected key=value)"))?;
        let key = key.trim();
        if key.is_empty() || key.contains(';') {
            return Err(format!("malformed option string near {rest:?} (expected key=value)"));
        }
        let after = after.trim_start();
        let (value, tail) = if after.starts_with('{') {
            let mut depth = 0usize;
            let mut end = None;
            for (i, c) in after.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(i);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let end = end.ok_or_else(|| format!("unbalanced braces in the value of {key}"))?;
            let tail = after[end + 1..].trim_start();
            let tail = match tail.strip_prefix(';') {
                Some(t) => t,
                None if tail.is_empty() => tail,
                None => return Err(format!("expected ';' after the value of {key}, got {tail:?}")),
            };
            (&after[..=end], tail)
        } else {
            match after.split_once(';') {
                Some((v, t)) => (v, t),
                None => (after, ""),
            }
        };
        out.push((key.to_string(), value.trim().to_string()));
        rest = tail.trim();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_and_nested_values() {
        let v = split(
            "write_buffer_size=1024; compression_per_level=kNoCompression:kLZ4Compression;\
             block_based_table_factory={block_size=16384;block_cache={id=LRUCache;capacity=9}};x=1;",
        )
        .unwrap();
        assert_eq!(v.len(), 4);
        assert_eq!(v[0], ("write_buffer_size".into(), "1024".into()));
        assert_eq!(v[1].1, "kNoCompression:kLZ4Compression");
        assert_eq!(v[2].1, "{block_size=16384;block_cache={id=LRUCache;capacity=9}}");
        assert_eq!(v[3], ("x".into(), "1".into()));
        assert!(split("").unwrap().is_empty());
    }

    #[test]
    fn malformed_strings_are_refused() {
        for s in ["a", "a=1;b", "=1", "t={a=1", "t={a=1}x=2"] {
            assert!(split(s).is_err(), "{s}");
        }
    }
}

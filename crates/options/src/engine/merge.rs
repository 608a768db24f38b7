//! The options that name user code: `merge_operator` (Talus's built-ins by RocksDB's names:
//! `UInt64AddOperator`, `uint64add`, `{id=StringAppendOperator;delimiter=\:;}`, ...; `nullptr`
//! for none) and `compaction_filter` / `compaction_filter_factory` (only `nullptr`: a filter is
//! code, which no name can make). Pure parsing, like [`super`].

use talus::Options;

use super::super::values::bad;

/// RocksDB's `UnescapeOptionString`: `\x` is `x`, `\n` and `\r` are newline and return.
fn unescape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(x) => out.push(x),
            None => {}
        }
    }
    out
}

/// What the built-ins are called, for errors.
fn builtins() -> String {
    let names: Vec<String> =
        talus::merge::BUILTIN_NAMES.iter().map(|(n, nick)| format!("{n} ({nick})")).collect();
    names.join(", ")
}

/// `merge_operator`: `nullptr` (or empty), a built-in's name or nickname, or RocksDB's struct
/// form `{id=NAME[;delimiter=D]}` (the delimiter of `StringAppendOperator`, escaped as RocksDB
/// writes it).
pub(super) fn merge_operator(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    if v.is_empty() || v == "nullptr" {
        o.merge_operator = None;
        return Ok(());
    }
    let (id, delimiter) = match v.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
        Some(inner) => {
            let pairs =
                super::super::string::split(inner).map_err(|e| format!("option {name}: {e}"))?;
            let (mut id, mut delim) = (None, None);
            for (k, val) in pairs {
                match k.as_str() {
                    "id" => id = Some(val),
                    "delimiter" => delim = Some(unescape(&val)),
                    other => {
                        return Err(format!(
                            "option {name}: field {other:?} is not one Talus's merge operators \
                             have (id, delimiter)"
                        ))
                    }
                }
            }
            (id.ok_or_else(|| bad(name, v, "{id=NAME;...}"))?, delim)
        }
        None => (v.to_string(), None),
    };
    let op = talus::merge::builtin_by_name(&id).ok_or_else(|| {
        format!(
            "option {name}={v}: no built-in merge operator is called {id:?} (Talus has {}); a \
             merge operator of your own is set in code (Options::merge_operator)",
            builtins()
        )
    })?;
    o.merge_operator = match delimiter {
        Some(d) if op.name() == "StringAppendOperator" => {
            Some(std::sync::Arc::new(talus::merge::StringAppendOperator::new(d)))
        }
        Some(_) => {
            return Err(format!("option {name}={v}: only StringAppendOperator has a delimiter"))
        }
        None => Some(op),
    };
    Ok(())
}

/// `compaction_filter` and `compaction_filter_factory`: `nullptr` (or empty) only.
pub(super) fn no_filter(o: &mut Options, name: &str, v: &str) -> Result<(), String> {
    if v.is_empty() || v == "nullptr" {
        if name == "compaction_filter" {
            o.compaction_filter = None;
        }
        return Ok(());
    }
    Err(format!(
        "option {name}={v}: a compaction filter is code, which Talus cannot make from a name \
         (set Options::compaction_filter in code); only nullptr is accepted here"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_operators_by_every_spelling() {
        let mut o = Options::default();
        for (v, want) in [
            ("uint64add", "UInt64AddOperator"),
            ("UInt64AddOperator", "UInt64AddOperator"),
            ("{id=PutOperator}", "PutOperator"),
            ("{id=StringAppendOperator;delimiter=\\:;}", "StringAppendOperator"),
        ] {
            merge_operator(&mut o, "merge_operator", v).unwrap();
            assert_eq!(o.merge_operator.as_ref().unwrap().name(), want, "{v}");
        }
        // The delimiter reached the operator.
        let op = o.merge_operator.clone().unwrap();
        assert_eq!(op.full_merge(b"k", Some(b"a"), &[b"b"]).unwrap(), b"a:b");
        merge_operator(&mut o, "merge_operator", "nullptr").unwrap();
        assert!(o.merge_operator.is_none());
        for bad in ["MyOperator", "{delimiter=x}", "{id=uint64add;delimiter=x}", "{id=max;x=1}"] {
            let e = merge_operator(&mut o, "merge_operator", bad).unwrap_err();
            assert!(e.contains("merge_operator"), "{bad}: {e}");
        }
        assert!(no_filter(&mut o, "compaction_filter", "nullptr").is_ok());
        assert!(no_filter(&mut o, "compaction_filter", "MyFilter").unwrap_err().contains("code"));
    }
}

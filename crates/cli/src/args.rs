//! Command-line parsing with RocksDB's tool syntax: `--name=value` options, bare `--name` flags,
//! and positional words, in any order (`ldb --db=x get k --hex` and `ldb get k --db=x --hex`
//! mean the same). A lone `--` ends option parsing, so a key that starts with `--` can still be
//! given as a positional word.
//!
//! Parsing accepts any `--name`; each tool then calls [`Parsed::check`] with the names it knows,
//! which rejects the first unknown one by name (RocksDB: `Invalid command-line flag bogus`).

use std::collections::BTreeMap;

/// The words of one command line, split into options and positional words.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// `--name=value` (`Some(value)`) and `--name` (`None`); a repeated name keeps the last.
    opts: BTreeMap<String, Option<String>>,
    /// Names in the order first seen, so errors name the first offender.
    order: Vec<String>,
    /// Everything that is not an option, in order.
    pub positional: Vec<String>,
}

/// What a command accepts.
#[derive(Debug, Clone, Copy)]
pub struct Spec<'a> {
    /// Options that take a value (`--from=K`).
    pub values: &'a [&'a str],
    /// Boolean flags (`--hex`, also `--hex=true|false`).
    pub flags: &'a [&'a str],
}

impl Parsed {
    /// Splits `args` (without the program and subcommand names).
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Parsed {
        let mut p = Parsed::default();
        let mut only_positional = false;
        for a in args {
            let a = a.as_ref();
            if only_positional {
                p.positional.push(a.to_string());
                continue;
            }
            if a == "--" {
                only_positional = true;
                continue;
            }
            match a.strip_prefix("--") {
                Some(rest) => {
                    let (name, value) = match rest.split_once('=') {
                        Some((n, v)) => (n, Some(v.to_string())),
                        None => (rest, None),
                    };
                    if !p.opts.contains_key(name) {
                        p.order.push(name.to_string());
                    }
                    p.opts.insert(name.to_string(), value);
                }
                None => p.positional.push(a.to_string()),
            }
        }
        p
    }

    /// Fails, naming the first option not in `spec`, a value option given without a value, or a
    /// flag given a value other than true/false.
    pub fn check(&self, spec: &Spec<'_>) -> Result<(), String> {
        for name in &self.order {
            let value = self.opts.get(name).and_then(|v| v.as_deref());
            if spec.values.contains(&name.as_str()) {
                if value.is_none() {
                    return Err(format!("--{name} needs a value: --{name}=<value>"));
                }
            } else if spec.flags.contains(&name.as_str()) {
                if let Some(v) = value {
                    parse_bool(v).ok_or_else(|| {
                        format!("--{name} takes no value or true/false, got {v:?}")
                    })?;
                }
            } else {
                return Err(format!("Invalid command-line flag {name}"));
            }
        }
        Ok(())
    }

    /// The value of option `name`, if given with one.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.opts.get(name).and_then(|v| v.as_deref())
    }

    /// True if flag `name` was given bare or as `--name=true` (checked by [`Parsed::check`]).
    pub fn flag(&self, name: &str) -> bool {
        match self.opts.get(name) {
            None => false,
            Some(None) => true,
            Some(Some(v)) => parse_bool(v).unwrap_or(false),
        }
    }

    /// True if option or flag `name` was given at all (with or without a value).
    pub fn has(&self, name: &str) -> bool {
        self.opts.contains_key(name)
    }

    /// The value of option `name` parsed as an unsigned number; `Err` names the option.
    pub fn number(&self, name: &str) -> Result<Option<u64>, String> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => {
                v.parse::<u64>().map(Some).map_err(|_| format!("{name} has an invalid value"))
            }
        }
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec<'static> =
        Spec { values: &["db", "from", "max_keys"], flags: &["hex", "create_if_missing"] };

    #[test]
    fn options_flags_and_positionals_mix_in_any_order() {
        let p = Parsed::parse(&["--db=/x", "get", "--hex", "k", "--from=a=b"]);
        assert_eq!(p.positional, vec!["get", "k"]);
        assert_eq!(p.value("db"), Some("/x"));
        assert_eq!(p.value("from"), Some("a=b"), "only the first '=' splits");
        assert!(p.flag("hex"));
        assert!(!p.flag("create_if_missing"));
        assert!(p.check(&SPEC).is_ok());
    }

    #[test]
    fn unknown_flag_is_named() {
        let p = Parsed::parse(&["--db=/x", "--bogus", "--also_bad=1", "get"]);
        let e = p.check(&SPEC).unwrap_err();
        assert!(e.contains("bogus") && !e.contains("also_bad"), "{e}");
    }

    #[test]
    fn value_option_without_value_and_bad_flag_value_are_errors() {
        assert!(Parsed::parse(&["--from"]).check(&SPEC).unwrap_err().contains("--from"));
        assert!(Parsed::parse(&["--hex=maybe"]).check(&SPEC).unwrap_err().contains("hex"));
        let p = Parsed::parse(&["--hex=false", "--create_if_missing=true"]);
        assert!(p.check(&SPEC).is_ok());
        assert!(!p.flag("hex"));
        assert!(p.flag("create_if_missing"));
    }

    #[test]
    fn double_dash_ends_options_and_last_repeat_wins() {
        let p = Parsed::parse(&["--from=a", "put", "--", "--k", "--v", "--from=b"]);
        assert_eq!(p.positional, vec!["put", "--k", "--v", "--from=b"]);
        assert_eq!(p.value("from"), Some("a"));
        let p = Parsed::parse(&["--from=a", "--from=b"]);
        assert_eq!(p.value("from"), Some("b"));
    }

    #[test]
    fn numbers() {
        let p = Parsed::parse(&["--max_keys=10", "--from=x"]);
        assert_eq!(p.number("max_keys"), Ok(Some(10)));
        assert_eq!(p.number("db"), Ok(None));
        assert_eq!(p.number("from").unwrap_err(), "from has an invalid value");
    }
}

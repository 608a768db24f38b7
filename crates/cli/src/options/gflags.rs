//! Command-line words with gflags' syntax, for every tool: `--name=value` options, bare
//! `--name` booleans, `--noname` (false), and positional words, in any order (`ldb --db=x get k
//! --hex` and `ldb get k --db=x --hex` mean the same). A lone `--` ends option parsing, so a key
//! that starts with `--` can still be given as a positional word.
//!
//! Booleans take gflags' spellings everywhere: `true/false/1/0/yes/no/t/f/y/n`, in any case
//! ([`parse_bool`]). Parsing accepts any `--name`; each tool then calls [`Parsed::check`] with
//! what it knows ([`Spec`], and with `engine: true` every engine option of
//! [`super::engine`]), which refuses the first unknown name, a value option without a value, a
//! malformed boolean or engine option value, and a bad `--options` string or `--options_file`,
//! each by name (RocksDB: `Invalid command-line flag bogus`), before the tool touches any file.

use std::collections::BTreeMap;

/// The words of one command line, split into options and positional words.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// `--name=value` (`Some(value)`) and `--name` (`None`); a repeated name keeps the last.
    opts: BTreeMap<String, Option<String>>,
    /// Names in the order first seen, so errors name the first offender.
    order: Vec<String>,
    /// Every option as given, in order (what [`Parsed::check`] replays).
    given: Vec<(String, Option<String>)>,
    /// Everything that is not an option, in order.
    pub positional: Vec<String>,
}

/// What a command accepts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spec<'a> {
    /// Options that take a value (`--from=K`).
    pub values: &'a [&'a str],
    /// Boolean flags (`--hex`, `--nohex`, `--hex=yes|no|...`).
    pub flags: &'a [&'a str],
    /// Also every engine option by RocksDB's name, `--options_file`, `--options` and
    /// `--ignore_unknown_options` ([`super::engine`]).
    pub engine: bool,
}

/// What kind of option `name` is under `spec`, if it has it.
fn kind(spec: &Spec<'_>, name: &str) -> Option<bool> {
    if spec.flags.contains(&name) {
        return Some(true);
    }
    if spec.values.contains(&name) {
        return Some(false);
    }
    if spec.engine {
        if super::LAYER_FLAGS.contains(&name) {
            return Some(name == "ignore_unknown_options");
        }
        return super::engine::find(name).map(|o| o.boolean);
    }
    None
}

pub use super::values::{bad, parse_bool};

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
                    p.set(name, value);
                }
                None => p.positional.push(a.to_string()),
            }
        }
        p
    }

    fn set(&mut self, name: &str, value: Option<String>) {
        self.given.push((name.to_string(), value.clone()));
        if !self.opts.contains_key(name) {
            self.order.push(name.to_string());
        }
        self.opts.insert(name.to_string(), value);
    }

    /// Checks every option against `spec`: turns `--noNAME` of a boolean into `--NAME=false`,
    /// and fails naming the first unknown option, a value option given without a value, a
    /// boolean given something other than [`parse_bool`]'s spellings, or an engine option
    /// whose value the engine layer refuses.
    pub fn check(&mut self, spec: &Spec<'_>) -> Result<(), String> {
        let given = std::mem::take(&mut self.given);
        self.opts.clear();
        self.order.clear();
        for (name, value) in given {
            match kind(spec, &name) {
                Some(false) => {
                    let Some(v) = value else {
                        return Err(format!("--{name} needs a value: --{name}=<value>"));
                    };
                    if spec.engine
                        && !spec.values.contains(&name.as_str())
                        && super::engine::find(&name).is_some()
                    {
                        super::engine::set(&mut talus::Options::default(), &name, &v)?;
                    }
                    self.set(&name, Some(v));
                }
                Some(true) => {
                    if let Some(v) = &value {
                        parse_bool(v).ok_or_else(|| {
                            bad(&name, v, "a boolean (true/false, 1/0, yes/no, t/f, y/n)")
                        })?;
                    }
                    self.set(&name, value);
                }
                None => match name.strip_prefix("no") {
                    Some(pos) if value.is_none() && kind(spec, pos) == Some(true) => {
                        self.set(pos, Some("false".into()));
                    }
                    _ => return Err(format!("Invalid command-line flag {name}")),
                },
            }
        }
        if spec.engine {
            self.check_layer_values()?;
        }
        Ok(())
    }

    /// `--options` and `--options_file` applied to a scratch [`talus::Options`], so a bad
    /// string or file is refused by [`Parsed::check`], before the tool touches any file.
    fn check_layer_values(&self) -> Result<(), String> {
        let mut scratch = talus::Options::default();
        if let Some(path) = self.value("options_file") {
            super::apply_file(&mut scratch, path, self.flag("ignore_unknown_options"))?;
        }
        if let Some(s) = self.value("options") {
            super::apply_string(&mut scratch, s).map_err(|e| format!("--options: {e}"))?;
        }
        Ok(())
    }

    /// Names given, in the order first seen.
    pub fn names(&self) -> &[String] {
        &self.order
    }

    /// True if option `name` was given at all.
    pub fn has(&self, name: &str) -> bool {
        self.opts.contains_key(name)
    }

    /// The value of option `name`, if given with one.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.opts.get(name).and_then(|v| v.as_deref())
    }

    /// True if flag `name` was given bare or as `--name=<true spelling>` (checked by
    /// [`Parsed::check`]).
    pub fn flag(&self, name: &str) -> bool {
        match self.opts.get(name) {
            None => false,
            Some(None) => true,
            Some(Some(v)) => parse_bool(v).unwrap_or(false),
        }
    }

    /// Flag `name`, or `default` when not given.
    pub fn flag_or(&self, name: &str, default: bool) -> bool {
        if self.has(name) {
            self.flag(name)
        } else {
            default
        }
    }

    /// The value of option `name` parsed as a `T`; `Err` names the option and says `what` was
    /// expected.
    pub fn get<T: std::str::FromStr>(&self, name: &str, what: &str) -> Result<Option<T>, String> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => v.trim().parse().map(Some).map_err(|_| bad(name, v, what)),
        }
    }

    /// [`Parsed::get`] with a default.
    pub fn get_or<T: std::str::FromStr>(
        &self,
        name: &str,
        default: T,
        what: &str,
    ) -> Result<T, String> {
        Ok(self.get(name, what)?.unwrap_or(default))
    }

    /// The value of option `name` parsed as an unsigned number; `Err` names the option.
    pub fn number(&self, name: &str) -> Result<Option<u64>, String> {
        self.get(name, "a non-negative integer")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec<'static> = Spec {
        values: &["db", "from", "max_keys"],
        flags: &["hex", "create_if_missing"],
        engine: false,
    };

    #[test]
    fn options_flags_and_positionals_mix_in_any_order() {
        let mut p = Parsed::parse(&["--db=/x", "get", "--hex", "k", "--from=a=b"]);
        assert_eq!(p.positional, vec!["get", "k"]);
        assert_eq!(p.value("db"), Some("/x"));
        assert_eq!(p.value("from"), Some("a=b"), "only the first '=' splits");
        assert!(p.flag("hex"));
        assert!(!p.flag("create_if_missing"));
        assert!(p.check(&SPEC).is_ok());
    }

    #[test]
    fn unknown_flag_is_named() {
        let mut p = Parsed::parse(&["--db=/x", "--bogus", "--also_bad=1", "get"]);
        let e = p.check(&SPEC).unwrap_err();
        assert!(e.contains("bogus") && !e.contains("also_bad"), "{e}");
    }

    #[test]
    fn every_boolean_spelling_and_noflag() {
        for (v, want) in [
            ("true", true),
            ("TRUE", true),
            ("1", true),
            ("yes", true),
            ("t", true),
            ("y", true),
            ("Y", true),
            ("false", false),
            ("0", false),
            ("no", false),
            ("f", false),
            ("n", false),
            ("No", false),
        ] {
            let mut p = Parsed::parse(&[format!("--hex={v}")]);
            p.check(&SPEC).unwrap();
            assert_eq!(p.flag("hex"), want, "{v}");
        }
        let mut p = Parsed::parse(&["--hex", "--nohex"]);
        p.check(&SPEC).unwrap();
        assert!(!p.flag("hex"));
        let mut p = Parsed::parse(&["--nohex", "--hex"]);
        p.check(&SPEC).unwrap();
        assert!(p.flag("hex"), "the last one wins");
        let mut p = Parsed::parse(&["--nohex=1"]);
        assert!(p.check(&SPEC).unwrap_err().contains("nohex"));
        let mut p = Parsed::parse(&["--nodb"]);
        assert!(p.check(&SPEC).unwrap_err().contains("nodb"), "--no works only for booleans");
    }

    #[test]
    fn value_option_without_value_and_bad_flag_value_are_errors() {
        assert!(Parsed::parse(&["--from"]).check(&SPEC).unwrap_err().contains("--from"));
        assert!(Parsed::parse(&["--hex=maybe"]).check(&SPEC).unwrap_err().contains("hex"));
        let mut p = Parsed::parse(&["--hex=false", "--create_if_missing=true"]);
        assert!(p.check(&SPEC).is_ok());
        assert!(!p.flag("hex"));
        assert!(p.flag("create_if_missing"));
    }

    #[test]
    fn engine_options_are_checked_by_value() {
        let spec = Spec { engine: true, ..SPEC };
        let mut p = Parsed::parse(&["--intra_l0_compaction=n", "--max_subcompactions=4"]);
        p.check(&spec).unwrap();
        assert!(!p.flag("intra_l0_compaction"));
        let mut p = Parsed::parse(&["--nointra_l0_compaction"]);
        p.check(&spec).unwrap();
        assert_eq!(p.value("intra_l0_compaction"), Some("false"));
        let e = Parsed::parse(&["--max_subcompactions=four"]).check(&spec).unwrap_err();
        assert!(e.contains("--max_subcompactions"), "{e}");
        let e = Parsed::parse(&["--max_subcompactions=4"]).check(&SPEC).unwrap_err();
        assert!(e.contains("max_subcompactions"), "{e}");
        // The option string and file are checked here too, before any tool touches a file.
        Parsed::parse(&["--options=write_buffer_size=64k", "--cache_size=1M"])
            .check(&spec)
            .unwrap();
        let e = Parsed::parse(&["--options=write_buffer_size=64kb"]).check(&spec).unwrap_err();
        assert!(e.starts_with("--options: ") && e.contains("--write_buffer_size"), "{e}");
        let e = Parsed::parse(&["--options_file=/dev/zero"]).check(&spec).unwrap_err();
        assert!(e.contains("--options_file=/dev/zero: is a character device"), "{e}");
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
        assert!(p.number("from").unwrap_err().contains("--from"));
    }
}

//! `talus ldb`: RocksDB's `ldb` for Talus databases, same syntax and output.
//!
//! `talus ldb --db=PATH [--create_if_missing] [--hex] [--key_hex] [--value_hex] COMMAND ARGS`,
//! options before or after the command. Each command is a row of [`COMMANDS`]: its positional
//! arguments, the options and flags it takes, and the function that runs it. Everything is
//! checked (flags, argument counts, hex input, numbers) before the database is opened, so a
//! typo never opens (or creates) a database.
//!
//! Output goes to stdout; failures print `Failed: <reason>` on stderr and exit 1, as RocksDB's
//! `ldb` does (a missing key: `Failed: Get failed: NotFound: `). The tool uses only the engine's
//! public API plus the MANIFEST and SST readers.
//!
//! Read commands (`get`, `scan`, `dump`, `get_property`, `checkconsistency`; `manifest_dump`
//! only reads files) open the database with [`Db::open_read_only`], as RocksDB's ldb opens
//! them: no LOCK, nothing written, so they work on a read-only mount, on a full disk and beside
//! a running writer. Write commands take the LOCK ([`Db::open`]) and are refused with the lock
//! error while another process has the database open. `--wal_recovery_mode=` (RocksDB's names
//! or 0-3) applies to both. Whenever the open's WAL recovery dropped anything, the command
//! prints a `Warning:` with the recovery report on stderr (and still runs).
//!
//! `--column_family=NAME` (every command) picks the family the command works on; a name the
//! database does not have fails as RocksDB's does (`Failed: Non-existing column family NAME`).
//! The database is opened with all its families (RocksDB's ldb does the same), so a database
//! with several opens. `list_column_families` prints the families of the MANIFEST as
//! RocksDB's `ldb` does, without opening the database; `create_column_family NAME` and
//! `drop_column_family NAME` are RocksDB's commands of those names.

use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;

use talus::{Db, Options};

use crate::fmt::decode_input;
use crate::options::{Parsed, Spec};

mod backup;
mod blob;
mod data;
mod manifest;

/// Options every command accepts.
const GLOBAL_VALUES: &[&str] = &["db", "column_family"];
/// Flags every command accepts (and every engine option: `--create_if_missing`,
/// `--wal_recovery_mode`, `--options_file`, ...; see [`crate::options`]).
const GLOBAL_FLAGS: &[&str] = &["hex", "key_hex", "value_hex", "help"];

/// Why a command failed.
#[derive(Debug)]
pub enum Fail {
    /// Printed as `Failed: <message>`.
    Msg(String),
    /// Writing the output failed (a closed pipe ends the command quietly).
    Output(io::Error),
}

impl From<String> for Fail {
    fn from(s: String) -> Fail {
        Fail::Msg(s)
    }
}

impl From<talus::Error> for Fail {
    fn from(e: talus::Error) -> Fail {
        Fail::Msg(e.to_string())
    }
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Fail {
        Fail::Output(e)
    }
}

/// What a command gets: the parsed line, its input and output.
pub struct Ctx<'a> {
    /// The parsed command line (positional[0] is the command name).
    pub args: Parsed,
    /// True for a command that only reads: the database is opened read-only.
    pub read_only: bool,
    /// Standard input (for `load`).
    pub input: &'a mut dyn BufRead,
    /// Standard output.
    pub out: &'a mut dyn Write,
    /// Standard error (warnings; the final `Failed:` line is printed by the caller).
    pub err: &'a mut dyn Write,
}

impl Ctx<'_> {
    /// Positional argument `i` of the command (0 is the first after the command name).
    fn arg(&self, i: usize) -> &str {
        self.args.positional.get(i + 1).map_or("", |s| s.as_str())
    }
    fn key_hex(&self) -> bool {
        self.args.flag("hex") || self.args.flag("key_hex")
    }
    fn value_hex(&self) -> bool {
        self.args.flag("hex") || self.args.flag("value_hex")
    }
    /// Positional key `i`, decoded.
    fn key(&self, i: usize) -> Result<Vec<u8>, Fail> {
        Ok(decode_input(self.arg(i), self.key_hex())?)
    }
    /// Option `name` as a key, decoded.
    fn key_opt(&self, name: &str) -> Result<Option<Vec<u8>>, Fail> {
        match self.args.value(name) {
            Some(v) => Ok(Some(decode_input(v, self.key_hex())?)),
            None => Ok(None),
        }
    }
    fn db_path(&self) -> Result<PathBuf, Fail> {
        match self.args.value("db") {
            Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
            _ => Err(Fail::Msg("Either db or path must be specified.".into())),
        }
    }
    /// Opens the database named by `--db`: read-only for a read command, else read-write
    /// (creating it only with `--create_if_missing`). Warns on stderr if WAL recovery dropped
    /// anything.
    fn open(&mut self, tweak: impl FnOnce(&mut Options)) -> Result<Db, Fail> {
        let path = self.db_path()?;
        let mut opts = crate::options::engine_options(&self.args, Options::default(), &[])?;
        if !self.args.has("merge_operator") && !self.args.has("options_file") {
            // As the database was written: its newest OPTIONS file names its merge operator
            // (`get` and `scan` show merged values; a built-in only, else reads of operands fail
            // saying there is no operator).
            if let Some(v) = options_file_merge_operator(&path) {
                let _ = crate::options::engine::set(&mut opts, "merge_operator", &v);
            }
        }
        tweak(&mut opts);
        // Every family of the database, as RocksDB's ldb opens it. None when the listing fails
        // (a new database, or one the open refuses: it then says why, e.g. that RocksDB wrote
        // it, better than the listing can).
        let names = Db::list_column_families(&path, &opts).unwrap_or_default();
        let families: Vec<_> = names
            .iter()
            .filter(|n| n.as_str() != talus::column_family::DEFAULT_COLUMN_FAMILY_NAME)
            .map(|n| talus::ColumnFamilyDescriptor::new(n.clone(), opts.clone()))
            .collect();
        let db = if self.read_only {
            Db::open_cf_read_only(&path, opts, families)?
        } else {
            Db::open_cf(&path, opts, families)?
        };
        if let Some(cf) = self.args.value("column_family") {
            if db.cf_handle(cf).is_none() {
                return Err(Fail::Msg(format!("Non-existing column family {cf}")));
            }
        }
        let report = db.recovery_report();
        if !report.is_empty() {
            writeln!(
                self.err,
                "Warning: WAL recovery ({}) dropped {} bytes ({} intact write batches, {} \
                 operations) when opening {}:\n{report}",
                report.mode.name(),
                report.bytes_dropped(),
                report.batches_dropped(),
                report.operations_dropped(),
                path.display()
            )?;
        }
        Ok(db)
    }
}

impl Ctx<'_> {
    /// Opens the database (see [`Ctx::open`]) and returns it with the family `--column_family`
    /// names (`default` without it).
    fn open_family(&mut self) -> Result<(Db, talus::ColumnFamily), Fail> {
        let db = self.open(|_| {})?;
        let cf = match self.args.value("column_family") {
            Some(name) => db
                .cf_handle(name)
                .ok_or_else(|| Fail::Msg(format!("Non-existing column family {name}")))?,
            None => db.default_column_family(),
        };
        Ok((db, cf))
    }
}

/// The `merge_operator=` value of the newest `OPTIONS-NNNNNN` file in `dir`, if any.
fn options_file_merge_operator(dir: &std::path::Path) -> Option<String> {
    let newest = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let n: u64 = name.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((n, name))
        })
        .max()?;
    let text = std::fs::read_to_string(dir.join(newest.1)).ok()?;
    text.lines().find_map(|l| l.trim().strip_prefix("merge_operator=").map(str::to_string))
}

/// One `ldb` command.
pub struct Command {
    /// Its name.
    pub name: &'static str,
    /// Names of its positional arguments, for usage and errors.
    pub args: &'static [&'static str],
    /// Options with values it takes besides the global ones.
    pub values: &'static [&'static str],
    /// Flags it takes besides the global ones.
    pub flags: &'static [&'static str],
    /// One-line usage after the name.
    pub usage: &'static str,
    /// Only reads: opens the database read-only.
    pub read_only: bool,
    /// Runs it.
    pub run: fn(&mut Ctx<'_>) -> Result<(), Fail>,
}

/// Every command, in usage order.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "put",
        args: &["<key>", "<value>"],
        values: &[],
        flags: &[],
        usage: "<key> <value> [--create_if_missing]",
        read_only: false,
        run: data::put,
    },
    Command {
        name: "get",
        args: &["<key>"],
        values: &[],
        flags: &["decode_blob_index"],
        usage: "<key> [--decode_blob_index]",
        read_only: true,
        run: data::get,
    },
    Command {
        name: "delete",
        args: &["<key>"],
        values: &[],
        flags: &[],
        usage: "<key>",
        read_only: false,
        run: data::delete,
    },
    Command {
        name: "deleterange",
        args: &["<begin key>", "<end key>"],
        values: &[],
        flags: &[],
        usage: "<begin key> <end key>",
        read_only: false,
        run: data::delete_range,
    },
    Command {
        name: "scan",
        args: &[],
        values: &["from", "to", "max_keys"],
        flags: &["no_value", "decode_blob_index"],
        usage: "[--from] [--to] [--max_keys=<N>] [--no_value] [--decode_blob_index]",
        read_only: true,
        run: data::scan,
    },
    Command {
        name: "dump",
        args: &[],
        values: &["from", "to", "max_keys"],
        flags: &["count_only", "decode_blob_index"],
        usage: "[--from] [--to] [--max_keys=<N>] [--count_only] [--decode_blob_index]",
        read_only: true,
        run: data::dump,
    },
    Command {
        name: "load",
        args: &[],
        values: &[],
        flags: &["disable_wal", "compact"],
        usage: "[--create_if_missing] [--disable_wal] [--compact]   (stdin: key ==> value lines)",
        read_only: false,
        run: data::load,
    },
    Command {
        name: "checkconsistency",
        args: &[],
        values: &[],
        flags: &[],
        usage: "",
        read_only: true,
        run: manifest::check_consistency,
    },
    Command {
        name: "manifest_dump",
        args: &[],
        values: &["path"],
        flags: &["verbose"],
        usage: "[--verbose] [--path=<path_to_manifest_file>]",
        read_only: true,
        run: manifest::manifest_dump,
    },
    Command {
        name: "dump_blob",
        args: &[],
        values: &["file"],
        flags: &["no_value"],
        usage: "--file=<N.blob> [--no_value]   (a blob file's header, records, footer; no --db)",
        read_only: true,
        run: blob::dump_blob,
    },
    Command {
        name: "get_property",
        args: &["<property_name>"],
        values: &[],
        flags: &[],
        usage: "<property_name>   (talus.stats, talus.num-files-at-level<N>, ...)",
        read_only: true,
        run: data::get_property,
    },
    Command {
        name: "list_column_families",
        args: &[],
        values: &[],
        flags: &[],
        usage: "   (reads the MANIFEST; does not open the database)",
        read_only: true,
        run: manifest::list_column_families,
    },
    Command {
        name: "create_column_family",
        args: &["<new_column_family_name>"],
        values: &[],
        flags: &[],
        usage: "<new_column_family_name>",
        read_only: false,
        run: data::create_column_family,
    },
    Command {
        name: "drop_column_family",
        args: &["<column_family_name_to_drop>"],
        values: &[],
        flags: &[],
        usage: "<column_family_name_to_drop>",
        read_only: false,
        run: data::drop_column_family,
    },
    Command {
        name: "compact",
        args: &[],
        values: &["from", "to"],
        flags: &[],
        usage: "[--from] [--to]",
        read_only: false,
        run: data::compact,
    },
    Command {
        name: "checkpoint",
        args: &[],
        values: &["checkpoint_dir"],
        flags: &[],
        usage: "--checkpoint_dir=<new directory>   (hard links to the tables, a new MANIFEST)",
        read_only: false,
        run: data::checkpoint,
    },
    Command {
        name: "backup",
        args: &[],
        values: &["backup_dir"],
        flags: &[],
        usage: "--backup_dir=<directory>   (incremental: tables already there are not copied)",
        read_only: false,
        run: backup::backup,
    },
    Command {
        name: "restore",
        args: &[],
        values: &["backup_dir", "backup_id"],
        flags: &[],
        usage: "--backup_dir=<directory> [--backup_id=<N>]   (--db: a new directory)",
        read_only: false,
        run: backup::restore,
    },
];

/// Writes the usage text.
pub fn usage(w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "ldb - Talus Tool (RocksDB ldb syntax)")?;
    writeln!(w)?;
    writeln!(w, "commands MUST specify --db=<full_path_to_db_directory> when necessary")?;
    writeln!(w)?;
    writeln!(
        w,
        "The following optional parameters control if keys/values are input/output as hex or as plain strings:"
    )?;
    writeln!(w, "  --key_hex : Keys are input/output as hex")?;
    writeln!(w, "  --value_hex : Values are input/output as hex")?;
    writeln!(w, "  --hex : Both keys and values are input/output as hex")?;
    writeln!(w)?;
    writeln!(w, "  --create_if_missing : create the database if it does not exist")?;
    writeln!(
        w,
        "  --wal_recovery_mode=<mode> : kTolerateCorruptedTailRecords, kAbsoluteConsistency,"
    )?;
    writeln!(w, "      kPointInTimeRecovery (default) or kSkipAnyCorruptedRecords (or 0-3)")?;
    writeln!(w)?;
    writeln!(
        w,
        "Read commands (get, scan, dump, get_property, checkconsistency, manifest_dump) open the"
    )?;
    writeln!(w, "database read-only; the others take its LOCK.")?;
    writeln!(w)?;
    writeln!(w, "Commands:")?;
    for c in COMMANDS {
        writeln!(w, "  {} {}", c.name, c.usage)?;
    }
    writeln!(w)?;
    write!(w, "{}", crate::options::engine_help())
}

/// Runs `ldb` on the process's stdin/stdout/stderr; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let code = run_io(args, &mut stdin.lock(), &mut out, &mut io::stderr().lock());
    match out.flush() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("Failed: writing output: {e}");
            1
        }
        _ => code,
    }
}

/// Runs `ldb` with explicit streams; returns the exit code.
pub fn run_io(
    args: &[String],
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut parsed = Parsed::parse(args);
    if parsed.flag("help") || parsed.positional.first().is_some_and(|c| c == "help") {
        return if usage(out).is_ok() { 0 } else { 1 };
    }
    let Some(name) = parsed.positional.first() else {
        let _ = writeln!(err, "No command given");
        let _ = usage(err);
        return 1;
    };
    let Some(cmd) = COMMANDS.iter().find(|c| c.name == name.as_str()) else {
        let _ = writeln!(err, "Unknown command {name}");
        let _ = usage(err);
        return 1;
    };
    let values: Vec<&str> = GLOBAL_VALUES.iter().chain(cmd.values).copied().collect();
    let flags: Vec<&str> = GLOBAL_FLAGS.iter().chain(cmd.flags).copied().collect();
    if let Err(e) = parsed.check(&Spec { values: &values, flags: &flags, engine: true }) {
        let _ = writeln!(err, "{e}");
        return 1;
    }
    if parsed.positional.len() != cmd.args.len() + 1 {
        let msg = if cmd.args.is_empty() {
            format!("the {} command takes no arguments", cmd.name)
        } else {
            format!("{} must be specified for the {} command", cmd.args.join(" and "), cmd.name)
        };
        let _ = writeln!(err, "Failed: {msg}");
        return 1;
    }
    let mut ctx = Ctx { args: parsed, read_only: cmd.read_only, input, out, err: &mut *err };
    match (cmd.run)(&mut ctx) {
        Ok(()) => 0,
        Err(Fail::Msg(m)) => {
            let _ = writeln!(err, "Failed: {m}");
            1
        }
        Err(Fail::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(Fail::Output(e)) => {
            let _ = writeln!(err, "Failed: writing output: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `ldb` on `args`; these all fail before any database is opened.
    fn ldb(args: &[&str]) -> (i32, String, String) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run_io(&args, &mut &b""[..], &mut out, &mut err);
        (code, String::from_utf8_lossy(&out).into(), String::from_utf8_lossy(&err).into())
    }

    #[test]
    fn unknown_flag_is_named_and_fails() {
        let (code, out, err) = ldb(&["--db=/nonexistent", "--bogus", "get", "k"]);
        assert_eq!(code, 1);
        assert!(out.is_empty());
        assert!(err.contains("Invalid command-line flag bogus"), "{err}");
        // A flag of another command is unknown here.
        let (code, _, err) = ldb(&["--db=/nonexistent", "get", "k", "--max_keys=3"]);
        assert_eq!(code, 1);
        assert!(err.contains("max_keys"), "{err}");
    }

    #[test]
    fn unknown_or_missing_command_prints_usage() {
        let (code, _, err) = ldb(&["--db=/x", "frob"]);
        assert_eq!(code, 1);
        assert!(err.contains("Unknown command frob") && err.contains("checkconsistency"));
        let (code, _, err) = ldb(&["--db=/x"]);
        assert_eq!(code, 1);
        assert!(err.contains("manifest_dump"));
        let (code, out, _) = ldb(&["--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("deleterange <begin key> <end key>"));
    }

    #[test]
    fn argument_counts_are_checked() {
        let (code, _, err) = ldb(&["--db=/x", "get"]);
        assert_eq!(code, 1);
        assert!(err.contains("Failed: <key> must be specified for the get command"), "{err}");
        let (code, _, err) = ldb(&["--db=/x", "put", "k", "v", "extra"]);
        assert_eq!(code, 1);
        assert!(err.contains("<key> and <value> must be specified for the put command"));
        let (code, _, err) = ldb(&["--db=/x", "dump", "extra"]);
        assert_eq!(code, 1);
        assert!(err.contains("takes no arguments"));
    }

    #[test]
    fn bad_input_fails_before_opening() {
        let (code, _, err) = ldb(&["--db=/nonexistent/x", "get", "k", "--hex"]);
        assert_eq!(code, 1);
        assert!(err.contains("Invalid hex input k.  Must start with 0x"), "{err}");
        let (code, _, err) = ldb(&["--db=/nonexistent/x", "scan", "--max_keys=x"]);
        assert_eq!(code, 1);
        assert!(err.contains("Failed: invalid value \"x\" for flag --max_keys"), "{err}");
        let (code, _, err) = ldb(&["get", "k"]);
        assert_eq!(code, 1);
        assert!(err.contains("Either db or path must be specified."), "{err}");
        let (code, _, err) = ldb(&["--db=/x", "scan", "--from"]);
        assert_eq!(code, 1);
        assert!(err.contains("--from needs a value"), "{err}");
    }

    #[test]
    fn every_command_has_a_unique_name_and_usage_line() {
        let mut out = Vec::new();
        usage(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        for (i, c) in COMMANDS.iter().enumerate() {
            assert!(text.contains(&format!("  {} ", c.name)), "{} missing", c.name);
            assert!(COMMANDS.iter().skip(i + 1).all(|d| d.name != c.name));
        }
    }
}

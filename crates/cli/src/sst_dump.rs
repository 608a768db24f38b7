//! `talus sst_dump`: RocksDB's `sst_dump` for Talus SST files, same syntax and output.
//!
//! `talus sst_dump --file=<data_dir_OR_sst_file> [--command=check|scan|raw|verify]
//! [--output_hex] [--from=K] [--to=K] [--input_key_hex] [--read_num=N] [--show_properties]`.
//! A directory processes every `*.sst` in it, in name order. Each file is opened with
//! [`talus::sst::TableReader::open`] through [`talus::fs::StdFs`] and read with no block cache.
//! A failing file prints `<file>: <error>` (the error names the file and offset) on stderr; the
//! other files are still processed, and the exit code is 1 if any failed.
//!
//! Differences from RocksDB: `raw` prints to stdout instead of writing `<file>_dump.txt`, and its
//! "Footer Details" add the block checksum the format version names (`checksum: kXXH3`).

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use talus::fs::{Fs, StdFs};
use talus::key::{parse_internal_key, seek_key, MAX_SEQUENCE};
use talus::sst::format::TABLE_MAGIC;
use talus::sst::{TableProperties, TableReader};

use crate::fmt::{decode_input, write_escaped, write_hex, write_internal_key};
use crate::options::{Parsed, Spec};
use crate::table::{open_table, walk_entries};

const SPEC: Spec<'static> = Spec {
    values: &["file", "command", "from", "to", "read_num"],
    flags: &["output_hex", "input_key_hex", "show_properties", "help"],
    engine: false,
};

/// What to do with each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmd {
    Check,
    Scan,
    Raw,
    Verify,
}

/// The parsed command line.
#[derive(Debug)]
struct Job {
    file: PathBuf,
    cmd: Cmd,
    hex: bool,
    from: Option<Vec<u8>>,
    to: Option<Vec<u8>>,
    read_num: Option<u64>,
    show_properties: bool,
}

/// Writes the usage text.
pub fn usage(w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "sst_dump --file=<data_dir_OR_sst_file> [--command=check|scan|raw|verify]")?;
    writeln!(w, "    --file=<data_dir_OR_sst_file>")?;
    writeln!(w, "      Path to SST file or directory containing SST files")?;
    writeln!(w)?;
    writeln!(w, "    --command=check|scan|raw|verify")?;
    writeln!(w, "        check: Iterate over entries in files and report how many there are (default command)")?;
    writeln!(w, "        scan: Iterate over entries in files and print them to screen")?;
    writeln!(w, "        raw: Print the table properties and every entry, in hex and ASCII")?;
    writeln!(w, "        verify: Iterate all the blocks in files verifying checksum to detect possible corruption but don't print anything except if a corruption is encountered")?;
    writeln!(w)?;
    writeln!(w, "    --output_hex")?;
    writeln!(w, "      Can be combined with scan command to print the keys and values in Hex")?;
    writeln!(w)?;
    writeln!(w, "    --from=<user_key>")?;
    writeln!(w, "      Key to start reading from when executing check|scan")?;
    writeln!(w)?;
    writeln!(w, "    --to=<user_key>")?;
    writeln!(w, "      Key to stop reading at when executing check|scan")?;
    writeln!(w)?;
    writeln!(w, "    --read_num=<num>")?;
    writeln!(w, "      Maximum number of entries to read when executing check|scan")?;
    writeln!(w)?;
    writeln!(w, "    --input_key_hex")?;
    writeln!(w, "      Can be combined with --from and --to to indicate that these values are encoded in Hex")?;
    writeln!(w)?;
    writeln!(w, "    --show_properties")?;
    writeln!(
        w,
        "      Print table properties after iterating over the file when executing check|scan|raw"
    )
}

fn parse_job(p: &mut Parsed) -> Result<Job, String> {
    p.check(&SPEC)?;
    if let Some(extra) = p.positional.first() {
        return Err(format!("Unrecognized argument '{extra}'"));
    }
    let file = match p.value("file") {
        Some(f) if !f.is_empty() => PathBuf::from(f),
        _ => return Err("file or directory must be specified.".into()),
    };
    let cmd = match p.value("command").unwrap_or("check") {
        "check" => Cmd::Check,
        "scan" => Cmd::Scan,
        "raw" => Cmd::Raw,
        "verify" => Cmd::Verify,
        other => return Err(format!("Unsupported command: {other} (check|scan|raw|verify)")),
    };
    let key_hex = p.flag("input_key_hex");
    let key = |name: &str| p.value(name).map(|v| decode_input(v, key_hex)).transpose();
    Ok(Job {
        file,
        cmd,
        hex: p.flag("output_hex"),
        from: key("from")?,
        to: key("to")?,
        read_num: p.number("read_num")?,
        show_properties: p.flag("show_properties"),
    })
}

/// Runs `sst_dump` on the process's stdout/stderr; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let code = run_io(args, &mut out, &mut io::stderr().lock());
    match out.flush() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("writing output: {e}");
            1
        }
        _ => code,
    }
}

/// Runs `sst_dump` with explicit streams; returns the exit code.
pub fn run_io(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut p = Parsed::parse(args);
    if p.flag("help") {
        return if usage(out).is_ok() { 0 } else { 1 };
    }
    let job = match parse_job(&mut p) {
        Ok(j) => j,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            let _ = writeln!(err);
            let _ = usage(err);
            return 1;
        }
    };
    let fs = StdFs;
    let files = match list_files(&fs, &job.file) {
        Ok(f) => f,
        Err(e) => {
            let _ = writeln!(err, "{e}");
            return 1;
        }
    };
    let mut failed = false;
    for f in files {
        match process(&fs, &f, &job, out) {
            Ok(()) => {}
            Err(Failure::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => return 0,
            Err(Failure::Output(e)) => {
                let _ = writeln!(err, "writing output: {e}");
                return 1;
            }
            Err(Failure::File(e)) => {
                failed = true;
                let _ = out.flush();
                let _ = writeln!(err, "{}: {e}", f.display());
            }
        }
    }
    i32::from(failed)
}

/// `path` itself, or the `*.sst` files in it if it is a directory, sorted.
fn list_files(fs: &dyn Fs, path: &Path) -> Result<Vec<PathBuf>, String> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut names = fs.list_dir(path).map_err(|e| e.to_string())?;
    names.retain(|n| n.ends_with(".sst"));
    names.sort();
    Ok(names.into_iter().map(|n| path.join(n)).collect())
}

enum Failure {
    /// The file is bad or unreadable (reported, then the next file).
    File(String),
    /// Stdout failed (stop).
    Output(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Output(e)
    }
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure::File(e)
    }
}

fn process(fs: &dyn Fs, path: &Path, job: &Job, out: &mut dyn Write) -> Result<(), Failure> {
    writeln!(out, "Process {}", path.display())?;
    let table = open_table(fs, path)?;
    writeln!(out, "Sst file format: block-based")?;
    let name = path.display().to_string();
    match job.cmd {
        Cmd::Verify => {
            table.verify_checksums().map_err(|e| e.to_string())?;
            writeln!(out, "The file is ok")?;
        }
        Cmd::Check | Cmd::Scan => {
            out.write_all(b"from [")?;
            write_escaped(out, job.from.as_deref().unwrap_or(&[]))?;
            out.write_all(b"] to [")?;
            write_escaped(out, job.to.as_deref().unwrap_or(&[]))?;
            out.write_all(b"]\n")?;
            let n = scan(&table, &name, job, out)?;
            if job.cmd == Cmd::Scan {
                write_tombstones(&table, job.hex, out)?;
            }
            writeln!(out, "{n} entries checked, {} range tombstones", tombstone_count(&table))?;
        }
        Cmd::Raw => {
            write_footer(&table, out)?;
            write_properties(table.properties(), out)?;
            raw(&table, &name, out)?;
        }
    }
    if job.show_properties && job.cmd != Cmd::Raw {
        write_properties(table.properties(), out)?;
    }
    Ok(())
}

/// Prints (for `scan`) or just walks (for `check`) the entries in the job's range.
fn scan(
    table: &Arc<TableReader>,
    name: &str,
    job: &Job,
    out: &mut dyn Write,
) -> Result<u64, Failure> {
    let start = job.from.as_deref().map(|k| seek_key(k, MAX_SEQUENCE));
    let print = job.cmd == Cmd::Scan;
    let mut n = 0u64;
    walk_entries::<Failure>(table, name, start.as_deref(), |k, v| {
        let user_key = parse_internal_key(k).map_or(&[][..], |p| p.user_key);
        if job.to.as_deref().is_some_and(|to| user_key >= to)
            || job.read_num.is_some_and(|m| n >= m)
        {
            return Ok(false);
        }
        n += 1;
        if print {
            write_internal_key(out, k, job.hex)?;
            out.write_all(b" => ")?;
            let blob = talus::key::parse_internal_key(k)
                .is_some_and(|p| p.kind == talus::key::ValueKind::BlobIndex);
            if blob {
                crate::fmt::write_blob_index(out, v)?;
            } else if job.hex {
                write_hex(out, v, false)?;
            } else {
                out.write_all(v)?;
            }
            out.write_all(b"\n")?;
        }
        Ok(true)
    })?;
    Ok(n)
}

fn tombstone_count(table: &TableReader) -> usize {
    table.range_tombstones().len()
}

/// Range tombstones as `'start' seq:N, type:15 => end`.
fn write_tombstones(table: &TableReader, hex: bool, out: &mut dyn Write) -> io::Result<()> {
    for t in table.range_tombstones().to_tombstones() {
        let start =
            talus::key::make_internal_key(&t.start, t.seq, talus::key::ValueKind::RangeDelete);
        write_internal_key(out, &start, hex)?;
        out.write_all(b" => ")?;
        if hex {
            write_hex(out, &t.end, false)?;
        } else {
            out.write_all(&t.end)?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// RocksDB's "Footer Details" of a raw dump (`Footer::ToString`), plus the block checksum.
fn write_footer(table: &TableReader, out: &mut dyn Write) -> io::Result<()> {
    let footer = table.footer();
    writeln!(out, "Footer Details:")?;
    writeln!(out, "--------------------------------------")?;
    for (what, h) in [("metaindex", footer.metaindex), ("index", footer.index)] {
        write!(out, "  {what} handle: ")?;
        write_hex(out, &h.encoded(), false)?;
        writeln!(out, " offset: {} size: {}", h.offset, h.size)?;
    }
    writeln!(out, "  table_magic_number: {TABLE_MAGIC}")?;
    writeln!(out, "  format version: {}", footer.version)?;
    writeln!(out, "  checksum: {}", footer.checksum_type().rocksdb_name())?;
    writeln!(out)
}

fn write_properties(p: &TableProperties, out: &mut dyn Write) -> io::Result<()> {
    let avg = |total: u64, n: u64| if n == 0 { 0.0 } else { total as f64 / n as f64 };
    writeln!(out, "Table Properties:")?;
    writeln!(out, "------------------------------")?;
    writeln!(out, "  # data blocks: {}", p.num_data_blocks)?;
    writeln!(out, "  # entries: {}", p.num_entries)?;
    writeln!(out, "  # deletions: {}", p.num_deletions)?;
    writeln!(out, "  # range deletions: {}", p.num_range_deletions)?;
    writeln!(out, "  raw key size: {}", p.raw_key_size)?;
    writeln!(out, "  raw average key size: {:.6}", avg(p.raw_key_size, p.num_entries))?;
    writeln!(out, "  raw value size: {}", p.raw_value_size)?;
    writeln!(out, "  raw average value size: {:.6}", avg(p.raw_value_size, p.num_entries))?;
    writeln!(out, "  data block size: {}", p.data_size)?;
    // RocksDB's wording; Talus never delta-encodes index values.
    writeln!(
        out,
        "  index block size (user-key? {}, delta-value? 0): {}",
        u8::from(p.index_key_is_user_key),
        p.index_size
    )?;
    if p.partitioned_index {
        // As RocksDB prints a partitioned index (format version 3 or 4).
        writeln!(out, "  # index partitions: {}", p.index_partitions)?;
        writeln!(out, "  top-level index size: {}", p.top_level_index_size)?;
    }
    writeln!(out, "  filter block size: {}", p.filter_size)?;
    if p.filter_partitions > 0 {
        writeln!(out, "  # filter partitions: {}", p.filter_partitions)?;
    }
    writeln!(out, "  smallest seqno: {}", p.smallest_seq)?;
    writeln!(out, "  largest seqno: {}", p.largest_seq)?;
    let algo = p.compression.map_or("unknown", |c| c.name());
    writeln!(out, "  SST file compression algo: {algo}")?;
    writeln!(out, "  file size: {}", p.file_size)?;
    for (what, k) in [("smallest", &p.smallest_point_key), ("largest", &p.largest_point_key)] {
        write!(out, "  {what} point key: ")?;
        if !k.is_empty() {
            write_internal_key(out, k, true)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Every entry as RocksDB's raw dump shows it: a HEX line and an ASCII line.
fn raw(table: &Arc<TableReader>, name: &str, out: &mut dyn Write) -> Result<(), Failure> {
    writeln!(out)?;
    writeln!(out, "Data entries (internal key: value):")?;
    writeln!(out, "--------------------------------------")?;
    let n = walk_entries::<Failure>(table, name, None, |k, v| {
        out.write_all(b"  HEX    ")?;
        write_internal_key(out, k, true)?;
        out.write_all(b": ")?;
        write_hex(out, v, false)?;
        out.write_all(b"\n  ASCII  ")?;
        write_escaped(out, parse_internal_key(k).map_or(k, |p| p.user_key))?;
        out.write_all(b" : ")?;
        write_escaped(out, v)?;
        out.write_all(b"\n  ------\n")?;
        Ok(true)
    })?;
    writeln!(out)?;
    writeln!(out, "Range deletions:")?;
    writeln!(out, "--------------------------------------")?;
    write_tombstones(table, true, out)?;
    writeln!(out)?;
    writeln!(out, "{n} entries, {} range tombstones", tombstone_count(table))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sst_dump(args: &[&str]) -> (i32, String, String) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run_io(&args, &mut out, &mut err);
        (code, String::from_utf8_lossy(&out).into(), String::from_utf8_lossy(&err).into())
    }

    #[test]
    fn parses_rocksdb_syntax() {
        let mut p =
            Parsed::parse(&["--file=/x/1.sst", "--command=scan", "--output_hex", "--from=a"]);
        let j = parse_job(&mut p).unwrap();
        assert_eq!((j.cmd, j.hex, j.from.as_deref()), (Cmd::Scan, true, Some(&b"a"[..])));
        let j = parse_job(&mut Parsed::parse(&["--file=f"])).unwrap();
        assert_eq!(j.cmd, Cmd::Check, "check is the default");
        let mut p = Parsed::parse(&["--file=f", "--input_key_hex", "--to=0x6B31", "--read_num=5"]);
        let j = parse_job(&mut p).unwrap();
        assert_eq!((j.to.as_deref(), j.read_num), (Some(&b"k1"[..]), Some(5)));
    }

    #[test]
    fn bad_command_lines_fail_naming_the_problem() {
        let (code, _, err) = sst_dump(&["--file=f", "--bogus"]);
        assert_eq!(code, 1);
        assert!(err.contains("bogus") && err.contains("--file=<data_dir_OR_sst_file>"), "{err}");
        let (code, _, err) = sst_dump(&[]);
        assert_eq!(code, 1);
        assert!(err.contains("file or directory must be specified."));
        let (code, _, err) = sst_dump(&["--file=f", "--command=recompress"]);
        assert_eq!(code, 1);
        assert!(err.contains("recompress"));
        let (code, _, err) = sst_dump(&["--file=f", "stray"]);
        assert_eq!(code, 1);
        assert!(err.contains("stray"));
        let (code, out, _) = sst_dump(&["--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("--command=check|scan|raw|verify"));
    }

    #[test]
    fn missing_file_fails_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("000009.sst");
        let (code, _, err) = sst_dump(&[&format!("--file={}", f.display())]);
        assert_eq!(code, 1);
        assert!(err.contains("000009.sst"), "{err}");
    }

    #[test]
    fn a_directory_lists_only_its_sst_files_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["000012.sst", "000003.sst", "MANIFEST-000001", "000004.log"] {
            std::fs::write(dir.path().join(n), b"").unwrap();
        }
        let files = list_files(&StdFs, dir.path()).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap().to_owned()).collect();
        assert_eq!(names, vec!["000003.sst", "000012.sst"]);
        // An empty directory processes nothing and succeeds.
        let empty = tempfile::tempdir().unwrap();
        let (code, out, _) = sst_dump(&[&format!("--file={}", empty.path().display())]);
        assert_eq!((code, out.as_str()), (0, ""));
    }
}

//! `talus sst_dump` end to end on SST files written with the engine's `TableBuilder`.

use std::path::Path;
use std::process::{Command, Output};

use talus::fs::{Fs, StdFs};
use talus::iter::range_del::RangeTombstone;
use talus::key::{make_internal_key, ValueKind};
use talus::sst::{TableBuilder, TableBuilderOptions};
use talus::{ChecksumType, CompressionType};

fn sst_dump(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus"))
        .arg("sst_dump")
        .args(args)
        .output()
        .expect("run talus sst_dump")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Writes an uncompressed SST holding `entries` (user key, seq, kind, value) and tombstones.
fn write_sst(
    path: &Path,
    entries: &[(&[u8], u64, ValueKind, &[u8])],
    tombstones: &[RangeTombstone],
) {
    write_sst_with(path, entries, tombstones, false, ChecksumType::default());
}

/// As [`write_sst`], with a partitioned index and filter (tiny partitions) if `partitioned`,
/// and block checksum `checksum`.
fn write_sst_with(
    path: &Path,
    entries: &[(&[u8], u64, ValueKind, &[u8])],
    tombstones: &[RangeTombstone],
    partitioned: bool,
    checksum: ChecksumType,
) {
    let opts = TableBuilderOptions {
        block_size: 64,
        block_restart_interval: 4,
        block_size_deviation: 10,
        bloom_bits_per_key: 10,
        compression: CompressionType::None,
        compression_level: talus::DEFAULT_COMPRESSION_LEVEL,
        checksum,
        partitioned_index: partitioned,
        partition_filters: partitioned,
        metadata_block_size: 16,
    };
    let file = StdFs.create(path).unwrap();
    let mut b = TableBuilder::new(opts, file, path.display().to_string());
    for (k, seq, kind, v) in entries {
        b.add(&make_internal_key(k, *seq, *kind), v).unwrap();
    }
    for t in tombstones {
        b.add_range_tombstone(t).unwrap();
    }
    b.finish().unwrap();
}

const ENTRIES: &[(&[u8], u64, ValueKind, &[u8])] = &[
    (b"a", 5, ValueKind::Put, b"apple"),
    (b"a", 3, ValueKind::Put, b"old"),
    (b"b", 9, ValueKind::Delete, b""),
    (b"k\x01", 4, ValueKind::Put, b"\xff"),
    (b"z", 6, ValueKind::Put, b"zebra"),
];

fn flag(name: &str, p: &Path) -> String {
    format!("--{name}={}", p.display())
}

#[test]
fn scan_check_verify_raw() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("000007.sst");
    let t = RangeTombstone { start: b"c".to_vec(), end: b"e".to_vec(), seq: 8 };
    write_sst(&f, ENTRIES, &[t]);
    let file = flag("file", &f);

    let out = sst_dump(&[&file, "--command=scan"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected: &[u8] = b"'a' seq:5, type:1 => apple\n'a' seq:3, type:1 => old\n\
        'b' seq:9, type:0 => \n'k\x01' seq:4, type:1 => \xff\n'z' seq:6, type:1 => zebra\n\
        'c' seq:8, type:15 => e\n";
    let s = out.stdout;
    assert!(s.windows(expected.len()).any(|w| w == expected), "{}", text(&s));
    assert!(text(&s).starts_with(&format!("Process {}\n", f.display())));
    assert!(text(&s).contains("5 entries checked, 1 range tombstones"));

    let out = sst_dump(&[&file, "--command=scan", "--output_hex", "--from=b", "--to=z"]);
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("'62' seq:9, type:0 => \n'6B01' seq:4, type:1 => FF\n"), "{s}");
    assert!(!s.contains("'61'") && !s.contains("'7A'"), "{s}");

    let out = sst_dump(&[&file, "--command=scan", "--read_num=2"]);
    assert!(text(&out.stdout).contains("2 entries checked"));

    let out = sst_dump(&[&file]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("5 entries checked"));
    assert!(!text(&out.stdout).contains("apple"), "check prints no entries");

    let out = sst_dump(&[&file, "--command=verify"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("The file is ok"));

    let out = sst_dump(&[&file, "--command=raw"]);
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert!(s.contains("# entries: 5") && s.contains("# range deletions: 1"), "{s}");
    assert!(s.contains("HEX    '61' seq:5, type:1: 6170706C65"), "{s}");
    assert!(s.contains("ASCII  k\\x01 : \\xFF"), "{s}");
}

#[test]
fn a_partitioned_table_dumps_the_same_entries() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, part) = (dir.path().join("000001.sst"), dir.path().join("000002.sst"));
    let t = RangeTombstone { start: b"c".to_vec(), end: b"e".to_vec(), seq: 8 };
    write_sst_with(&plain, ENTRIES, std::slice::from_ref(&t), false, ChecksumType::Xxh3);
    write_sst_with(&part, ENTRIES, &[t], true, ChecksumType::Crc32c);
    let scan = |f: &Path| {
        let out = sst_dump(&[&flag("file", f), "--command=scan"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).lines().skip(1).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(scan(&plain), scan(&part));
    let out = sst_dump(&[&flag("file", &part), "--command=verify"]);
    assert!(text(&out.stdout).contains("The file is ok"), "{}", text(&out.stdout));
    let s = text(&sst_dump(&[&flag("file", &part), "--command=raw"]).stdout);
    assert!(s.contains("# index partitions: ") && s.contains("top-level index size: "), "{s}");
    assert!(s.contains("# filter partitions: "), "{s}");
    assert!(s.contains("  format version: 3\n  checksum: kCRC32c\n"), "{s}");
    let s = text(&sst_dump(&[&flag("file", &plain), "--command=raw"]).stdout);
    assert!(!s.contains("partitions"), "{s}");
    assert!(s.contains("Footer Details:") && s.contains("table_magic_number: "), "{s}");
    assert!(s.contains("  format version: 4\n  checksum: kXXH3\n"), "{s}");
}

#[test]
fn a_directory_processes_every_sst() {
    let dir = tempfile::tempdir().unwrap();
    write_sst(&dir.path().join("000001.sst"), ENTRIES, &[]);
    write_sst(&dir.path().join("000002.sst"), &ENTRIES[..2], &[]);
    std::fs::write(dir.path().join("CURRENT"), b"MANIFEST-000003\n").unwrap();
    let out = sst_dump(&[&flag("file", dir.path()), "--command=check"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("000001.sst") && s.contains("000002.sst"), "{s}");
    assert!(s.contains("5 entries checked") && s.contains("2 entries checked"), "{s}");
}

/// For both block checksums (format versions 2 and 4).
#[test]
fn corruption_fails_naming_the_file() {
    for checksum in ChecksumType::ALL {
        corruption_fails_naming_the_file_with(checksum);
    }
}

fn corruption_fails_naming_the_file_with(checksum: ChecksumType) {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("000001.sst");
    write_sst_with(&good, ENTRIES, &[], false, checksum);
    let bytes = std::fs::read(&good).unwrap();
    let version = u32::from_le_bytes(bytes[bytes.len() - 16..bytes.len() - 12].try_into().unwrap());
    assert_eq!(version, if checksum == ChecksumType::Xxh3 { 4 } else { 2 });

    // A flipped bit in the first data block: verify and scan fail, naming the file.
    let mut flipped = bytes.clone();
    flipped[3] ^= 0x10;
    let bad = dir.path().join("000002.sst");
    std::fs::write(&bad, &flipped).unwrap();
    for cmd in ["--command=verify", "--command=scan", "--command=check"] {
        let out = sst_dump(&[&flag("file", &bad), cmd]);
        assert!(!out.status.success(), "{cmd} accepted a corrupt file");
        let err = text(&out.stderr);
        assert!(err.contains("000002.sst") && err.contains("Corruption"), "{cmd}: {err}");
    }

    // A truncated file fails to open.
    let short = dir.path().join("000003.sst");
    std::fs::write(&short, &bytes[..bytes.len() / 2]).unwrap();
    let out = sst_dump(&[&flag("file", &short), "--command=verify"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("000003.sst"));

    // In a directory the good file is still processed, and the exit code reports the bad one.
    let out = sst_dump(&[&flag("file", dir.path()), "--command=verify"]);
    assert!(!out.status.success());
    assert!(text(&out.stdout).contains("The file is ok"));
}

//! The tools on a database with blob files: `ldb dump_blob`, `--decode_blob_index` on `ldb
//! get`/`scan`/`dump`, and `sst_dump` showing blob index entries decoded.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use talus::{Db, Options};

fn talus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().expect("run talus")
}

fn ok(args: &[&str]) -> String {
    let out = talus(args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

/// A database whose keys `big1`, `big2` hold 300-byte values (in one blob file) and `small` a
/// 5-byte one (in the SST); returns the blob file.
fn make_db(db: &Path) -> PathBuf {
    let opts = Options {
        create_if_missing: true,
        enable_blob_files: true,
        min_blob_size: 100,
        ..Options::default()
    };
    let d = Db::open(db, opts).unwrap();
    d.put("big1", vec![b'x'; 300]).unwrap();
    d.put("big2", vec![b'y'; 300]).unwrap();
    d.put("small", "tiny!").unwrap();
    d.flush().unwrap();
    drop(d);
    let blobs = files(db, "blob");
    assert_eq!(blobs.len(), 1, "{blobs:?}");
    blobs[0].clone()
}

fn number(blob: &Path) -> u64 {
    blob.file_stem().unwrap().to_str().unwrap().parse().unwrap()
}

#[test]
fn decode_blob_index_shows_the_index_instead_of_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let n = number(&make_db(&db));
    let dbf = format!("--db={}", db.display());
    // Records: header 16 bytes, then per record a 16-byte header and the 4-byte key.
    let ref1 = format!("[blob ref] file:{n} offset:36 size:300 compression: NoCompression");
    let ref2 = format!("[blob ref] file:{n} offset:356 size:300 compression: NoCompression");
    assert_eq!(ok(&["ldb", &dbf, "get", "big1"]), format!("{}\n", "x".repeat(300)));
    assert_eq!(ok(&["ldb", &dbf, "get", "big1", "--decode_blob_index"]), format!("{ref1}\n"));
    assert_eq!(ok(&["ldb", &dbf, "get", "small", "--decode_blob_index"]), "tiny!\n");
    let out = talus(&["ldb", &dbf, "get", "nope", "--decode_blob_index"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("NotFound"));
    assert_eq!(
        ok(&["ldb", &dbf, "scan", "--decode_blob_index"]),
        format!("big1 : {ref1}\nbig2 : {ref2}\nsmall : tiny!\n")
    );
    assert_eq!(
        ok(&["ldb", &dbf, "dump", "--decode_blob_index", "--from=big2"]),
        format!("big2 ==> {ref2}\nsmall ==> tiny!\nKeys in range: 2\n")
    );
    // Without the flag the values are read.
    assert!(ok(&["ldb", &dbf, "scan"]).starts_with(&format!("big1 : {}\n", "x".repeat(300))));
    // The decoded index is what the SST holds, the value is not read: with big2's value
    // damaged in the blob file, the plain get fails and the decoding one still works.
    let blob = files(&db, "blob")[0].clone();
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[356 + 10] ^= 1;
    std::fs::write(&blob, &bytes).unwrap();
    assert!(!talus(&["ldb", &dbf, "get", "big2"]).status.success());
    assert_eq!(ok(&["ldb", &dbf, "get", "big2", "--decode_blob_index"]), format!("{ref2}\n"));
}

#[test]
fn sst_dump_shows_blob_indexes_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let n = number(&make_db(&db));
    let sst = files(&db, "sst");
    assert_eq!(sst.len(), 1);
    let out = ok(&["sst_dump", &format!("--file={}", sst[0].display()), "--command=scan"]);
    assert!(
        out.contains(&format!(
            "'big1' seq:1, type:17 => [blob ref] file:{n} offset:36 size:300 compression: \
             NoCompression\n"
        )),
        "{out}"
    );
    assert!(out.contains("'small' seq:3, type:1 => tiny!\n"), "{out}");
}

#[test]
fn dump_blob_prints_header_records_footer() {
    let dir = tempfile::tempdir().unwrap();
    let blob = make_db(&dir.path().join("db"));
    let file = format!("--file={}", blob.display());
    let out = ok(&["ldb", "dump_blob", &file]);
    let want = format!(
        "Blob file header:\n  Version          : 1\n  Compression      : NoCompression\n\
         Blob file footer:\n  Blob count       : 2\n  Blob bytes       : 640\n\
         Read record with offset 0x10 (16):\n  key size   : 4\n  value size : 300\n  \
         value at   : 36\n  key        : big1\n  blob       : {}\n\
         Read record with offset 0x150 (336):\n  key size   : 4\n  value size : 300\n  \
         value at   : 356\n  key        : big2\n  blob       : {}\n\
         Summary:\n  total records: 2\n  total key size: 8\n  total blob size: 600\n",
        "x".repeat(300),
        "y".repeat(300)
    );
    assert_eq!(out, want);
    let hex = ok(&["ldb", "dump_blob", &file, "--hex"]);
    assert!(hex
        .contains(&format!("  key        : 0x62696731\n  blob       : 0x{}\n", "78".repeat(300))));
    let no_value = ok(&["ldb", "dump_blob", &file, "--no_value"]);
    assert!(!no_value.contains("blob       :") && no_value.contains("key        : big2"));

    // A damaged value: the records before it print, then Corruption naming file and offset.
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[356 + 10] ^= 1;
    std::fs::write(&blob, &bytes).unwrap();
    let out = talus(&["ldb", "dump_blob", &file]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let name = blob.file_name().unwrap().to_str().unwrap();
    assert!(err.contains("Corruption") && err.contains(name) && err.contains("336"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("key        : big1"));
    // Truncated and missing files fail cleanly.
    std::fs::write(&blob, &bytes[..20]).unwrap();
    let err = String::from_utf8_lossy(&talus(&["ldb", "dump_blob", &file]).stderr).into_owned();
    assert!(err.contains("truncated"), "{err}");
    assert!(!talus(&["ldb", "dump_blob", "--file=/nonexistent/1.blob"]).status.success());
    assert!(!talus(&["ldb", "dump_blob"]).status.success());
}

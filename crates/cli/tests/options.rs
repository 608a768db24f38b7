//! The one options layer, through every tool: each boolean spelling of gflags is accepted (and
//! means what it says), a bad value or unknown name is refused naming the flag before any file
//! is touched, `--options_file` reads Talus's own OPTIONS file and every one RocksDB 7.8.3 and
//! 10.4.2 wrote (`tests/data`), refuses hand-made bad ones, a FIFO or `/dev/zero` without
//! blocking, and numbers take RocksDB's k/m/g/t suffixes in every spelling (issue 34).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn talus(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).output().expect("running talus")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("talus-options-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

const TRUE: &[&str] = &["true", "1", "yes", "t", "y", "TRUE", "Yes"];
const FALSE: &[&str] = &["false", "0", "no", "f", "n", "FALSE", "No"];

/// A command line per tool that exercises boolean `flag` (given as `--flag=VALUE`), and what
/// its output shows for true and false.
fn tool_lines(dir: &Path) -> Vec<(&'static str, Vec<String>, &'static str)> {
    let db = dir.join("db").display().to_string();
    vec![
        (
            "db_bench",
            s(&[
                "db_bench",
                "--benchmarks=fillseq",
                "--num=10",
                &format!("--db={db}-bench-VALUE"),
                "--histogram=VALUE",
            ]),
            "Microseconds per write",
        ),
        (
            "ldb",
            s(&[
                "ldb",
                &format!("--db={db}-ldb-VALUE"),
                "--create_if_missing=VALUE",
                "put",
                "a",
                "b",
            ]),
            "OK",
        ),
        (
            "cache_bench",
            s(&[
                "cache_bench",
                "--cache_size=1048576",
                "--threads=1",
                "--ops_per_thread=100",
                "--value_bytes=64",
                "--histograms=VALUE",
            ]),
            "Operation latency",
        ),
    ]
}

#[test]
fn every_tool_takes_every_boolean_spelling() {
    let dir = scratch("bools");
    for (tool, line, shows) in tool_lines(&dir) {
        for (spellings, want) in [(TRUE, true), (FALSE, false)] {
            for v in spellings {
                let args: Vec<String> = line.iter().map(|a| a.replace("VALUE", v)).collect();
                let out = talus(&args);
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                if tool == "ldb" && !want {
                    // create_if_missing=false on a missing database: refused at open.
                    assert!(!out.status.success(), "{tool} {v}: {text}");
                    continue;
                }
                assert!(out.status.success(), "{tool} {args:?}: {text}");
                assert_eq!(text.contains(shows), want, "{tool} --...={v}: {text}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stress_and_ibench_take_every_boolean_spelling() {
    let dir = scratch("bools2");
    // stress: --sync was read as a number; intra_l0_compaction=yes read as false.
    for (spellings, want) in [(TRUE, 1), (FALSE, 0)] {
        for v in spellings {
            let db = dir.join(format!("stress-{v}"));
            let out = talus(&s(&[
                "stress",
                &format!("--db={}", db.display()),
                &format!("--expected_state={}.exp", db.display()),
                "--threads=1",
                "--max_key=100",
                "--ops_per_thread=50",
                "--duration=5",
                &format!("--sync={v}"),
                &format!("--intra_l0_compaction={v}"),
            ]));
            let text = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "stress {v}: {text}");
            assert!(text.contains(&format!("sync={want} ")), "stress {v}: {text}");
            assert!(text.contains(&format!("intra_l0={want} ")), "stress {v}: {text}");
        }
    }
    for (spellings, want) in [(TRUE, "true"), (FALSE, "false")] {
        for v in spellings {
            let db = dir.join(format!("ibench-{v}"));
            let res = dir.join(format!("ibench-res-{v}"));
            let out = talus(&s(&[
                "ibench",
                &format!("--db={}", db.display()),
                &format!("--results={}", res.display()),
                "--steps=l.i0",
                "--num=200",
                &format!("--intra_l0_compaction={v}"),
                &format!("--sync={v}"),
            ]));
            assert!(out.status.success(), "ibench {v}: {}", String::from_utf8_lossy(&out.stderr));
            let run = std::fs::read_to_string(res.join("run.json")).unwrap();
            assert!(run.contains(&format!("\"intra_l0_compaction\": \"{want}\"")), "{run}");
            assert!(run.contains(&format!("\"sync\": \"{want}\"")), "{run}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_values_and_unknown_names_are_refused_before_any_file() {
    let dir = scratch("bad");
    let db = dir.join("db");
    let dbf = format!("--db={}", db.display());
    let exp = format!("--expected_state={}", dir.join("exp").display());
    let cases: Vec<(Vec<String>, &str)> = vec![
        (s(&["db_bench", &dbf, "--histogram=maybe"]), "--histogram"),
        (s(&["db_bench", &dbf, "--intra_l0_compaction=perhaps"]), "--intra_l0_compaction"),
        (s(&["db_bench", &dbf, "--block_restart_interval=x"]), "--block_restart_interval"),
        (s(&["db_bench", &dbf, "--bogus_flag=1"]), "bogus_flag"),
        (s(&["ibench", &dbf, "--max_subcompactions=four"]), "--max_subcompactions"),
        (s(&["ibench", &dbf, "--sync=sometimes"]), "--sync"),
        (s(&["ibench", &dbf, "--bogus_flag=1"]), "bogus_flag"),
        (s(&["stress", &dbf, &exp, "--sync=2"]), "--sync"),
        (s(&["stress", &dbf, &exp, "--intra_l0_compaction=yesplease"]), "--intra_l0_compaction"),
        (s(&["stress", &dbf, &exp, "--write_buffer_size=big"]), "--write_buffer_size"),
        (s(&["ldb", &dbf, "--create_if_missing=maybe", "put", "a", "b"]), "--create_if_missing"),
        (
            s(&["ldb", &dbf, "--create_if_missing", "--compression=brotli", "put", "a", "b"]),
            "--compression",
        ),
        (s(&["cache_bench", "--histograms=perhaps"]), "--histograms"),
        (s(&["cache_bench", "--cache_type=fifo"]), "--cache_type"),
        (s(&["cache_bench", "--threads=x"]), "--threads"),
    ];
    for (args, want) in cases {
        let out = talus(&args);
        let err = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!db.exists(), "{args:?} touched the database directory");
        assert!(!dir.join("exp").exists(), "{args:?} created the expected state");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

#[test]
fn options_file_from_rocksdb_7_8_3_is_refused_by_name_then_accepted_when_ignoring() {
    let dir = scratch("rocks");
    let file = format!("--options_file={}", data("rocksdb-7.8.3-default-OPTIONS").display());
    let db = dir.join("db");
    let dbf = format!("--db={}", db.display());
    let out = talus(&s(&["ldb", &dbf, &file, "put", "a", "b"]));
    let err =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    let named =
        ["allow_mmap_reads", "format_version", "compaction_pri", "--ignore_unknown_options"];
    for name in named {
        assert!(err.contains(name), "{name} not named: {err}");
    }
    assert!(!db.exists());
    // `checksum=kXXH3` is one Talus has (it is not among the unknown names).
    assert!(!err.contains("default\"] checksum"), "{err}");
    let out = talus(&s(&["ldb", &dbf, &file, "--ignore_unknown_options", "put", "a", "b"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The file's options reached the engine: RocksDB 7.8.3 writes snappy and no bloom filter,
    // and Talus's own OPTIONS file (the DB's latest) says so; it is a valid input in turn.
    let own = std::fs::read_dir(&db)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    let text = std::fs::read_to_string(&own).unwrap();
    assert!(text.contains("  compression=kSnappyCompression\n"), "{text}");
    assert!(text.contains("  filter_policy=nullptr\n"), "{text}");
    assert!(text.contains("  checksum=kXXH3\n"), "{text}");
    assert!(text.contains("  level_compaction_dynamic_level_bytes=false\n"), "{text}");
    let db2 = dir.join("db2");
    let out = talus(&s(&[
        "db_bench",
        &format!("--db={}", db2.display()),
        &format!("--options_file={}", own.display()),
        "--benchmarks=fillseq",
        "--num=100",
    ]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The text of the newest `OPTIONS-NNNNNN` Talus wrote in `db`.
fn latest_options(db: &Path) -> String {
    let newest = std::fs::read_dir(db)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    std::fs::read_to_string(newest).unwrap()
}

/// `talus ARGS`, failing the test if it runs longer than 20 s (a read that blocks).
fn talus_within(args: &[String]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running talus");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("waiting for talus").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("talus {args:?} still running after 20 s (blocked on its options file?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("talus output")
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout)
}

/// The tools that open a database, with `--options_file=FILE` and a database under `dir`.
fn tools_with_options_file(dir: &Path, file: &str) -> Vec<Vec<String>> {
    let db = format!("--db={}", dir.join("db").display());
    let exp = format!("--expected_state={}", dir.join("exp").display());
    let file = format!("--options_file={file}");
    vec![
        s(&["ldb", &db, "--create_if_missing", &file, "put", "a", "b"]),
        s(&["db_bench", &db, "--benchmarks=fillseq", "--num=10", &file]),
        s(&["stress", &db, &exp, "--duration=1", "--threads=1", "--max_key=100", &file]),
        s(&["ibench", &db, "--steps=l.i0", "--num=10", &file]),
    ]
}

/// Issue 34: `--options_file=/dev/zero` read without bound and a FIFO with no writer hung.
/// Now a FIFO, a character device and a directory are refused by type before any read, by every
/// tool, and nothing is created.
#[test]
fn options_file_that_is_not_a_regular_file_is_refused_without_blocking() {
    let dir = scratch("types");
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let sub = dir.join("a-directory");
    std::fs::create_dir(&sub).unwrap();
    for (file, what) in [
        ("/dev/zero".to_string(), "is a character device, not a regular file"),
        (fifo.display().to_string(), "is a FIFO, not a regular file"),
        (sub.display().to_string(), "is a directory, not a regular file"),
    ] {
        for args in tools_with_options_file(&dir, &file) {
            let out = talus_within(&args);
            assert!(!out.status.success(), "{args:?}");
            let err = text(&out);
            assert!(err.contains(&format!("--options_file={file}: {what}")), "{args:?}: {err}");
            assert!(
                !dir.join("db").exists() && !dir.join("exp").exists(),
                "{args:?} created files"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Hand-made bad OPTIONS files, through every tool: each refused naming the problem, before
/// anything is created.
#[test]
fn bad_options_files_are_refused_by_name_before_any_file() {
    let dir = scratch("badfiles");
    let good = std::fs::read_to_string(data("rocksdb-10.4.2-default-OPTIONS")).unwrap();
    let cut = |from: &str, to: &str| -> String {
        let (a, b) = (good.find(from).unwrap(), good.find(to).unwrap());
        format!("{}{}", &good[..a], &good[b..])
    };
    let mut junk = vec![0u8; 4096];
    for (i, b) in junk.iter_mut().enumerate() {
        *b = (i * 7919 % 251) as u8;
    }
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "(no sections at all: empty or truncated?): missing [Version]"),
        ("no-db", cut("[DBOptions]", "[CFOptions").into_bytes(), "missing [DBOptions];"),
        (
            "no-cf",
            cut("[CFOptions", "[TableOptions").into_bytes(),
            "missing [CFOptions \"default\"]",
        ),
        (
            "truncated",
            good.as_bytes()[..good.find("[CFOptions").unwrap()].to_vec(),
            "missing [CFOptions",
        ),
        (
            "dup",
            good.replacen("  max_open_files=-1\n", "  max_open_files=-1\n  max_open_files=10\n", 1)
                .into_bytes(),
            "max_open_files is set twice in [DBOptions] (lines",
        ),
        ("junk", junk, "is not a text file: the byte at offset"),
        (
            "oversized",
            format!("{good}{}", "#".repeat(1 << 20)).into_bytes(),
            "an OPTIONS file is at most 1048576 bytes",
        ),
    ];
    for (name, bytes, want) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        for args in tools_with_options_file(&dir, &path.display().to_string()) {
            let args: Vec<String> =
                args.into_iter().chain(["--ignore_unknown_options".to_string()]).collect();
            let out = talus_within(&args);
            let err = text(&out);
            assert!(!out.status.success(), "{name}: {args:?}");
            assert!(err.contains(want), "{name}: {args:?}: {err}");
            assert!(!dir.join("db").exists() && !dir.join("exp").exists(), "{name}: {args:?}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every OPTIONS file RocksDB 7.8.3 and 10.4.2 wrote: refused naming the options Talus lacks,
/// then taken with `--ignore_unknown_options` (Talus's own OPTIONS file shows the values).
#[test]
fn every_rocksdb_options_file_is_read_by_the_tools() {
    let dir = scratch("rocksfiles");
    for (name, shows) in [
        ("rocksdb-7.8.3-default-OPTIONS", "  compression=kSnappyCompression\n"),
        ("rocksdb-7.8.3-universal-OPTIONS", "  compaction_style=kCompactionStyleUniversal\n"),
        (
            "rocksdb-7.8.3-leveled-OPTIONS",
            "  compression_per_level=kNoCompression:kNoCompression:kLZ4",
        ),
        ("rocksdb-10.4.2-default-OPTIONS", "  level_compaction_dynamic_level_bytes=true\n"),
        ("rocksdb-10.4.2-universal-OPTIONS", "  compaction_style=kCompactionStyleUniversal\n"),
        ("rocksdb-10.4.2-leveled-OPTIONS", "  filter_policy=bloomfilter:16:false\n"),
    ] {
        let db = dir.join(name);
        let dbf = format!("--db={}", db.display());
        let file = format!("--options_file={}", data(name).display());
        let out = talus_within(&s(&["ldb", &dbf, "--create_if_missing", &file, "put", "a", "b"]));
        let err = text(&out);
        assert!(!out.status.success(), "{name}: {err}");
        assert!(
            err.contains("--ignore_unknown_options") && err.contains("format_version"),
            "{name}: {err}"
        );
        let args = s(&[
            "ldb",
            &dbf,
            "--create_if_missing",
            &file,
            "--ignore_unknown_options",
            "put",
            "a",
            "b",
        ]);
        let out = talus_within(&args);
        assert!(out.status.success(), "{name}: {}", text(&out));
        let written = latest_options(&db);
        assert!(written.contains(shows), "{name}: {written}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 34's option repros through the tools: `write_buffer_size=64k` and
/// `block_cache={capacity=1M}` are taken in every spelling (flag, string, file, with a trailing
/// comment and a BOM); `--cache_numshardbits=64` and `block_cache={num_shard_bits=64}` (and 40,
/// 63, 20) are refused alike, before any file.
#[test]
fn suffixes_comments_and_shard_bits_in_every_spelling() {
    let dir = scratch("spellings");
    let db = dir.join("db");
    let dbf = format!("--db={}", db.display());
    let file = dir.join("OPTIONS-bom");
    let body = std::fs::read_to_string(data("rocksdb-10.4.2-default-OPTIONS")).unwrap().replace(
        "  write_buffer_size=67108864\n",
        "  write_buffer_size=64k # a trailing comment\n",
    );
    std::fs::write(&file, format!("\u{feff}{}", body.replace('\n', "\r\n"))).unwrap();
    let ok = [
        s(&["--write_buffer_size=64k", "--cache_size=1M"]),
        s(&[
            "--options=write_buffer_size=64k;block_based_table_factory={block_cache={capacity=1M}}",
        ]),
        s(&["--options=write_buffer_size=64K;block_based_table_factory={block_cache=1m}"]),
        vec![
            format!("--options_file={}", file.display()),
            "--ignore_unknown_options".into(),
            "--cache_size=1M".into(),
        ],
    ];
    for flags in ok {
        let _ = std::fs::remove_dir_all(&db);
        let args: Vec<String> = s(&["ldb", &dbf, "--create_if_missing"])
            .into_iter()
            .chain(flags.clone())
            .chain(s(&["put", "a", "b"]))
            .collect();
        let out = talus_within(&args);
        assert!(out.status.success(), "{flags:?}: {}", text(&out));
        let own = latest_options(&db);
        assert!(own.contains("  write_buffer_size=65536\n"), "{flags:?}: {own}");
        assert!(own.contains("block_cache={id=LRUCache;capacity=1048576;"), "{flags:?}: {own}");
    }
    let _ = std::fs::remove_dir_all(&db);
    for bits in ["20", "40", "63", "64"] {
        let tbl = format!(
            "--options=block_based_table_factory={{block_cache={{num_shard_bits={bits}}}}}"
        );
        for (tool, flag, want) in [
            (
                "ldb",
                format!("--cache_numshardbits={bits}"),
                "--cache_numshardbits: expected at most 19",
            ),
            ("ldb", tbl.clone(), "--block_cache.num_shard_bits: expected at most 19"),
            (
                "db_bench",
                format!("--cache_numshardbits={bits}"),
                "--cache_numshardbits: must be between -1 and 19",
            ),
            ("db_bench", tbl.clone(), "--block_cache.num_shard_bits: expected at most 19"),
        ] {
            let args = s(&[tool, &dbf, "--create_if_missing", &flag, "put", "a", "b"]);
            let args: Vec<String> = if tool == "db_bench" {
                s(&[tool, &dbf, "--benchmarks=fillseq", "--num=10", &flag])
            } else {
                args
            };
            let out = talus_within(&args);
            let err = text(&out);
            assert!(!out.status.success() && err.contains(want), "{args:?}: {err}");
            assert!(!db.exists(), "{args:?} created the database");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

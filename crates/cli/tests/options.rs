//! The one options layer, through every tool: each boolean spelling of gflags is accepted (and
//! means what it says), a bad value or unknown name is refused naming the flag before any file
//! is touched, and `--options_file` reads Talus's own OPTIONS file and RocksDB 7.8.3's.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
    let file = format!("--options_file={}", data("rocksdb-7.8.3-OPTIONS").display());
    let db = dir.join("db");
    let dbf = format!("--db={}", db.display());
    let out = talus(&s(&["ldb", &dbf, &file, "put", "a", "b"]));
    let err =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    let named =
        ["allow_mmap_reads", "format_version", "merge_operator", "--ignore_unknown_options"];
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

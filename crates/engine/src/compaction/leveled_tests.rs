//! Data-driven picker tests: `testdata/picker.txt` holds cases of the form
//!
//! ```text
//! # what the case shows
//! opts dynamic=1 trigger=4 base=256MB mult=10 intra_l0=1 file=64MB file_mult=1
//! L0 a-z:10MB a-z:10MB*        (L0 newest first; `*` marks a file being compacted)
//! L6 a-z:30GB
//! ----
//! base L6
//! targets L5=3.0GB L6=30.0GB
//! pick L0->L6 inputs 2+1 file=64MB bottommost
//! ```
//!
//! Everything above `----` builds the options and the version; below is the expected output.
//! Set `TALUS_REWRITE=1` to print the actual output of every case.

use std::collections::HashSet;
use std::sync::Arc;

use super::*;
use crate::key::{InternalKey, ValueKind};

fn parse_size(s: &str) -> u64 {
    let (num, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len()));
    let n: f64 = num.parse().unwrap_or_else(|_| panic!("bad size {s}"));
    let m = match unit {
        "" | "B" => 1.0,
        "KB" => 1024.0,
        "MB" => 1048576.0,
        "GB" => 1073741824.0,
        _ => panic!("bad unit in {s}"),
    };
    (n * m) as u64
}

fn show_size(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1}GB", b as f64 / 1073741824.0)
    } else if b >= 1 << 20 {
        format!("{:.1}MB", b as f64 / 1048576.0)
    } else {
        format!("{:.1}KB", b as f64 / 1024.0)
    }
}

fn run_case(input: &str) -> String {
    let mut opts = Options::default();
    let mut v = Version::new(7);
    let mut busy = HashSet::new();
    let mut number = 1u64;
    let mut lines = Vec::new();
    for line in input.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("opts") => {
                for kv in words {
                    let (k, val) = kv.split_once('=').unwrap();
                    match k {
                        "dynamic" => opts.level_compaction_dynamic_level_bytes = val == "1",
                        "trigger" => opts.level0_file_num_compaction_trigger = val.parse().unwrap(),
                        "base" => opts.max_bytes_for_level_base = parse_size(val),
                        "mult" => opts.max_bytes_for_level_multiplier = val.parse().unwrap(),
                        "intra_l0" => opts.intra_l0_compaction = val == "1",
                        "file" => opts.target_file_size_base = parse_size(val),
                        "file_mult" => opts.target_file_size_multiplier = val.parse().unwrap(),
                        "max_compaction" => opts.max_compaction_bytes = parse_size(val),
                        _ => panic!("unknown option {k}"),
                    }
                }
            }
            Some(l) if l.starts_with('L') => {
                let level: usize = l[1..].parse().unwrap();
                let files = words.count();
                // Newest first at L0: give earlier files higher sequence numbers.
                for (i, spec) in line.split_whitespace().skip(1).enumerate() {
                    let (range, size) = spec.split_once(':').unwrap();
                    let (size, is_busy) = match size.strip_suffix('*') {
                        Some(s) => (s, true),
                        None => (size, false),
                    };
                    let (lo, hi) = range.split_once('-').unwrap();
                    let seq = ((files - i) as u64) * 100 + (7 - level as u64) * 10_000;
                    let f = FileMetaData {
                        number,
                        file_size: parse_size(size),
                        smallest: InternalKey::new(lo.as_bytes(), seq, ValueKind::Put),
                        largest: InternalKey::new(hi.as_bytes(), seq, ValueKind::Put),
                        smallest_seq: seq,
                        largest_seq: seq,
                        num_entries: 1,
                        num_deletions: 0,
                        oldest_blob_file_number: 0,
                        reader: Default::default(),
                    };
                    if is_busy {
                        busy.insert(number);
                    }
                    number += 1;
                    v.files[level].push(Arc::new(f));
                }
            }
            _ => {}
        }
    }
    let t = level_targets(&opts, &v);
    lines.push(format!("base L{}", t.base_level));
    let targets: Vec<String> = (1..7)
        .filter(|&l| t.target(l) != u64::MAX)
        .map(|l| format!("L{l}={}", show_size(t.target(l))))
        .collect();
    lines.push(format!("targets {}", targets.join(" ")));
    let cursors = vec![Vec::new(); 7];
    lines.push(match pick_in(&opts, &v, &busy, &cursors) {
        None => "pick none".to_string(),
        Some(c) => {
            let mut s = format!(
                "pick L{}->L{} inputs {}+{}",
                c.level,
                c.output_level,
                c.inputs[0].len(),
                c.inputs[1].len()
            );
            if c.target_file_size != u64::MAX {
                s += &format!(" file={}", show_size(c.target_file_size));
            }
            for (flag, name) in [(c.trivial_move, "trivial"), (c.bottommost, "bottommost")] {
                if flag {
                    s += " ";
                    s += name;
                }
            }
            s + " " + c.reason
        }
    });
    lines.join("\n")
}

#[test]
fn picker_cases() {
    let data = include_str!("testdata/picker.txt");
    let rewrite = std::env::var("TALUS_REWRITE").is_ok();
    let mut failures = Vec::new();
    for case in data.split("\n\n").filter(|c| !c.trim().is_empty()) {
        let (input, expected) = case.split_once("----").expect("a case needs ----");
        let got = run_case(input);
        if rewrite {
            println!("{input}----\n{got}\n");
        }
        if got.trim() != expected.trim() {
            failures.push(format!("{input}----\nexpected:\n{}\ngot:\n{got}\n", expected.trim()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pending_bytes_follow_rocksdb() {
    let opts = Options {
        level_compaction_dynamic_level_bytes: false,
        max_bytes_for_level_base: 100,
        level0_file_num_compaction_trigger: 2,
        ..Default::default()
    };
    let mut v = Version::new(4);
    let f = |n: u64, size: u64| {
        Arc::new(FileMetaData {
            number: n,
            file_size: size,
            smallest: InternalKey::new(b"a", n, ValueKind::Put),
            largest: InternalKey::new(b"z", n, ValueKind::Put),
            smallest_seq: n,
            largest_seq: n,
            num_entries: 1,
            num_deletions: 0,
            oldest_blob_file_number: 0,
            reader: Default::default(),
        })
    };
    assert_eq!(estimate_pending_bytes(&opts, &v), 0);
    // L0 below its trigger and base size: nothing pending.
    v.files[0].push(f(1, 50));
    assert_eq!(estimate_pending_bytes(&opts, &v), 0);
    // L0 triggered: L0 + L1 (its input), then L1's excess over 100 times the fan-out to L2.
    v.files[0].push(f(2, 50));
    v.files[1].push(f(3, 150));
    v.files[2].push(f(4, 500));
    // L1 after L0 lands: 250; excess 150; fan-out 500/250 + 1 = 3 -> 450.
    // L2 (500 + 150 = 650) vs target 1000: fine.
    assert_eq!(estimate_pending_bytes(&opts, &v), 100 + 150 + 450);
}

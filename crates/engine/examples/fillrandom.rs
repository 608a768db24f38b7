//! fillrandom as RocksDB's db_bench runs it (16-byte keys, 100-byte values that compress to
//! half), then prints `talus.stats`, so the two engines' tables can be read side by side.
//!
//! `cargo run --release -p talus --example fillrandom -- --num=1000000 [--name=value ...]`
//! Flags (db_bench's names): num, db, write_buffer_size, target_file_size_base,
//! max_bytes_for_level_base, max_subcompactions, max_background_jobs,
//! level0_slowdown_writes_trigger, level0_stop_writes_trigger, intra_l0 (0/1),
//! level_compaction_dynamic_level_bytes (0/1), compaction_style (0 leveled, 1 universal).
//! Also prints the peak bytes of `*.sst` files in the directory, sampled every 20 ms.

use std::time::Instant;

use talus::{CompactionStyle, Db, Options};

fn main() {
    let mut opts = Options { create_if_missing: true, ..Default::default() };
    let mut num: u64 = 1_000_000;
    let mut dir = std::env::temp_dir().join("talus_fillrandom");
    for arg in std::env::args().skip(1) {
        let Some((k, v)) = arg.trim_start_matches("--").split_once('=') else {
            panic!("expected --name=value, got {arg}");
        };
        let n = || v.parse::<u64>().unwrap_or_else(|_| panic!("--{k}: not a number: {v}"));
        match k {
            "num" => num = n(),
            "db" => dir = v.into(),
            "write_buffer_size" => opts.write_buffer_size = n() as usize,
            "target_file_size_base" => opts.target_file_size_base = n(),
            "max_bytes_for_level_base" => opts.max_bytes_for_level_base = n(),
            "max_subcompactions" => opts.max_subcompactions = n() as usize,
            "max_background_jobs" => opts.max_background_jobs = n() as usize,
            "level0_slowdown_writes_trigger" => opts.level0_slowdown_writes_trigger = n() as usize,
            "level0_stop_writes_trigger" => opts.level0_stop_writes_trigger = n() as usize,
            "intra_l0" => opts.intra_l0_compaction = n() != 0,
            "compaction_style" => {
                opts.compaction_style =
                    if n() == 1 { CompactionStyle::Universal } else { CompactionStyle::Level }
            }
            "level_compaction_dynamic_level_bytes" => {
                opts.level_compaction_dynamic_level_bytes = n() != 0
            }
            _ => panic!("unknown flag --{k}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let db = Db::open(&dir, opts).expect("open");
    // Like db_bench's RandomGenerator: 50 random bytes repeated, so values compress to half.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (dir, done) = (dir.clone(), done.clone());
        std::thread::spawn(move || {
            let mut peak = 0u64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let bytes: u64 = std::fs::read_dir(&dir)
                    .map(|rd| {
                        rd.filter_map(|e| e.ok())
                            .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
                            .filter_map(|e| e.metadata().ok())
                            .map(|m| m.len())
                            .sum()
                    })
                    .unwrap_or(0);
                peak = peak.max(bytes);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            peak
        })
    };
    let start = Instant::now();
    let mut value = [0u8; 100];
    for _ in 0..num {
        let k = rnd() % num;
        for b in value[..50].iter_mut() {
            *b = b' ' + (rnd() % 95) as u8;
        }
        value.copy_within(..50, 50);
        db.put(format!("{k:016}"), value).expect("put");
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "fillrandom   : {:>10.3} micros/op {:.0} ops/sec {:.3} seconds {num} operations",
        secs * 1e6 / num as f64,
        num as f64 / secs,
        secs
    );
    let live: u64 =
        db.property("talus.total-sst-files-size").and_then(|s| s.parse().ok()).unwrap_or(0);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = sampler.join().unwrap_or(0);
    println!("sst bytes: live {live}, peak {peak} ({:.2}x live)", peak as f64 / live.max(1) as f64);
    println!("{}", db.property("talus.stats").unwrap_or_default());
}

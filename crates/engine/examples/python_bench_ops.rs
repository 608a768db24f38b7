//! The operations of `bench/python_bench.py` as a Rust loop over `talus::Db`: the same keys,
//! values, orders and phases, so the binding's cost per call is the Python run's time (or
//! instructions) per operation minus this one's. The data and the orders are defined in
//! `bench/python_bench.py` (`key`, `value`, `order`) and computed here the same way.
//!
//! `cargo run --release -p talus --example python_bench_ops -- --db=DIR --num=N --seed=S
//!  [--phases=put,batch100,flush,get,multi_get,iterate] [--pregen] [--no_close] [--digest]`
//!
//! Prints one JSON object per phase on stdout (`phase`, `ops` (calls), `keys`, `wall_s`,
//! `proc_cpu_s`, `thread_cpu_s`), as the Python child does. `--pregen` builds every phase's data before the
//! first phase (for instruction counts by difference); `--no_close` exits without closing;
//! `--digest` prints each phase's FNV-1a 64 of its keys then values and exits (no database),
//! which `bench/test_python_bench.py` compares with the Python side's.

use std::time::Instant;

use talus::{Db, Options, ReadOptions, WriteBatch};

/// Bytes of the pool values are cut from (as in python_bench.py).
const POOL: usize = 1 << 20;
/// Value size; the second half is zeros (compresses to about half, as db_bench's values).
const VALUE: usize = 100;
/// Keys per batch and per multi_get.
const GROUP: usize = 100;

/// The pool: xorshift64 from a fixed seed, little-endian words.
fn pool() -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::with_capacity(POOL + 8);
    while out.len() < POOL {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(POOL);
    out
}

fn key(i: u64) -> Vec<u8> {
    format!("{i:016}").into_bytes()
}

fn value(pool: &[u8], i: u64, version: u64) -> Vec<u8> {
    let off = ((i * 37 + version * 101) % (POOL - VALUE) as u64) as usize;
    let mut v = pool[off..off + VALUE / 2].to_vec();
    v.resize(VALUE, 0);
    v
}

/// FNV-1a 64 of the keys, then the values, of one phase's data.
fn digest(d: &Data) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in d.keys.iter().chain(&d.values).flatten() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The permutation of phase `phase`: `(a * j + b) mod n`, `a` coprime with `n`.
fn order(n: u64, seed: u64, phase: u64) -> Vec<u64> {
    let mut a = (n * 618_034 / 1_000_000 + seed * 7 + phase * 13) % n.max(1);
    a = a.max(1);
    while gcd(a, n) != 1 {
        a += 1;
    }
    let b = (seed * 7919 + phase * 104_729) % n.max(1);
    (0..n).map(|j| (a * j + b) % n).collect()
}

fn cpu_seconds(who: libc::c_int) -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct it is given; `ru` is a valid, owned rusage.
    unsafe { libc::getrusage(who, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// The data of one phase, built before it runs.
struct Data {
    keys: Vec<Vec<u8>>,
    values: Vec<Vec<u8>>,
}

fn data(phase: &str, n: u64, seed: u64, pool: &[u8]) -> Data {
    // (order, value version; None: no values)
    let (idx, version) = match phase {
        "put" => (1, Some(0)),
        "batch100" => (2, Some(1)),
        "get" => (3, None),
        "multi_get" => (4, None),
        _ => return Data { keys: Vec::new(), values: Vec::new() },
    };
    let ord = order(n, seed, idx);
    let keys = ord.iter().map(|&i| key(i)).collect();
    let values = match version {
        Some(ver) => ord.iter().map(|&i| value(pool, i, ver)).collect(),
        None => Vec::new(),
    };
    Data { keys, values }
}

/// Runs `phase`; returns (calls, keys).
fn run(db: &Db, phase: &str, d: &Data, n: u64) -> (u64, u64) {
    match phase {
        "put" => {
            for (k, v) in d.keys.iter().zip(&d.values) {
                db.put(k, v).expect("put");
            }
            (n, n)
        }
        "batch100" => {
            for (ks, vs) in d.keys.chunks(GROUP).zip(d.values.chunks(GROUP)) {
                let mut b = WriteBatch::new();
                for (k, v) in ks.iter().zip(vs) {
                    b.put(k, v);
                }
                db.write(b, &Default::default()).expect("write");
            }
            ((n as usize).div_ceil(GROUP) as u64, n)
        }
        "flush" => {
            db.flush().expect("flush");
            (1, 0)
        }
        "get" => {
            for k in &d.keys {
                std::hint::black_box(db.get(k).expect("get"));
            }
            (n, n)
        }
        "multi_get" => {
            let ro = ReadOptions::default();
            for ks in d.keys.chunks(GROUP) {
                std::hint::black_box(db.multi_get(ks, &ro));
            }
            ((n as usize).div_ceil(GROUP) as u64, n)
        }
        "iterate" => {
            let mut c = 0u64;
            for kv in db.iter(&ReadOptions::default()) {
                std::hint::black_box(kv.expect("iterate"));
                c += 1;
            }
            (c, c)
        }
        other => panic!("unknown phase {other}"),
    }
}

fn main() {
    let (mut dir, mut num, mut seed) = (String::new(), 100_000u64, 1u64);
    let mut phases = "put,batch100,flush,get,multi_get,iterate".to_string();
    let (mut pregen, mut no_close, mut digests) = (false, false, false);
    for arg in std::env::args().skip(1) {
        let (k, v) = arg.trim_start_matches("--").split_once('=').unwrap_or((&arg[2..], ""));
        match k {
            "db" => dir = v.to_string(),
            "num" => num = v.parse().expect("--num"),
            "seed" => seed = v.parse().expect("--seed"),
            "phases" => phases = v.to_string(),
            "pregen" => pregen = true,
            "no_close" => no_close = true,
            "digest" => digests = true,
            _ => panic!("unknown flag {arg}"),
        }
    }
    if digests {
        let pool = pool();
        for phase in ["put", "batch100", "get", "multi_get"] {
            let h = digest(&data(phase, num, seed, &pool));
            println!("{{\"phase\": \"{phase}\", \"digest\": \"{h:016x}\"}}");
        }
        return;
    }
    assert!(!dir.is_empty(), "--db=DIR is required");
    let db =
        Db::open(&dir, Options { create_if_missing: true, ..Default::default() }).expect("open");
    let pool = pool();
    let phases: Vec<&str> = phases.split(',').filter(|p| !p.is_empty()).collect();
    let all = ["put", "batch100", "get", "multi_get"];
    let mut pre: Vec<(&str, Data)> = if pregen {
        all.iter().map(|p| (*p, data(p, num, seed, &pool))).collect()
    } else {
        Vec::new()
    };
    for phase in phases {
        let d = match pre.iter().position(|(p, _)| *p == phase) {
            Some(i) => pre.swap_remove(i).1,
            None => data(phase, num, seed, &pool),
        };
        let (w0, p0, t0) =
            (Instant::now(), cpu_seconds(libc::RUSAGE_SELF), cpu_seconds(libc::RUSAGE_THREAD));
        let (ops, keys) = run(&db, phase, &d, num);
        let wall = w0.elapsed().as_secs_f64();
        let (p1, t1) = (cpu_seconds(libc::RUSAGE_SELF), cpu_seconds(libc::RUSAGE_THREAD));
        println!(
            "{{\"phase\": \"{phase}\", \"ops\": {ops}, \"keys\": {keys}, \"wall_s\": {wall:.6}, \"proc_cpu_s\": {:.6}, \"thread_cpu_s\": {:.6}}}",
            p1 - p0,
            t1 - t0
        );
    }
    if no_close {
        std::process::exit(0);
    }
    db.close().expect("close");
}

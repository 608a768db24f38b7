//! The benchmark bodies, one per RocksDB `Benchmark::` method, run by each thread of
//! [`super::runner::run_benchmark`]. Keys, values, counting and messages follow
//! `db_bench_tool.cc`: fills count `key_size + value_size` bytes per put; reads count found
//! `key + value` bytes and report `(found of read found)`.

use std::sync::atomic::Ordering;

use super::engines::{EResult, Ops};
use super::keygen::{key_from_int, random_key, KeyGen, ValueSource, WriteMode};
use super::report::OpType;
use super::thread_state::{Duration, RateLimiter, Shared, ThreadState};

/// Which body a benchmark runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// fillseq.
    WriteSeq,
    /// fillrandom, overwrite.
    WriteRandom,
    /// filluniquerandom.
    WriteUniqueRandom,
    /// readrandom.
    ReadRandom,
    /// readseq.
    ReadSeq,
    /// readreverse.
    ReadReverse,
    /// seekrandom.
    SeekRandom,
    /// readwhilewriting: thread 0 writes, the others read.
    ReadWhileWriting,
    /// seekrandomwhilewriting: thread 0 writes, the others seek.
    SeekRandomWhileWriting,
    /// readrandomwriterandom.
    ReadRandomWriteRandom,
    /// deleterandom.
    DeleteRandom,
    /// multireadrandom.
    MultiReadRandom,
    /// mergerandom.
    MergeRandom,
    /// readrandommergerandom.
    ReadRandomMergeRandom,
    /// randomtransaction (`random_txn.rs`).
    RandomTransaction,
    /// compact (one call, timed).
    Compact,
}

/// Runs `method` for one thread.
pub fn run(method: Method, sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    match method {
        Method::WriteSeq => do_write(sh, t, WriteMode::Sequential),
        Method::WriteRandom => do_write(sh, t, WriteMode::Random),
        Method::WriteUniqueRandom => do_write(sh, t, WriteMode::UniqueRandom),
        Method::ReadRandom => read_random(sh, t),
        Method::ReadSeq => read_scan(sh, t, true),
        Method::ReadReverse => read_scan(sh, t, false),
        Method::SeekRandom => seek_random(sh, t),
        Method::ReadWhileWriting if t.tid == 0 => bg_writer(sh, t),
        Method::ReadWhileWriting => read_random(sh, t),
        Method::SeekRandomWhileWriting if t.tid == 0 => bg_writer(sh, t),
        Method::SeekRandomWhileWriting => seek_random(sh, t),
        Method::ReadRandomWriteRandom => read_random_write_random(sh, t),
        Method::DeleteRandom => delete_random(sh, t),
        Method::MultiReadRandom => multi_read_random(sh, t),
        Method::MergeRandom => merge_random(sh, t),
        Method::ReadRandomMergeRandom => read_random_merge_random(sh, t),
        Method::RandomTransaction => super::random_txn::run(sh, t),
        Method::Compact => sh.engine.compact(),
    }
}

/// RocksDB's `SelectDB(thread)`: db_bench picks the database of each operation (or batch) with
/// `rand.Next() % num_dbs`, one draw even when there is one database. Drawn here at the same
/// points so every key that follows is the one RocksDB's db_bench uses for the same `--seed`
/// (and the `(found of read)` counts of the two tools can be compared).
#[inline]
fn select_db(t: &mut ThreadState) {
    std::hint::black_box(t.rng.next_u64());
}

fn do_write(sh: &Shared<'_>, t: &mut ThreadState, mode: WriteMode) -> EResult<()> {
    let p = sh.params;
    let secs = if mode == WriteMode::Random { p.duration } else { 0 };
    let num_ops = if p.writes == 0 { p.num } else { p.writes };
    let mut duration = Duration::new(sh, secs, num_ops);
    let mut keys = KeyGen::new(mode, p.num, p.seed_base);
    if p.num != p.flag_num {
        t.stats.add_message(&format!("({} ops)", p.num));
    }
    let mut values = ValueSource::new(sh.values.clone(), p.value_size);
    let mut key = Vec::with_capacity(p.key_size);
    let mut ops = Ops::default();
    let mut bytes = 0u64;
    while p.num != 0 && !duration.done(p.batch) {
        if mode != WriteMode::Sequential {
            // DoWrite draws the batch's database only in random modes.
            select_db(t);
        }
        ops.clear();
        let mut batch_bytes = 0u64;
        for _ in 0..p.batch {
            let k = keys.next(&mut t.rng);
            key_from_int(k, p.key_size, &mut key);
            let v = values.generate();
            batch_bytes += (v.len() + p.key_size) as u64;
            if p.batch == 1 {
                // Skip the batch copy for single puts.
                sh.engine.put(&key, v).map_err(|e| format!("put error: {e}"))?;
            } else {
                ops.put(&key, v);
            }
        }
        bytes += batch_bytes;
        if let Some(l) = &sh.write_limiter {
            l.request(batch_bytes);
            t.stats.reset_last_op_time();
        }
        if p.batch > 1 {
            sh.engine.write(&ops).map_err(|e| format!("put error: {e}"))?;
        }
        t.stats.finished_ops(sh.engine, p.batch, OpType::Write);
    }
    t.stats.add_bytes(bytes);
    Ok(())
}

fn read_random(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let mut duration = Duration::new(sh, p.duration, p.reads);
    let mut key = Vec::with_capacity(p.key_size);
    let (mut read, mut found, mut bytes) = (0u64, 0u64, 0u64);
    while !duration.done(1) {
        select_db(t);
        let k = random_key(&mut t.rng, p.flag_num, p.exp_range);
        key_from_int(k, p.key_size, &mut key);
        read += 1;
        if let Some(len) = sh.engine.get(&key).map_err(|e| format!("Get returned an error: {e}"))? {
            found += 1;
            bytes += (key.len() + len) as u64;
        }
        t.stats.finished_ops(sh.engine, 1, OpType::Read);
    }
    t.stats.add_bytes(bytes);
    t.stats.add_message(&format!("({found} of {read} found)\n"));
    Ok(())
}

fn multi_read_random(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let mut duration = Duration::new(sh, p.duration, p.reads);
    let mut keys: Vec<Vec<u8>> = (0..p.batch).map(|_| Vec::with_capacity(p.key_size)).collect();
    let mut sizes = Vec::with_capacity(keys.len());
    let (mut read, mut found, mut bytes) = (0u64, 0u64, 0u64);
    while !duration.done(p.batch) {
        select_db(t);
        for k in keys.iter_mut() {
            key_from_int(random_key(&mut t.rng, p.flag_num, p.exp_range), p.key_size, k);
        }
        sh.engine
            .multi_get(&keys, &mut sizes)
            .map_err(|e| format!("MultiGet returned an error: {e}"))?;
        read += p.batch;
        for s in sizes.iter().flatten() {
            found += 1;
            bytes += (p.key_size + s) as u64;
        }
        t.stats.finished_ops(sh.engine, p.batch, OpType::Read);
    }
    t.stats.add_bytes(bytes);
    t.stats.add_message(&format!("({found} of {read} found)"));
    Ok(())
}

fn read_scan(sh: &Shared<'_>, t: &mut ThreadState, forward: bool) -> EResult<()> {
    let p = sh.params;
    let mut it = sh.engine.iter();
    if forward {
        it.seek_to_first();
    } else {
        it.seek_to_last();
    }
    let (mut i, mut bytes) = (0u64, 0u64);
    while i < p.reads && it.valid() {
        bytes += (it.key().len() + it.value().len()) as u64;
        t.stats.finished_ops(sh.engine, 1, OpType::Read);
        i += 1;
        if forward {
            it.next();
        } else {
            it.prev();
        }
    }
    it.status().map_err(|e| format!("iterator error: {e}"))?;
    t.stats.add_bytes(bytes);
    Ok(())
}

fn seek_random(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let mut duration = Duration::new(sh, p.duration, p.reads);
    let mut key = Vec::with_capacity(p.key_size);
    let mut value_buffer = [0u8; 256];
    let (mut read, mut found, mut bytes) = (0u64, 0u64, 0u64);
    while !duration.done(1) {
        let k = t.rng.next_u64() % p.flag_num;
        key_from_int(k, p.key_size, &mut key);
        // A new iterator per seek, as RocksDB's seekrandom without a tailing iterator.
        let (hit, b) = sh
            .engine
            .seek_scan(&key, p.seek_nexts, &mut value_buffer)
            .map_err(|e| format!("iterator error: {e}"))?;
        read += 1;
        found += u64::from(hit);
        bytes += b;
        t.stats.finished_ops(sh.engine, 1, OpType::Seek);
    }
    std::hint::black_box(&value_buffer);
    t.stats.add_bytes(bytes);
    t.stats.add_message(&format!("({found} of {read} found)\n"));
    Ok(())
}

/// The *whilewriting writer: random puts, paced by `--benchmark_write_rate_limit`, until every
/// reader is done; its stats are left out of the report.
fn bg_writer(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let limiter = (p.write_rate_limit > 0).then(|| RateLimiter::new(p.write_rate_limit));
    t.stats.set_exclude_from_merge();
    let mut values = ValueSource::new(sh.values.clone(), p.value_size);
    let mut key = Vec::with_capacity(p.key_size);
    let mut bytes = 0u64;
    loop {
        select_db(t);
        if sh.num_done.load(Ordering::Acquire) + 1 >= sh.total || sh.abort.load(Ordering::Relaxed) {
            break;
        }
        key_from_int(t.rng.next_u64() % p.flag_num, p.key_size, &mut key);
        let v = values.generate();
        sh.engine.put(&key, v).map_err(|e| format!("put error: {e}"))?;
        bytes += (key.len() + v.len()) as u64;
        t.stats.finished_ops(sh.engine, 1, OpType::Write);
        if let Some(l) = &limiter {
            l.request((key.len() + v.len()) as u64);
        }
    }
    t.stats.add_bytes(bytes);
    Ok(())
}

fn read_random_write_random(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let mut duration = Duration::new(sh, p.duration, p.readwrites);
    let mut values = ValueSource::new(sh.values.clone(), p.value_size);
    let mut key = Vec::with_capacity(p.key_size);
    let (mut get_weight, mut put_weight) = (0u64, 0u64);
    let (mut reads_done, mut writes_done, mut found) = (0u64, 0u64, 0u64);
    while !duration.done(1) {
        select_db(t);
        key_from_int(t.rng.next_u64() % p.flag_num, p.key_size, &mut key);
        if get_weight == 0 && put_weight == 0 {
            get_weight = p.readwritepercent;
            put_weight = 100 - get_weight;
        }
        if get_weight > 0 {
            if sh.engine.get(&key).map_err(|e| format!("get error: {e}"))?.is_some() {
                found += 1;
            }
            get_weight -= 1;
            reads_done += 1;
            t.stats.finished_ops(sh.engine, 1, OpType::Read);
        } else if put_weight > 0 {
            sh.engine.put(&key, values.generate()).map_err(|e| format!("put error: {e}"))?;
            put_weight -= 1;
            writes_done += 1;
            t.stats.finished_ops(sh.engine, 1, OpType::Write);
        }
    }
    t.stats.add_message(&format!(
        "( reads:{reads_done} writes:{writes_done} total:{} found:{found})",
        p.readwrites
    ));
    Ok(())
}

fn delete_random(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let mut duration = Duration::new(sh, p.duration, p.deletes);
    let mut key = Vec::with_capacity(p.key_size);
    let mut ops = Ops::default();
    while !duration.done(p.batch) {
        select_db(t);
        ops.clear();
        for _ in 0..p.batch {
            key_from_int(t.rng.next_u64() % p.flag_num, p.key_size, &mut key);
            ops.delete(&key);
        }
        sh.engine.write(&ops).map_err(|e| format!("del error: {e}"))?;
        t.stats.finished_ops(sh.engine, p.batch, OpType::Delete);
    }
    Ok(())
}

/// RocksDB's `MergeRandom`: `readwrites` merges of random values into random keys among
/// `--merge_keys`.
fn merge_random(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let mut duration = Duration::new(sh, p.duration, p.readwrites);
    let mut values = ValueSource::new(sh.values.clone(), p.value_size);
    let mut key = Vec::with_capacity(p.key_size);
    let mut bytes = 0u64;
    while !duration.done(1) {
        select_db(t);
        key_from_int(t.rng.next_u64() % p.merge_keys, p.key_size, &mut key);
        let v = values.generate();
        sh.engine.merge(&key, v).map_err(|e| format!("merge error: {e}"))?;
        bytes += (key.len() + v.len()) as u64;
        t.stats.finished_ops(sh.engine, 1, OpType::Merge);
    }
    t.stats.add_bytes(bytes);
    t.stats.add_message(&format!("( updates:{})", p.readwrites));
    Ok(())
}

/// RocksDB's `ReadRandomMergeRandom`: `readwrites` operations on random keys among
/// `--merge_keys`, `--mergereadpercent` of them merges and the rest reads.
fn read_random_merge_random(sh: &Shared<'_>, t: &mut ThreadState) -> EResult<()> {
    let p = sh.params;
    let mut duration = Duration::new(sh, p.duration, p.readwrites);
    let mut values = ValueSource::new(sh.values.clone(), p.value_size);
    let mut key = Vec::with_capacity(p.key_size);
    let (mut hits, mut gets, mut merges, mut max_length) = (0u64, 0u64, 0u64, 0usize);
    while !duration.done(1) {
        select_db(t);
        key_from_int(t.rng.next_u64() % p.merge_keys, p.key_size, &mut key);
        let do_merge = t.rng.next_u64() % 100 < p.mergereadpercent;
        if do_merge {
            sh.engine.merge(&key, values.generate()).map_err(|e| format!("merge error: {e}"))?;
            merges += 1;
            t.stats.finished_ops(sh.engine, 1, OpType::Merge);
        } else {
            match sh.engine.get(&key) {
                Ok(Some(len)) => {
                    max_length = max_length.max(len);
                    hits += 1;
                }
                Ok(None) => {}
                // RocksDB's db_bench reports the error and goes on.
                Err(e) => eprintln!("get error: {e}"),
            }
            gets += 1;
            t.stats.finished_ops(sh.engine, 1, OpType::Read);
        }
    }
    t.stats.add_message(&format!(
        "(reads:{gets} merges:{merges} total:{} hits:{hits} maxlength:{max_length})",
        p.readwrites
    ));
    Ok(())
}

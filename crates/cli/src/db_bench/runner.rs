//! Running one benchmark on N threads over one shared engine (RocksDB's `RunBenchmark`): the
//! threads start together behind a barrier, each times itself, and their [`Stats`] are merged
//! into the result line. What the threads share and own is in `thread_state.rs`.

use std::sync::atomic::Ordering;
use std::sync::Barrier;

use super::keygen::Rng64;
use super::report::{ReportConfig, Stats};
use super::thread_state::{Shared, ThreadState};
use super::workloads::Method;

/// Runs `method` on `n` threads; returns the merged stats (already reported on stdout).
pub fn run_benchmark(
    shared: &Shared<'_>,
    cfg: ReportConfig,
    thread_counter: &mut u64,
    n: usize,
    name: &str,
    method: Method,
) -> Result<Stats, String> {
    let barrier = Barrier::new(n);
    let mut states = Vec::with_capacity(n);
    for tid in 0..n {
        *thread_counter += 1;
        let seed = shared.params.seed_base.wrapping_add(*thread_counter);
        states.push(ThreadState { tid, rng: Rng64::new(seed), stats: Stats::new(cfg) });
    }
    let perf = std::sync::Mutex::new(talus::PerfContext::default());
    let io_before = crate::procio::ProcIo::now();
    let results: Vec<Result<Stats, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = states
            .into_iter()
            .map(|mut st| {
                let barrier = &barrier;
                let perf = &perf;
                s.spawn(move || {
                    shared.engine.thread_init();
                    barrier.wait();
                    talus::perf::reset();
                    st.stats.start(st.tid as i64);
                    let r = super::workloads::run(method, shared, &mut st);
                    st.stats.stop();
                    perf.lock().unwrap_or_else(|e| e.into_inner()).add(&talus::perf_context());
                    shared.num_done.fetch_add(1, Ordering::AcqRel);
                    if r.is_err() {
                        shared.abort.store(true, Ordering::Relaxed);
                    }
                    r.map(|()| st.stats)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| Err(format!("{name}: a benchmark thread panicked")))
            })
            .collect()
    });
    // As RocksDB: a fresh Stats made now (its start and finish are "now"), merged with every
    // thread's; the span becomes [earliest start, now] and the excluded writer is skipped.
    let mut merged = Stats::new(cfg);
    for r in results {
        merged.merge(&r.map_err(|e| format!("{name}: {e}"))?);
    }
    let io = crate::procio::ProcIo::now().since(&io_before);
    let line = merged.report(name);
    print!("{line}");
    if talus::perf::perf_level() == talus::PerfLevel::EnableCount {
        // RocksDB prints each thread's context; this is their sum.
        let ctx = perf.into_inner().unwrap_or_else(|e| e.into_inner());
        println!("PERF_CONTEXT:\n{ctx}");
    }
    // Not in RocksDB's output: the process's syscall and device IO over the benchmark.
    println!("{}", io.line(merged.ops()));
    use std::io::Write;
    let _ = std::io::stdout().flush();
    Ok(merged)
}

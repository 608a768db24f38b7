//! CPU time and context switches from `getrusage`: of the whole process (`RUSAGE_SELF`: every
//! thread, background compaction and flush included) and of the calling thread
//! (`RUSAGE_THREAD`, Linux), so a benchmark can report CPU per query and tell the client
//! threads' share from the rest (post 004 reads vmstat's us/sy; a high system share hints at
//! mutex contention).
//!
//! Used by [`super::driver`] (each worker's own thread, summed in [`super::driver::Totals`])
//! and by `talus sysbench` (the process, around each test). No locks. On a system without
//! `RUSAGE_THREAD` the per-thread sample is `None`, never a made-up number.

/// CPU seconds and context switches at one moment, or the difference of two.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cpu {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
    /// Voluntary context switches (waits: locks, IO, sleeps).
    pub vcsw: u64,
    /// Involuntary context switches (preempted).
    pub ivcsw: u64,
}

impl Cpu {
    /// `self - earlier` (saturating: counters never run backwards, a bad pair gives 0).
    pub fn since(&self, earlier: &Cpu) -> Cpu {
        Cpu {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
            vcsw: self.vcsw.saturating_sub(earlier.vcsw),
            ivcsw: self.ivcsw.saturating_sub(earlier.ivcsw),
        }
    }

    /// The sum of two samples' differences.
    pub fn plus(&self, o: &Cpu) -> Cpu {
        Cpu {
            user_s: self.user_s + o.user_s,
            sys_s: self.sys_s + o.sys_s,
            vcsw: self.vcsw + o.vcsw,
            ivcsw: self.ivcsw + o.ivcsw,
        }
    }

    /// User + system seconds.
    pub fn total_s(&self) -> f64 {
        self.user_s + self.sys_s
    }

    /// Voluntary + involuntary context switches.
    pub fn switches(&self) -> u64 {
        self.vcsw + self.ivcsw
    }
}

#[cfg(unix)]
fn sample(who: libc::c_int) -> Option<Cpu> {
    // SAFETY: getrusage writes one plain C struct we own; a zeroed rusage is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(Cpu {
        user_s: secs(ru.ru_utime),
        sys_s: secs(ru.ru_stime),
        vcsw: ru.ru_nvcsw.max(0) as u64,
        ivcsw: ru.ru_nivcsw.max(0) as u64,
    })
}

/// The whole process's CPU so far.
pub fn process() -> Option<Cpu> {
    #[cfg(unix)]
    return sample(libc::RUSAGE_SELF);
    #[cfg(not(unix))]
    None
}

/// The calling thread's CPU so far (Linux's `RUSAGE_THREAD`; `None` elsewhere).
pub fn thread() -> Option<Cpu> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    return sample(libc::RUSAGE_THREAD);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spins until this thread has used `secs` of CPU by its own clock (a wall-clock spin gets
    /// less CPU on a loaded machine), or 20 s of wall time pass.
    fn spin(secs: f64) -> u64 {
        let t = std::time::Instant::now();
        let Some(c0) = thread() else { return 0 };
        let mut x = 0u64;
        while t.elapsed().as_secs() < 20 {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            if thread().is_some_and(|c| c.since(&c0).total_s() >= secs) {
                break;
            }
        }
        x
    }

    #[test]
    fn a_spinning_thread_is_charged_and_a_sleeping_one_is_not() {
        let (Some(p0), Some(t0)) = (process(), thread()) else {
            let linux = cfg!(target_os = "linux");
            assert!(!linux, "getrusage works on Linux");
            return;
        };
        spin(0.1);
        let spun = thread().unwrap().since(&t0);
        assert!(spun.total_s() >= 0.1, "spinning charged {spun:?}");
        let s0 = thread().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let slept = thread().unwrap().since(&s0);
        assert!(slept.total_s() < 0.05, "sleeping charged {slept:?}");
        assert!(slept.vcsw >= 1, "a sleep is a voluntary switch: {slept:?}");
        // Another thread's spin is in the process's time, not in this thread's.
        let t1 = thread().unwrap();
        std::thread::spawn(|| spin(0.1)).join().unwrap();
        let mine = thread().unwrap().since(&t1);
        let all = process().unwrap().since(&p0);
        assert!(mine.total_s() < 0.05, "{mine:?}");
        assert!(all.total_s() >= spun.total_s() + 0.1, "process {all:?}, spun {spun:?}");
        assert_eq!(spun.plus(&slept).switches(), spun.switches() + slept.switches());
    }
}

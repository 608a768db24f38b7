//! The process's IO counters from `/proc/self/io`: `rchar`/`wchar` (bytes passed to read and
//! write system calls, page-cache hits included) next to `read_bytes`/`write_bytes` (bytes the
//! process made the block layer fetch from or send to the device), so a benchmark never counts
//! a page-cache hit as a disk read. Read by `db_bench` (a `PROC_IO` line per benchmark) and
//! `ibench` (per step). Zeros where the file is missing (not Linux).

/// One reading of `/proc/self/io`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcIo {
    /// Bytes read by system calls (`rchar`).
    pub rchar: u64,
    /// Bytes written by system calls (`wchar`).
    pub wchar: u64,
    /// Read system calls (`syscr`).
    pub syscr: u64,
    /// Write system calls (`syscw`).
    pub syscw: u64,
    /// Bytes fetched from the device (`read_bytes`).
    pub read_bytes: u64,
    /// Bytes sent to the device (`write_bytes`).
    pub write_bytes: u64,
}

fn field(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

impl ProcIo {
    /// Parses the text of `/proc/<pid>/io` (missing fields are 0).
    pub fn parse(text: &str) -> ProcIo {
        ProcIo {
            rchar: field(text, "rchar"),
            wchar: field(text, "wchar"),
            syscr: field(text, "syscr"),
            syscw: field(text, "syscw"),
            read_bytes: field(text, "read_bytes"),
            write_bytes: field(text, "write_bytes"),
        }
    }

    /// The counters now.
    pub fn now() -> ProcIo {
        ProcIo::parse(&std::fs::read_to_string("/proc/self/io").unwrap_or_default())
    }

    /// Field-wise `self - earlier` (saturating).
    pub fn since(&self, earlier: &ProcIo) -> ProcIo {
        ProcIo {
            rchar: self.rchar.saturating_sub(earlier.rchar),
            wchar: self.wchar.saturating_sub(earlier.wchar),
            syscr: self.syscr.saturating_sub(earlier.syscr),
            syscw: self.syscw.saturating_sub(earlier.syscw),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
        }
    }

    /// The `PROC_IO:` line db_bench prints after a benchmark of `ops` operations: the totals,
    /// then per operation the KB read by system calls and from the device, and written.
    pub fn line(&self, ops: u64) -> String {
        let per = |b: u64| if ops == 0 { 0.0 } else { b as f64 / 1024.0 / ops as f64 };
        format!(
            "PROC_IO: rchar={} wchar={} syscr={} syscw={} read_bytes={} write_bytes={} \
             (per op: rchar_KB={:.3} read_KB={:.3} wchar_KB={:.3} written_KB={:.3})",
            self.rchar,
            self.wchar,
            self.syscr,
            self.syscw,
            self.read_bytes,
            self.write_bytes,
            per(self.rchar),
            per(self.read_bytes),
            per(self.wchar),
            per(self.write_bytes)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_subtracts() {
        let a = ProcIo::parse(
            "rchar: 100\nwchar: 50\nsyscr: 3\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 0\n\
             cancelled_write_bytes: 0\n",
        );
        assert_eq!((a.rchar, a.syscr, a.read_bytes), (100, 3, 4096));
        let b = ProcIo { rchar: 300, read_bytes: 8192, ..a };
        let d = b.since(&a);
        assert_eq!((d.rchar, d.read_bytes, d.wchar), (200, 4096, 0));
        assert!(d.line(2).contains("read_KB=2.000"), "{}", d.line(2));
        let now = ProcIo::now();
        assert!(now.rchar > 0, "{now:?}");
    }
}

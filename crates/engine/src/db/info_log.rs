//! The info log (`LOG`): options at open, recovery, flushes, compactions, stalls, errors.
//! Lines are `YYYY/MM/DD-HH:MM:SS.micros message`, as RocksDB writes them. Written through the
//! `Fs` under its own mutex; a failure to write the info log is ignored (it is advisory).

use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::fs::WritableFile;

pub(crate) struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
}

impl InfoLog {
    pub fn new(file: Option<Box<dyn WritableFile>>) -> Self {
        InfoLog { file: Mutex::new(file) }
    }

    pub fn log(&self, msg: &str) {
        let mut g = self.file.lock();
        if let Some(f) = g.as_mut() {
            let line = format!("{} {msg}\n", timestamp());
            let _ = f.append(line.as_bytes());
            let _ = f.flush();
        }
    }
}

/// Civil date and time (UTC) of now, as RocksDB's LOG prints it.
pub(crate) fn timestamp() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, dd) = civil_from_days(days as i64);
    format!(
        "{y:04}/{m:02}/{dd:02}-{:02}:{:02}:{:02}.{:06}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20_779), (2026, 11, 22));
    }
}

//! The info log (`LOG`): options at open, recovery, flushes, compactions, stalls, errors.
//! Lines are `YYYY/MM/DD-HH:MM:SS.micros message`, as RocksDB writes them. Written through the
//! `Fs` under its own mutex; a failure to write the info log is ignored (it is advisory).
//!
//! An open must not change the directory until recovery has succeeded, so the log starts
//! [`InfoLog::buffered`]: lines are kept in memory (with the time they were logged) and written
//! out when the open commits and calls [`InfoLog::attach`] with the new `LOG` file. A failed
//! open drops them with the error it returns; a read-only open never attaches a file.
//!
//! [`rotate_and_create`] starts the `LOG` of a read-write open: an existing one is renamed
//! `LOG.old.<micros>` as RocksDB renames it, never truncated.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::fs::{Fs, WritableFile};

/// Lines kept before a file is attached, at most (older ones are dropped first).
const MAX_BUFFERED: usize = 1000;

enum Sink {
    /// Not attached yet: lines wait here.
    Buffer(Vec<String>),
    /// The `LOG` file.
    File(Box<dyn WritableFile>),
    /// No log (read-only open, or the file could not be created).
    Off,
}

pub(crate) struct InfoLog {
    sink: Mutex<Sink>,
}

impl InfoLog {
    /// A log that keeps its lines in memory until [`InfoLog::attach`].
    pub fn buffered() -> Self {
        InfoLog { sink: Mutex::new(Sink::Buffer(Vec::new())) }
    }

    /// Writes the buffered lines to `file` and sends every later line there; `None` turns the
    /// log off (the buffered lines are dropped).
    pub fn attach(&self, file: Option<Box<dyn WritableFile>>) {
        let mut g = self.sink.lock();
        let old = std::mem::replace(&mut *g, Sink::Off);
        if let Some(mut f) = file {
            if let Sink::Buffer(lines) = old {
                for line in &lines {
                    let _ = f.append(line.as_bytes());
                }
                let _ = f.flush();
            }
            *g = Sink::File(f);
        }
    }

    pub fn log(&self, msg: &str) {
        let mut g = self.sink.lock();
        let line = match &*g {
            Sink::Off => return,
            _ => format!("{} {msg}\n", timestamp()),
        };
        match &mut *g {
            Sink::Buffer(lines) => {
                if lines.len() >= MAX_BUFFERED {
                    lines.remove(0);
                }
                lines.push(line);
            }
            Sink::File(f) => {
                let _ = f.append(line.as_bytes());
                let _ = f.flush();
            }
            Sink::Off => {}
        }
    }
}

/// Old info logs kept beside `LOG`: RocksDB's `keep_log_file_num` default (not an option here).
const KEEP_LOG_FILE_NUM: usize = 1000;

/// Starts a new `LOG` after a successful open. The old one is rotated as RocksDB rotates it, to
/// `LOG.old.<microseconds since the epoch>`, never truncated or overwritten; beyond
/// [`KEEP_LOG_FILE_NUM`] old logs, the oldest are deleted. Advisory: a failure is ignored.
pub(crate) fn rotate_and_create(fs: &dyn Fs, path: &Path) -> Option<Box<dyn WritableFile>> {
    let log = path.join("LOG");
    if fs.exists(&log) {
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        let old = (micros..)
            .map(|m| path.join(format!("LOG.old.{m}")))
            .find(|p| !fs.exists(p))
            .unwrap_or_else(|| path.join("LOG.old"));
        if fs.rename(&log, &old).is_err() {
            // Never truncate an old LOG: without a rotation there is no new LOG either.
            return None;
        }
        prune_old_info_logs(fs, path);
    }
    fs.create(&log).ok()
}

/// Deletes the oldest `LOG.old*` files beyond [`KEEP_LOG_FILE_NUM`] (a plain `LOG.old`, which
/// older versions of Talus wrote, counts as the oldest).
fn prune_old_info_logs(fs: &dyn Fs, path: &Path) {
    let Ok(names) = fs.list_dir(path) else { return };
    let mut old: Vec<(u64, String)> = names
        .into_iter()
        .filter_map(|n| {
            let rest = n.strip_prefix("LOG.old")?;
            let at = match rest.strip_prefix('.') {
                Some(m) => m.parse().ok()?,
                None if rest.is_empty() => 0,
                None => return None,
            };
            Some((at, n))
        })
        .collect();
    if old.len() <= KEEP_LOG_FILE_NUM {
        return;
    }
    old.sort();
    for (_, n) in old.iter().take(old.len() - KEEP_LOG_FILE_NUM) {
        let _ = fs.remove_file(&path.join(n));
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

//! Reading an OPTIONS file from disk: only a regular file, at most [`MAX_BYTES`], UTF-8.
//!
//! The type is checked from the path's metadata before the file is opened, so a FIFO (whose
//! open would wait for a writer), a character device such as `/dev/zero` (endless) or a
//! directory is refused without blocking; the open itself is `O_NONBLOCK` and the opened file's
//! type is checked again (the path may have been swapped in between), and the read stops one
//! byte past the bound whatever the metadata said. Called by [`crate::apply_file`] (the
//! tools' `--options_file`, `Parsed::check`, `talus stress`, the Python binding's
//! `options_file=`); no state, no locks.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest OPTIONS file read: 1 MiB (RocksDB's own are about 7-10 KiB).
pub const MAX_BYTES: u64 = 1 << 20;

/// What `meta` is, when it is not a regular file.
fn not_regular(meta: &Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a file")
    }
}

fn check(meta: &Metadata) -> Result<(), String> {
    if let Some(what) = not_regular(meta) {
        return Err(format!("is {what}, not a regular file (an OPTIONS file must be one)"));
    }
    if meta.len() > MAX_BYTES {
        return Err(too_big(meta.len()));
    }
    Ok(())
}

fn too_big(len: u64) -> String {
    format!("is {len} bytes or more; an OPTIONS file is at most {MAX_BYTES} bytes (1 MiB)")
}

/// The text of the OPTIONS file at `path`; `Err` says why it is refused (not a regular file,
/// over `MAX_BYTES`, not UTF-8, unreadable), for the caller to prefix with the path.
pub fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    check(&meta)?;
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot open: {e}"))?;
    check(&file.metadata().map_err(|e| format!("cannot read: {e}"))?)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        format!("is not a text file: the byte at offset {at} is not UTF-8 (binary data?)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("talus-optread-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_regular_files_and_never_blocking() {
        let d = scratch("types");
        assert!(read(&d).unwrap_err().contains("a directory"));
        assert!(read(Path::new("/dev/zero")).unwrap_err().contains("a character device"));
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read(&fifo).unwrap_err().contains("a FIFO"), "no writer: must not wait");
        assert!(read(&d.join("missing")).unwrap_err().contains("cannot read"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn at_most_one_mib_of_utf8() {
        let d = scratch("size");
        let p = d.join("f");
        std::fs::write(&p, vec![b'#'; MAX_BYTES as usize]).unwrap();
        assert_eq!(read(&p).unwrap().len(), MAX_BYTES as usize);
        std::fs::write(&p, vec![b'#'; MAX_BYTES as usize + 1]).unwrap();
        assert!(read(&p).unwrap_err().contains("at most 1048576 bytes"));
        std::fs::write(&p, b"[Version]\n\xff\xfe junk").unwrap();
        assert!(read(&p).unwrap_err().contains("offset 10 is not UTF-8"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}

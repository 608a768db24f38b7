//! Positional reads straight into uninitialised buffers for `std_fs`'s `RandomAccessFile`:
//! [`pread_exact`] (`read_vec_at`: one buffer) and [`preadv_split`] (`read_split_at`: one
//! `preadv(2)` scattered into two buffers, a blob record's header and key into a small one and
//! its value into the buffer the blob reader returns, so the value is copied once, by the
//! kernel). No state, no locks.

use std::fs::File;
use std::os::unix::fs::FileExt;

use super::off_t;

/// Reads `head.len()` bytes at `offset` of `file` into `head` and the `tail_len` bytes after
/// them into a new buffer with one `preadv(2)` (straight into the buffer's capacity); a short
/// read is finished by `pread(2)` reads of what is left; a short file is
/// `UnexpectedEof`.
pub(super) fn preadv_split(
    file: &File,
    offset: u64,
    head: &mut [u8],
    tail_len: usize,
) -> std::io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd;
    let mut tail = Vec::with_capacity(tail_len);
    let at = off_t(offset)?;
    let n = loop {
        let iov = [
            libc::iovec { iov_base: head.as_mut_ptr().cast(), iov_len: head.len() },
            libc::iovec {
                iov_base: tail.spare_capacity_mut().as_mut_ptr().cast(),
                iov_len: tail_len,
            },
        ];
        // SAFETY: the two iovecs describe `head` (writable, not aliased) and `tail_len` bytes
        // of `tail`'s capacity (allocated above, not aliased); preadv writes at most that many
        // bytes through them and never reads them.
        let n = unsafe { libc::preadv(file.as_raw_fd(), iov.as_ptr(), 2, at) };
        if n >= 0 {
            break n as usize;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    let h = head.len();
    if n < h {
        // Rare (a signal, a file shorter than asked): finish the head, then read the tail.
        let mut rest = vec![0u8; h - n];
        file.read_exact_at(&mut rest, offset + n as u64)?;
        head[n..].copy_from_slice(&rest);
        return pread_exact(file, offset + h as u64, tail_len);
    }
    let got = n - h;
    if got < tail_len {
        let rest = pread_exact(file, offset + n as u64, tail_len - got)?;
        // SAFETY: preadv initialised the first `got` bytes of the capacity.
        unsafe { tail.set_len(got) };
        tail.extend_from_slice(&rest);
        return Ok(tail);
    }
    // SAFETY: preadv initialised all `tail_len` bytes of the capacity (`got == tail_len`).
    unsafe { tail.set_len(tail_len) };
    Ok(tail)
}

/// Reads exactly `len` bytes at `offset` of `file` into a buffer (a pooled one if this thread
/// released one that fits: `buf_pool`) with `pread(2)` straight into its capacity (no
/// zero-filling first); a short file is `UnexpectedEof`.
pub(super) fn pread_exact(file: &File, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd;
    let mut buf = super::buf_pool::take(len);
    let mut done = 0usize;
    while done < len {
        let Some(dst) = buf.spare_capacity_mut().get_mut(done..len) else {
            return Err(std::io::Error::other("read buffer smaller than asked"));
        };
        let at = offset
            .checked_add(done as u64)
            .ok_or_else(|| std::io::Error::other("offset overflow"))
            .and_then(off_t)?;
        // SAFETY: `dst` is `len - done` bytes of `buf`'s allocation, writable and not aliased;
        // pread writes at most that many bytes through the raw pointer and never reads them.
        let n = unsafe { libc::pread(file.as_raw_fd(), dst.as_mut_ptr().cast(), dst.len(), at) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof));
        }
        done += n as usize;
    }
    // SAFETY: the loop above initialised bytes `0..len` (pread wrote `done == len` bytes in
    // order into the capacity, which `take` made at least `len`).
    unsafe { buf.set_len(len) };
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::error::Result;
    use crate::fs::std_fs::StdFs;
    use crate::fs::{Fs, RandomAccessFile};

    /// A file that only has the trait's default `read_split_at`.
    struct Plain(Arc<dyn RandomAccessFile>);
    impl RandomAccessFile for Plain {
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            self.0.read_exact_at(offset, buf)
        }
        fn size(&self) -> u64 {
            self.0.size()
        }
    }

    #[test]
    fn read_split_at_reads_head_and_tail_and_reports_a_short_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let f = StdFs.open_random(&path).unwrap();
        let plain = Plain(Arc::clone(&f));
        for (off, h, t) in
            [(0u64, 0usize, 0usize), (0, 19, 10_000 - 19), (1, 16, 4096), (9_998, 1, 1)]
        {
            for file in [&*f, &plain as &dyn RandomAccessFile] {
                let mut head = vec![0xAAu8; h];
                let tail = file.read_split_at(off, &mut head, t).unwrap();
                let o = off as usize;
                assert_eq!(head, data[o..o + h], "{off}+{h}");
                assert_eq!(tail, data[o + h..o + h + t], "{off}+{h}+{t}");
            }
        }
        for (off, h, t) in [(9_999u64, 1usize, 1usize), (9_990, 20, 0), (10_000, 0, 1)] {
            for file in [&*f, &plain as &dyn RandomAccessFile] {
                let mut head = vec![0u8; h];
                assert!(file.read_split_at(off, &mut head, t).is_err(), "{off}+{h}+{t}");
            }
        }
    }
}

// A capped device for the table layer's RocksDB backend (talus-table, cargo feature `rocksdb`):
// a `rocksdb::FileSystem` over `FileSystem::Default()` whose every file waits on a Talus
// `Throttle` (crates/engine/src/fs/throttle.rs) before it reads, writes or syncs, so RocksDB runs
// under the same `io_limit_*` caps, counted by the same rule, as Talus's `ThrottledFs` and the
// tools' SQLite VFS (docs/design/throttle.md, "What counts as an IO"):
//
// - a read (Read, PositionedRead, each request of a MultiRead, ReadAsync) is its bytes and one
//   read IO per started `max_io_bytes` of its length (the Rust side's `Throttle::wait_read`);
//   a sequential read is charged what it returned, a positional one what it asked for;
// - a buffered write's bytes are charged at Append; its IOs when the bytes go to the device:
//   at Sync/Fsync (plus one for the cache flush), RangeSync (`bytes_per_sync`) and Close (or
//   the destructor), one per started `max_io_bytes` since the last such point;
// - a direct-IO file's write is its bytes and its IOs at once, its sync one IO;
// - a directory's Fsync is one write IO; Truncate, creating, renaming and deleting are free (as
//   Talus's `set_len`, `create`, `rename`, `remove_file`);
// - RocksDB's info LOG is a writable file like the others: `NewLogger` makes RocksDB's
//   `EnvLogger` over the Env this file system belongs to, which opens it through
//   `NewWritableFile` here (the default file system's `PosixLogger` would write on its own).
//
// The throttle itself lives in Rust: `talus_tbl_throttle` is the caps' handle and two callbacks
// (`read(t, bytes)`, `write(t, ios, bytes)`) that sleep as the caps say; passed in by
// `talus_tbl_prepare` (shim.cc), which makes the Env with `NewCompositeEnv` and keeps it as long
// as the database handle. Compiled by crates/table/build.rs under the `rocksdb` feature only.

#include "throttle_fs.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace {

using rocksdb::DataVerificationInfo;
using rocksdb::FileOptions;
using rocksdb::FSDirectory;
using rocksdb::FSRandomAccessFile;
using rocksdb::FSRandomRWFile;
using rocksdb::FSReadRequest;
using rocksdb::FSSequentialFile;
using rocksdb::FSWritableFile;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

class Charger {
 public:
  explicit Charger(const talus_tbl_throttle& t) : t_(t) {}
  void Read(uint64_t bytes) const { t_.read(t_.throttle, bytes); }
  void Write(uint64_t ios, uint64_t bytes) const {
    if (ios > 0 || bytes > 0) t_.write(t_.throttle, ios, bytes);
  }
  // The IOs a transfer of `bytes` takes: one per started `max_io_bytes`, at least one.
  uint64_t Ios(uint64_t bytes) const {
    uint64_t n = (bytes + t_.max_io_bytes - 1) / t_.max_io_bytes;
    return n > 0 ? n : 1;
  }
  uint64_t MaxIo() const { return t_.max_io_bytes; }

 private:
  talus_tbl_throttle t_;
};

class SequentialFile : public rocksdb::FSSequentialFileOwnerWrapper {
 public:
  SequentialFile(std::unique_ptr<FSSequentialFile>&& f, const Charger& c)
      : FSSequentialFileOwnerWrapper(std::move(f)), c_(c) {}
  IOStatus Read(size_t n, const IOOptions& o, Slice* result, char* scratch,
                IODebugContext* dbg) override {
    IOStatus s = target()->Read(n, o, result, scratch, dbg);
    if (s.ok() && result->size() > 0) c_.Read(result->size());
    return s;
  }
  IOStatus PositionedRead(uint64_t offset, size_t n, const IOOptions& o, Slice* result,
                          char* scratch, IODebugContext* dbg) override {
    c_.Read(n);
    return target()->PositionedRead(offset, n, o, result, scratch, dbg);
  }

 private:
  Charger c_;
};

class RandomAccessFile : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  RandomAccessFile(std::unique_ptr<FSRandomAccessFile>&& f, const Charger& c)
      : FSRandomAccessFileOwnerWrapper(std::move(f)), c_(c) {}
  IOStatus Read(uint64_t offset, size_t n, const IOOptions& o, Slice* result, char* scratch,
                IODebugContext* dbg) const override {
    c_.Read(n);
    return target()->Read(offset, n, o, result, scratch, dbg);
  }
  IOStatus MultiRead(FSReadRequest* reqs, size_t num_reqs, const IOOptions& o,
                     IODebugContext* dbg) override {
    for (size_t i = 0; i < num_reqs; i++) c_.Read(reqs[i].len);
    return target()->MultiRead(reqs, num_reqs, o, dbg);
  }
  IOStatus ReadAsync(FSReadRequest& req, const IOOptions& o,
                     std::function<void(FSReadRequest&, void*)> cb, void* cb_arg,
                     void** io_handle, rocksdb::IOHandleDeleter* del_fn,
                     IODebugContext* dbg) override {
    c_.Read(req.len);
    return target()->ReadAsync(req, o, cb, cb_arg, io_handle, del_fn, dbg);
  }

 private:
  Charger c_;
};

// A writable file: buffered (bytes at Append, IOs when handed to the device) or direct (both at
// once), as the module comment says. `unsent_` is atomic: RocksDB may sync a WAL from one
// thread while another appends (`IsSyncThreadSafe`).
class WritableFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  WritableFile(std::unique_ptr<FSWritableFile>&& f, const Charger& c)
      : FSWritableFileOwnerWrapper(std::move(f)), c_(c), direct_(target()->use_direct_io()) {}
  ~WritableFile() override { Send(0); }

  IOStatus Append(const Slice& data, const IOOptions& o, IODebugContext* dbg) override {
    Charge(data.size());
    return target()->Append(data, o, dbg);
  }
  IOStatus Append(const Slice& data, const IOOptions& o, const DataVerificationInfo& v,
                  IODebugContext* dbg) override {
    Charge(data.size());
    return target()->Append(data, o, v, dbg);
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& o,
                            IODebugContext* dbg) override {
    Charge(data.size());
    return target()->PositionedAppend(data, offset, o, dbg);
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& o,
                            const DataVerificationInfo& v, IODebugContext* dbg) override {
    Charge(data.size());
    return target()->PositionedAppend(data, offset, o, v, dbg);
  }
  IOStatus Sync(const IOOptions& o, IODebugContext* dbg) override {
    Send(1);
    return target()->Sync(o, dbg);
  }
  IOStatus Fsync(const IOOptions& o, IODebugContext* dbg) override {
    Send(1);
    return target()->Fsync(o, dbg);
  }
  IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const IOOptions& o,
                     IODebugContext* dbg) override {
    Send(0);
    return target()->RangeSync(offset, nbytes, o, dbg);
  }
  IOStatus Close(const IOOptions& o, IODebugContext* dbg) override {
    Send(0);
    return target()->Close(o, dbg);
  }

 private:
  void Charge(uint64_t n) {
    if (direct_) {
      c_.Write(c_.Ios(n), n);
    } else {
      c_.Write(0, n);
      unsent_.fetch_add(n, std::memory_order_relaxed);
    }
  }
  // Charges the IOs of the bytes not yet handed to the device, plus `extra` (a cache flush).
  void Send(uint64_t extra) {
    uint64_t n = unsent_.exchange(0, std::memory_order_relaxed);
    c_.Write((n + c_.MaxIo() - 1) / c_.MaxIo() + extra, 0);
  }

  Charger c_;
  bool direct_;
  std::atomic<uint64_t> unsent_{0};
};

// A file written and read in place (RocksDB uses it to rewrite an ingested file's global
// sequence number): reads as a random-access file's, writes as a buffered file's.
class RandomRWFile : public rocksdb::FSRandomRWFileOwnerWrapper {
 public:
  RandomRWFile(std::unique_ptr<FSRandomRWFile>&& f, const Charger& c)
      : FSRandomRWFileOwnerWrapper(std::move(f)), c_(c) {}
  ~RandomRWFile() override { Send(0); }
  IOStatus Write(uint64_t offset, const Slice& data, const IOOptions& o,
                 IODebugContext* dbg) override {
    c_.Write(0, data.size());
    unsent_.fetch_add(data.size(), std::memory_order_relaxed);
    return target()->Write(offset, data, o, dbg);
  }
  IOStatus Read(uint64_t offset, size_t n, const IOOptions& o, Slice* result, char* scratch,
                IODebugContext* dbg) const override {
    c_.Read(n);
    return target()->Read(offset, n, o, result, scratch, dbg);
  }
  IOStatus Sync(const IOOptions& o, IODebugContext* dbg) override {
    Send(1);
    return target()->Sync(o, dbg);
  }
  IOStatus Fsync(const IOOptions& o, IODebugContext* dbg) override {
    Send(1);
    return target()->Fsync(o, dbg);
  }
  IOStatus Close(const IOOptions& o, IODebugContext* dbg) override {
    Send(0);
    return target()->Close(o, dbg);
  }

 private:
  void Send(uint64_t extra) {
    uint64_t n = unsent_.exchange(0, std::memory_order_relaxed);
    c_.Write((n + c_.MaxIo() - 1) / c_.MaxIo() + extra, 0);
  }

  Charger c_;
  std::atomic<uint64_t> unsent_{0};
};

class Directory : public rocksdb::FSDirectoryWrapper {
 public:
  Directory(std::unique_ptr<FSDirectory>&& d, const Charger& c)
      : FSDirectoryWrapper(std::move(d)), c_(c) {}
  IOStatus Fsync(const IOOptions& o, IODebugContext* dbg) override {
    c_.Write(1, 0);
    return FSDirectoryWrapper::Fsync(o, dbg);
  }
  IOStatus FsyncWithDirOptions(const IOOptions& o, IODebugContext* dbg,
                               const rocksdb::DirFsyncOptions& d) override {
    c_.Write(1, 0);
    return FSDirectoryWrapper::FsyncWithDirOptions(o, dbg, d);
  }

 private:
  Charger c_;
};

class ThrottledFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit ThrottledFileSystem(const talus_tbl_throttle& t)
      : FileSystemWrapper(rocksdb::FileSystem::Default()), c_(t) {}
  static const char* kClassName() { return "TalusThrottledFileSystem"; }
  const char* Name() const override { return kClassName(); }

  IOStatus NewSequentialFile(const std::string& f, const FileOptions& fo,
                             std::unique_ptr<FSSequentialFile>* r,
                             IODebugContext* dbg) override {
    std::unique_ptr<FSSequentialFile> inner;
    IOStatus s = target()->NewSequentialFile(f, fo, &inner, dbg);
    if (s.ok()) r->reset(new SequentialFile(std::move(inner), c_));
    return s;
  }
  IOStatus NewRandomAccessFile(const std::string& f, const FileOptions& fo,
                               std::unique_ptr<FSRandomAccessFile>* r,
                               IODebugContext* dbg) override {
    std::unique_ptr<FSRandomAccessFile> inner;
    IOStatus s = target()->NewRandomAccessFile(f, fo, &inner, dbg);
    if (s.ok()) r->reset(new RandomAccessFile(std::move(inner), c_));
    return s;
  }
  IOStatus NewWritableFile(const std::string& f, const FileOptions& fo,
                           std::unique_ptr<FSWritableFile>* r, IODebugContext* dbg) override {
    std::unique_ptr<FSWritableFile> inner;
    IOStatus s = target()->NewWritableFile(f, fo, &inner, dbg);
    if (s.ok()) r->reset(new WritableFile(std::move(inner), c_));
    return s;
  }
  IOStatus ReopenWritableFile(const std::string& f, const FileOptions& fo,
                              std::unique_ptr<FSWritableFile>* r, IODebugContext* dbg) override {
    std::unique_ptr<FSWritableFile> inner;
    IOStatus s = target()->ReopenWritableFile(f, fo, &inner, dbg);
    if (s.ok()) r->reset(new WritableFile(std::move(inner), c_));
    return s;
  }
  IOStatus ReuseWritableFile(const std::string& f, const std::string& old, const FileOptions& fo,
                             std::unique_ptr<FSWritableFile>* r, IODebugContext* dbg) override {
    std::unique_ptr<FSWritableFile> inner;
    IOStatus s = target()->ReuseWritableFile(f, old, fo, &inner, dbg);
    if (s.ok()) r->reset(new WritableFile(std::move(inner), c_));
    return s;
  }
  IOStatus NewRandomRWFile(const std::string& f, const FileOptions& fo,
                           std::unique_ptr<FSRandomRWFile>* r, IODebugContext* dbg) override {
    std::unique_ptr<FSRandomRWFile> inner;
    IOStatus s = target()->NewRandomRWFile(f, fo, &inner, dbg);
    if (s.ok()) r->reset(new RandomRWFile(std::move(inner), c_));
    return s;
  }
  IOStatus NewDirectory(const std::string& name, const IOOptions& o,
                        std::unique_ptr<FSDirectory>* r, IODebugContext* dbg) override {
    std::unique_ptr<FSDirectory> inner;
    IOStatus s = target()->NewDirectory(name, o, &inner, dbg);
    if (s.ok()) r->reset(new Directory(std::move(inner), c_));
    return s;
  }
  IOStatus NewLogger(const std::string& f, const IOOptions&,
                     std::shared_ptr<rocksdb::Logger>* r, IODebugContext*) override {
    if (env_ == nullptr) return IOStatus::NotSupported("a throttled file system with no Env", f);
    rocksdb::Status s = rocksdb::NewEnvLogger(f, env_, r);
    return s.ok() ? IOStatus::OK() : IOStatus::IOError(s.ToString());
  }
  // The Env whose file system this is (set once, after the Env is made; it owns this).
  void SetEnv(rocksdb::Env* env) { env_ = env; }

  // Memory-mapped buffers (only with `allow_mmap_reads`/`allow_mmap_writes`, which the table
  // layer's options leave off) would bypass the caps: refused rather than run uncapped.
  IOStatus NewMemoryMappedFileBuffer(const std::string& f,
                                     std::unique_ptr<rocksdb::MemoryMappedFileBuffer>*) override {
    return IOStatus::NotSupported("a throttled device has no memory-mapped files", f);
  }

 private:
  Charger c_;
  rocksdb::Env* env_ = nullptr;
};

}  // namespace

std::shared_ptr<rocksdb::Env> talus_tbl_throttled_env(const talus_tbl_throttle& t) {
  std::shared_ptr<ThrottledFileSystem> fs = std::make_shared<ThrottledFileSystem>(t);
  std::shared_ptr<rocksdb::Env> env(rocksdb::NewCompositeEnv(fs));
  fs->SetEnv(env.get());
  return env;
}

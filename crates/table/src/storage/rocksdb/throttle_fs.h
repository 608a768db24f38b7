// The capped device of the table layer's RocksDB backend (throttle_fs.cc): the throttle handle
// the Rust side passes to `talus_tbl_prepare` and the Env made of it.

#ifndef TALUS_TABLE_THROTTLE_FS_H_
#define TALUS_TABLE_THROTTLE_FS_H_

#include <cstdint>
#include <memory>

#include "rocksdb/env.h"

extern "C" {
// A Talus `Throttle` (`throttle`, owned by the Rust side, alive as long as the database) and the
// callbacks that wait on it: `read(throttle, bytes)` charges a read of `bytes` (one read IO per
// started `max_io_bytes`, at least one); `write(throttle, ios, bytes)` charges `ios` write IOs
// and `bytes` written bytes. `max_io_bytes` is Talus's `throttle::MAX_IO_BYTES`.
struct talus_tbl_throttle {
  void* throttle;
  void (*read)(void* throttle, uint64_t bytes);
  void (*write)(void* throttle, uint64_t ios, uint64_t bytes);
  uint64_t max_io_bytes;
};
}

// An Env (RocksDB's default one for threads and time) whose file system waits on `t` before
// every read, write and sync of every file, as throttle_fs.cc counts them.
std::shared_ptr<rocksdb::Env> talus_tbl_throttled_env(const talus_tbl_throttle& t);

#endif  // TALUS_TABLE_THROTTLE_FS_H_

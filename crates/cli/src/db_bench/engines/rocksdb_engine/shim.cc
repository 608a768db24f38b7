// The per-operation calls of db_bench's `--engine=rocksdb` (crates/cli, cargo feature `rocksdb`)
// in C++, made as RocksDB's own db_bench makes them (tools/db_bench_tool.cc, `DoWrite`,
// `ReadRandom` and `SeekRandom`): a put goes through a `WriteBatch` each thread keeps and clears
// (RocksDB's C API `rocksdb_put` builds a new one, with its buffer, for every put), a get reads
// into a `PinnableSlice` on the stack and returns only the value's size (`rocksdb_get_pinned`
// allocates a new slice object for every get), and a seek of seekrandom walks its iterator here
// (through the C API every step, key, value and validity check is a call of its own). Everything
// else (options, open, other iterators, properties) goes through RocksDB's C API from Rust; this
// file only needs the `DB*` inside the C API's handle.
//
// Compiled by crates/cli/build.rs against the headers of the RocksDB that librocksdb-sys builds.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/slice.h"
#include "rocksdb/status.h"
#include "rocksdb/write_batch.h"

// RocksDB's C API handle, defined so in db/c.cc (since LevelDB's C API); c.h only declares it.
// The Rust side checks the layout once after opening (`talus_rdb_new` reports the DB's name,
// which must be the path it opened).
extern "C" {
struct rocksdb_t {
  rocksdb::DB* rep;
};
}

namespace {

struct Handle {
  rocksdb::DB* db;
  rocksdb::WriteOptions wo;
  rocksdb::ReadOptions ro;
};

// A malloc'd, NUL-terminated copy of `s` for Rust to free with `free` (null if out of memory).
char* malloc_copy(const std::string& s) {
  char* c = static_cast<char*>(std::malloc(s.size() + 1));
  if (c != nullptr) std::memcpy(c, s.c_str(), s.size() + 1);
  return c;
}

// A malloc'd copy of `s`'s message, or null when `s` is ok.
char* error(const rocksdb::Status& s) {
  return s.ok() ? nullptr : malloc_copy(s.ToString());
}

// Each thread's batch, cleared before every use (db_bench: one per thread, `batch.Clear()` per
// write). It holds no reference into the database, so it may outlive it.
rocksdb::WriteBatch& thread_batch() {
  static thread_local rocksdb::WriteBatch batch(0, 0, 0, 0);
  return batch;
}

}  // namespace

extern "C" {

// A handle for `db` with db_bench's write and read options; `name` receives the DB's name (its
// path), for the caller's layout check. Free with `talus_rdb_free` before closing `db`.
void* talus_rdb_new(rocksdb_t* db, unsigned char sync, unsigned char disable_wal,
                    unsigned char verify_checksums, char** name) {
  Handle* h = new Handle();
  h->db = db->rep;
  h->wo.sync = sync != 0;
  h->wo.disableWAL = disable_wal != 0;
  h->ro = rocksdb::ReadOptions(verify_checksums != 0, true);
  *name = malloc_copy(h->db->GetName());
  return h;
}

void talus_rdb_free(void* h) { delete static_cast<Handle*>(h); }

// Clears this thread's batch.
void talus_rdb_batch_clear() { thread_batch().Clear(); }

// Adds a put (`del` == 0) or a delete to this thread's batch; an error message or null.
char* talus_rdb_batch_add(unsigned char del, const char* k, size_t kl, const char* v, size_t vl) {
  rocksdb::WriteBatch& b = thread_batch();
  rocksdb::Status s = del != 0 ? b.Delete(rocksdb::Slice(k, kl))
                               : b.Put(rocksdb::Slice(k, kl), rocksdb::Slice(v, vl));
  return error(s);
}

// Writes this thread's batch; an error message or null.
char* talus_rdb_batch_write(void* h) {
  Handle* d = static_cast<Handle*>(h);
  return error(d->db->Write(d->wo, &thread_batch()));
}

// One put through this thread's batch, as db_bench's DoWrite with one entry per batch.
char* talus_rdb_put(void* h, const char* k, size_t kl, const char* v, size_t vl) {
  Handle* d = static_cast<Handle*>(h);
  rocksdb::WriteBatch& b = thread_batch();
  b.Clear();
  rocksdb::Status s = b.Put(rocksdb::Slice(k, kl), rocksdb::Slice(v, vl));
  if (s.ok()) s = d->db->Write(d->wo, &b);
  return error(s);
}

// Looks `k` up: 1 and the value's size in `*vl` when found, 0 when not, -1 and `*err` on error.
int talus_rdb_get(void* h, const char* k, size_t kl, size_t* vl, char** err) {
  Handle* d = static_cast<Handle*>(h);
  rocksdb::PinnableSlice v;
  rocksdb::Status s = d->db->Get(d->ro, d->db->DefaultColumnFamily(), rocksdb::Slice(k, kl), &v);
  if (s.ok()) {
    *vl = v.size();
    return 1;
  }
  if (s.IsNotFound()) return 0;
  *err = error(s);
  return -1;
}

// One seek of db_bench's SeekRandom: a new iterator, `Seek(k)`, then up to `nexts` steps forward,
// each copying the value's first bytes into `buf` (`buf_len` bytes) and adding the key's and the
// value's sizes to `*bytes`. 1 when the seek landed on `k`, 0 when not, -1 and `*err` when the
// iterator reports an error.
int talus_rdb_seek(void* h, const char* k, size_t kl, uint64_t nexts, char* buf, size_t buf_len,
                   uint64_t* bytes, char** err) {
  Handle* d = static_cast<Handle*>(h);
  std::unique_ptr<rocksdb::Iterator> it(d->db->NewIterator(d->ro));
  rocksdb::Slice key(k, kl);
  it->Seek(key);
  int found = it->Valid() && it->key().compare(key) == 0 ? 1 : 0;
  for (uint64_t j = 0; j < nexts && it->Valid(); ++j) {
    rocksdb::Slice value = it->value();
    std::memcpy(buf, value.data(), std::min(value.size(), buf_len));
    *bytes += it->key().size() + it->value().size();
    it->Next();
  }
  rocksdb::Status s = it->status();
  if (!s.ok()) {
    *err = error(s);
    return -1;
  }
  return found;
}

}  // extern "C"

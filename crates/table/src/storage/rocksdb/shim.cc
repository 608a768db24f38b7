// The table layer's RocksDB backend (talus-table, cargo feature `rocksdb`): every call the
// `Storage` trait makes, in C++ against RocksDB's own API, so that nothing the C API adds sits in
// a per-row path (its `rocksdb_writebatch_put` is the same, but its get allocates a slice object
// per call and its iterator is a foreign call per step, key and value). A write batch is a
// `rocksdb::WriteBatch` the Rust side fills; a read view is a `rocksdb::ReadOptions` made once
// per view (snapshot, fill_cache); a get reads into a `PinnableSlice` on the stack and hands the
// bytes to a Rust callback that copies them into its buffer; MultiGet is RocksDB's batched one;
// an iterator walks in C++ and hands the Rust side many entries per call (`talus_tbl_iter_fill`).
//
// Options come as RocksDB option strings (`k=v;k=v`, RocksDB's names, built from the Talus
// options by the Rust side) and are parsed by RocksDB's own parser, strictly (an unknown name is
// an error); the block cache, rate limiter and statistics are objects, made here from plain
// arguments. `talus_tbl_prepare` builds the Options without touching the disk, so the caller can
// compare them (`talus_tbl_options_text`) before `talus_tbl_open` creates anything.
//
// Errors are malloc'd `Status::ToString()` texts ("Corruption: ...", "IO error: ..."), freed by
// the caller; their prefix is the status code. Compiled by crates/table/build.rs against the
// headers of the RocksDB that librocksdb-sys builds.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "rocksdb/cache.h"
#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/rate_limiter.h"
#include "rocksdb/slice.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/statistics.h"
#include "rocksdb/status.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"
#include "throttle_fs.h"

namespace {

char* malloc_copy(const std::string& s) {
  char* c = static_cast<char*>(std::malloc(s.size() + 1));
  if (c != nullptr) std::memcpy(c, s.c_str(), s.size() + 1);
  return c;
}

char* error(const rocksdb::Status& s) { return s.ok() ? nullptr : malloc_copy(s.ToString()); }

// `env`: the capped device's Env (throttle_fs.cc) when the options have caps, else null; held
// as long as the options that point at it.
struct Prepared {
  rocksdb::Options options;
  std::shared_ptr<rocksdb::Env> env;
};

struct Handle {
  rocksdb::DB* db;
  rocksdb::Options options;
  std::shared_ptr<rocksdb::Env> env;
};

struct Iter {
  std::string lower;
  std::string upper;
  rocksdb::Slice lower_slice;
  rocksdb::Slice upper_slice;
  std::unique_ptr<rocksdb::Iterator> it;
  bool reverse;
  bool started;
};

// A callback that appends `n` bytes at `p` to the Rust buffer `out`.
typedef void (*fill_fn)(void* out, const char* p, size_t n);
// A callback that appends one iterator entry to the Rust buffer `out`.
typedef void (*entry_fn)(void* out, const char* k, size_t kl, const char* v, size_t vl);
// A callback that stores value `i` of a MultiGet in the Rust buffer `out`.
typedef void (*slot_fn)(void* out, size_t i, const char* p, size_t n);

}  // namespace

extern "C" {

// Builds the options from RocksDB option strings and the cache, rate limiter and statistics
// arguments; touches no file. `cache_type`: 0 LRU, 1 HyperClockCache, 2 none. `throttle`: the
// device caps every file of the database waits on (throttle_fs.cc), copied; null for none. On
// error returns null and sets `*err`.
void* talus_tbl_prepare(const char* db_opts, const char* cf_opts, const char* table_opts,
                        int cache_type, size_t cache_capacity, int shard_bits,
                        unsigned char strict_capacity, double high_pri_ratio,
                        size_t estimated_entry_charge, unsigned char charge_metadata,
                        int64_t rate_bytes_per_sec, unsigned char statistics,
                        const talus_tbl_throttle* throttle, char** err) {
  rocksdb::ConfigOptions cfg;
  cfg.ignore_unknown_options = false;
  cfg.input_strings_escaped = false;
  rocksdb::DBOptions dbo;
  rocksdb::Status s = rocksdb::GetDBOptionsFromString(cfg, rocksdb::DBOptions(), db_opts, &dbo);
  rocksdb::ColumnFamilyOptions cfo;
  if (s.ok()) {
    s = rocksdb::GetColumnFamilyOptionsFromString(cfg, rocksdb::ColumnFamilyOptions(), cf_opts,
                                                  &cfo);
  }
  rocksdb::BlockBasedTableOptions bbto;
  if (s.ok()) {
    s = rocksdb::GetBlockBasedTableOptionsFromString(cfg, rocksdb::BlockBasedTableOptions(),
                                                     table_opts, &bbto);
  }
  if (!s.ok()) {
    *err = error(s);
    return nullptr;
  }
  rocksdb::CacheMetadataChargePolicy policy = charge_metadata != 0
                                                  ? rocksdb::kFullChargeCacheMetadata
                                                  : rocksdb::kDontChargeCacheMetadata;
  if (cache_type == 2) {
    bbto.no_block_cache = true;
    bbto.block_cache = nullptr;
  } else if (cache_type == 1) {
    rocksdb::HyperClockCacheOptions o(cache_capacity, estimated_entry_charge, shard_bits,
                                      strict_capacity != 0, nullptr, policy);
    bbto.block_cache = o.MakeSharedCache();
  } else {
    rocksdb::LRUCacheOptions o(cache_capacity, shard_bits, strict_capacity != 0, high_pri_ratio,
                               nullptr, rocksdb::kDefaultToAdaptiveMutex, policy);
    bbto.block_cache = o.MakeSharedCache();
  }
  cfo.table_factory.reset(rocksdb::NewBlockBasedTableFactory(bbto));
  Prepared* p = new Prepared();
  p->options = rocksdb::Options(dbo, cfo);
  if (rate_bytes_per_sec > 0) {
    p->options.rate_limiter.reset(rocksdb::NewGenericRateLimiter(rate_bytes_per_sec));
  }
  if (statistics != 0) p->options.statistics = rocksdb::CreateDBStatistics();
  if (throttle != nullptr) {
    p->env = talus_tbl_throttled_env(*throttle);
    p->options.env = p->env.get();
  }
  return p;
}

void talus_tbl_prepared_free(void* p) { delete static_cast<Prepared*>(p); }

// The prepared options as RocksDB writes them in its OPTIONS file: the three sections, one
// `  name=value` line each (RocksDB's serializer), malloc'd; null and `*err` on error.
char* talus_tbl_options_text(void* p, char** err) {
  const rocksdb::Options& o = static_cast<Prepared*>(p)->options;
  rocksdb::ConfigOptions cfg;
  cfg.delimiter = "\n  ";
  std::string db, cf, table;
  rocksdb::Status s = rocksdb::GetStringFromDBOptions(cfg, rocksdb::DBOptions(o), &db);
  if (s.ok()) {
    s = rocksdb::GetStringFromColumnFamilyOptions(cfg, rocksdb::ColumnFamilyOptions(o), &cf);
  }
  if (s.ok()) s = o.table_factory->GetOptionString(cfg, &table);
  if (!s.ok()) {
    *err = error(s);
    return nullptr;
  }
  std::string text = "[Version]\n  rocksdb_version=" + std::to_string(ROCKSDB_MAJOR) + "." +
                     std::to_string(ROCKSDB_MINOR) + "." + std::to_string(ROCKSDB_PATCH) +
                     "\n\n[DBOptions]\n  " + db + "\n\n[CFOptions \"default\"]\n  " + cf +
                     "\n\n[TableOptions/BlockBasedTable \"default\"]\n  " + table + "\n";
  return malloc_copy(text);
}

// Opens (creating if the options say so) the database at `path` with the prepared options.
void* talus_tbl_open(void* p, const char* path, char** err) {
  Handle* h = new Handle();
  h->options = static_cast<Prepared*>(p)->options;
  h->env = static_cast<Prepared*>(p)->env;
  rocksdb::Status s = rocksdb::DB::Open(h->options, path, &h->db);
  if (!s.ok()) {
    delete h;
    *err = error(s);
    return nullptr;
  }
  return h;
}

// Closes the database (after every snapshot, read view, iterator and writer of it is freed).
char* talus_tbl_close(void* hp) {
  Handle* h = static_cast<Handle*>(hp);
  rocksdb::Status s = h->db->Close();
  delete h->db;
  delete h;
  return error(s);
}

void* talus_tbl_batch_new() { return new rocksdb::WriteBatch(); }
void talus_tbl_batch_free(void* b) { delete static_cast<rocksdb::WriteBatch*>(b); }

// A put (`op` 0), delete (1) or range delete (2, `k`..`v`) added to batch `b`; an error or null.
char* talus_tbl_batch_add(void* b, int op, const char* k, size_t kl, const char* v, size_t vl) {
  rocksdb::WriteBatch* wb = static_cast<rocksdb::WriteBatch*>(b);
  rocksdb::Slice key(k, kl);
  rocksdb::Status s;
  if (op == 0) {
    s = wb->Put(key, rocksdb::Slice(v, vl));
  } else if (op == 1) {
    s = wb->Delete(key);
  } else {
    s = wb->DeleteRange(key, rocksdb::Slice(v, vl));
  }
  return error(s);
}

char* talus_tbl_write(void* hp, void* b, unsigned char sync, unsigned char disable_wal) {
  Handle* h = static_cast<Handle*>(hp);
  rocksdb::WriteOptions wo;
  wo.sync = sync != 0;
  wo.disableWAL = disable_wal != 0;
  return error(h->db->Write(wo, static_cast<rocksdb::WriteBatch*>(b)));
}

const void* talus_tbl_snapshot(void* hp) {
  return static_cast<Handle*>(hp)->db->GetSnapshot();
}

void talus_tbl_snapshot_release(void* hp, const void* snap) {
  static_cast<Handle*>(hp)->db->ReleaseSnapshot(static_cast<const rocksdb::Snapshot*>(snap));
}

// A read view: reads at `snap` (null: the latest state).
void* talus_tbl_readopts_new(const void* snap, unsigned char fill_cache) {
  rocksdb::ReadOptions* ro = new rocksdb::ReadOptions();
  ro->snapshot = static_cast<const rocksdb::Snapshot*>(snap);
  ro->fill_cache = fill_cache != 0;
  return ro;
}

void talus_tbl_readopts_free(void* ro) { delete static_cast<rocksdb::ReadOptions*>(ro); }

// Looks `k` up through read view `ro`: 1 with the value handed to `fill(out, ...)`, 0 when not
// found, -1 and `*err` on error.
int talus_tbl_get(void* hp, const void* ro, const char* k, size_t kl, void* out, fill_fn fill,
                  char** err) {
  Handle* h = static_cast<Handle*>(hp);
  rocksdb::PinnableSlice v;
  rocksdb::Status s = h->db->Get(*static_cast<const rocksdb::ReadOptions*>(ro),
                                 h->db->DefaultColumnFamily(), rocksdb::Slice(k, kl), &v);
  if (s.ok()) {
    fill(out, v.data(), v.size());
    return 1;
  }
  if (s.IsNotFound()) return 0;
  *err = error(s);
  return -1;
}

// RocksDB's batched MultiGet of `n` keys from one view: value `i` goes to `slot(out, i, ...)`;
// `found[i]` is 1, 0 (not found) or -1 with `errs[i]` set.
void talus_tbl_multi_get(void* hp, const void* ro, size_t n, const char* const* keys,
                         const size_t* lens, void* out, slot_fn slot, int* found, char** errs) {
  Handle* h = static_cast<Handle*>(hp);
  std::vector<rocksdb::Slice> ks(n);
  for (size_t i = 0; i < n; i++) ks[i] = rocksdb::Slice(keys[i], lens[i]);
  std::vector<rocksdb::PinnableSlice> vs(n);
  std::vector<rocksdb::Status> ss(n);
  h->db->MultiGet(*static_cast<const rocksdb::ReadOptions*>(ro), h->db->DefaultColumnFamily(), n,
                  ks.data(), vs.data(), ss.data(), false);
  for (size_t i = 0; i < n; i++) {
    if (ss[i].ok()) {
      slot(out, i, vs[i].data(), vs[i].size());
      found[i] = 1;
    } else if (ss[i].IsNotFound()) {
      found[i] = 0;
    } else {
      found[i] = -1;
      errs[i] = error(ss[i]);
    }
  }
}

// An iterator over [lower, upper) at `snap` (null: now), walking backwards when `reverse`;
// not positioned until the first `talus_tbl_iter_fill`.
void* talus_tbl_iter_new(void* hp, const void* snap, unsigned char fill_cache, const char* lo,
                         size_t lol, const char* hi, size_t hil, unsigned char reverse) {
  Handle* h = static_cast<Handle*>(hp);
  Iter* it = new Iter();
  it->lower.assign(lo, lol);
  it->upper.assign(hi, hil);
  it->lower_slice = rocksdb::Slice(it->lower);
  it->upper_slice = rocksdb::Slice(it->upper);
  rocksdb::ReadOptions ro;
  ro.snapshot = static_cast<const rocksdb::Snapshot*>(snap);
  ro.fill_cache = fill_cache != 0;
  ro.iterate_lower_bound = &it->lower_slice;
  ro.iterate_upper_bound = &it->upper_slice;
  it->it.reset(h->db->NewIterator(ro));
  it->reverse = reverse != 0;
  it->started = false;
  return it;
}

void talus_tbl_iter_free(void* it) { delete static_cast<Iter*>(it); }

// Hands up to `max_entries` entries (stopping once `max_bytes` of keys and values went) to
// `entry(out, ...)`, in the iterator's direction, positioning it first on the first call.
// Returns how many; fewer than asked only at the end of the range (then 0 on every later
// call), or -1 and `*err` when the iterator reports an error.
long talus_tbl_iter_fill(void* ip, size_t max_entries, size_t max_bytes, void* out,
                         entry_fn entry, char** err) {
  Iter* it = static_cast<Iter*>(ip);
  rocksdb::Iterator* i = it->it.get();
  if (!it->started) {
    it->started = true;
    if (it->reverse) {
      i->SeekToLast();
    } else {
      i->SeekToFirst();
    }
  }
  long n = 0;
  size_t bytes = 0;
  while (static_cast<size_t>(n) < max_entries && bytes < max_bytes && i->Valid()) {
    rocksdb::Slice k = i->key();
    rocksdb::Slice v = i->value();
    entry(out, k.data(), k.size(), v.data(), v.size());
    bytes += k.size() + v.size();
    n++;
    if (it->reverse) {
      i->Prev();
    } else {
      i->Next();
    }
  }
  if (!i->Valid() && !i->status().ok()) {
    *err = error(i->status());
    return -1;
  }
  return n;
}

// A writer of an external SST file at `path` with the database's options (bottommost
// compression, table options), for the default column family.
void* talus_tbl_sst_open(void* hp, const char* path, char** err) {
  Handle* h = static_cast<Handle*>(hp);
  rocksdb::SstFileWriter* w =
      new rocksdb::SstFileWriter(rocksdb::EnvOptions(), h->options, h->db->DefaultColumnFamily());
  rocksdb::Status s = w->Open(path);
  if (!s.ok()) {
    delete w;
    *err = error(s);
    return nullptr;
  }
  return w;
}

char* talus_tbl_sst_put(void* w, const char* k, size_t kl, const char* v, size_t vl) {
  return error(
      static_cast<rocksdb::SstFileWriter*>(w)->Put(rocksdb::Slice(k, kl), rocksdb::Slice(v, vl)));
}

uint64_t talus_tbl_sst_size(void* w) { return static_cast<rocksdb::SstFileWriter*>(w)->FileSize(); }

char* talus_tbl_sst_finish(void* w) {
  return error(static_cast<rocksdb::SstFileWriter*>(w)->Finish());
}

void talus_tbl_sst_free(void* w) { delete static_cast<rocksdb::SstFileWriter*>(w); }

// IngestExternalFile of `n` files, moved in (`move_files`), as the newest data.
char* talus_tbl_ingest(void* hp, const char* const* paths, size_t n) {
  Handle* h = static_cast<Handle*>(hp);
  std::vector<std::string> files;
  for (size_t i = 0; i < n; i++) files.emplace_back(paths[i]);
  rocksdb::IngestExternalFileOptions o;
  o.move_files = true;
  return error(h->db->IngestExternalFile(files, o));
}

char* talus_tbl_flush(void* hp) {
  rocksdb::FlushOptions fo;
  fo.wait = true;
  return error(static_cast<Handle*>(hp)->db->Flush(fo));
}

// CompactRange of every key, the bottommost level rewritten too (kForceOptimized, as db_bench's
// `compact`).
char* talus_tbl_compact(void* hp) {
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForceOptimized;
  return error(static_cast<Handle*>(hp)->db->CompactRange(co, nullptr, nullptr));
}

// Property `name` (malloc'd), or null if RocksDB has none of that name.
char* talus_tbl_property(void* hp, const char* name) {
  std::string v;
  if (!static_cast<Handle*>(hp)->db->GetProperty(name, &v)) return nullptr;
  return malloc_copy(v);
}

// The statistics text (`rocksdb.options-statistics`), or null without statistics.
char* talus_tbl_statistics(void* hp) {
  Handle* h = static_cast<Handle*>(hp);
  if (h->options.statistics == nullptr) return nullptr;
  return malloc_copy(h->options.statistics->ToString());
}

}  // extern "C"

"""Several Python threads on one database: the GIL is released during engine calls, and
nothing deadlocks, including a close while other threads are reading and iterating."""

import threading
import time

import pytest

import talus

JOIN_TIMEOUT = 120  # seconds; a deadlock fails the test instead of hanging CI


def run_threads(targets):
    errors = []

    def wrap(f):
        def run():
            try:
                f()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
        return run

    threads = [threading.Thread(target=wrap(f)) for f in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
        assert not t.is_alive(), "a thread did not finish: deadlock?"
    if errors:
        raise errors[0]


def test_readers_and_writers(db):
    n, writers, readers = 2000, 4, 4

    def writer(w):
        def go():
            for i in range(n):
                db.put(b"w%d-%06d" % (w, i), b"%d" % i)
                if i % 500 == 0:
                    with db.write_batch() as wb:
                        wb.put(b"batch-w%d-%d" % (w, i), b"x")
        return go

    def reader():
        for i in range(n):
            db.get(b"w0-%06d" % i)
            if i % 200 == 0:
                sum(1 for _ in db.keys(prefix=b"w1-"))
                db.multi_get([b"w2-000001", b"w3-000002"])

    run_threads([writer(w) for w in range(writers)] + [reader] * readers)
    for w in range(writers):
        assert sum(1 for _ in db.keys(prefix=b"w%d-" % w)) == n
        assert db.get(b"w%d-%06d" % (w, n - 1)) == b"%d" % (n - 1)


def test_flush_and_compaction_beside_writes(db):
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            db.put(b"k%08d" % i, b"v" * 100)
            i += 1

    def maintenance():
        try:
            for _ in range(5):
                db.flush()
                db.compact_range()
        finally:
            stop.set()

    run_threads([writer, writer, maintenance])
    assert db.property("talus.num-files-at-level0") is not None


def test_engine_calls_release_the_gil(db):
    """While one thread is inside compact_range, another thread keeps running Python."""
    with db.write_batch() as wb:
        for i in range(200_000):
            wb.put(b"%08d" % i, b"v" * 64)
    db.flush()
    for i in range(0, 200_000, 2):
        db.put(b"%08d" % i, b"w" * 64)
    window = {}

    def compact():
        window["start"] = time.perf_counter()
        db.compact_range()
        window["end"] = time.perf_counter()

    t = threading.Thread(target=compact)
    ticks = []
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
    t.join()
    inside = [x for x in ticks if window["start"] < x < window["end"]]
    elapsed = window["end"] - window["start"]
    # With the GIL held for the whole call, this thread could not tick inside the window.
    assert len(inside) > 100, (len(inside), elapsed)


def test_close_while_other_threads_use_the_database(path):
    db = talus.DB(path)
    with db.write_batch() as wb:
        for i in range(20_000):
            wb.put(b"%06d" % i, b"v" * 50)
    started = threading.Barrier(5)

    def user(kind):
        def go():
            started.wait()
            try:
                while True:
                    if kind == "get":
                        db.get(b"000123")
                    elif kind == "put":
                        db.put(b"000123", b"x")
                    elif kind == "iter":
                        for _ in db.items():
                            pass
                    else:
                        it = db.iterator()
                        it.seek_to_first()
                        while it.valid():
                            it.next()
            except talus.Closed:
                return
        return go

    def closer():
        started.wait()
        time.sleep(0.2)
        db.close()

    run_threads([user("get"), user("put"), user("iter"), user("raw"), closer])
    with talus.DB(path) as again:  # everything was released: the LOCK is free
        assert again.get(b"000999") == b"v" * 50


def test_one_iterator_shared_by_threads_never_crashes(db):
    for i in range(10_000):
        db.put(b"%05d" % i, b"v")
    it = db.keys()
    seen = []

    def consume():
        while True:
            try:
                k = next(it)
            except StopIteration:
                return
            except RuntimeError:  # the other thread was inside __next__
                continue
            seen.append(k)

    run_threads([consume, consume])
    assert sorted(seen) == [b"%05d" % i for i in range(10_000)]


def test_table_layer_threads(db):
    cat = talus.Catalog(db)
    t = cat.create_table("t", [("id", "i64"), ("v", "str")], ["id"], [("by_v", ["v"])])

    def inserter(base):
        def go():
            for i in range(500):
                t.insert((base + i, "v%d" % (i % 7)))
        return go

    def txn_user():
        for i in range(100):
            try:
                with cat.begin() as tx:
                    tx.insert(t, (10_000 + i, "tx"))
            except talus.Conflict:
                pytest.fail("no other writer touches these keys")

    run_threads([inserter(0), inserter(1000), inserter(2000), txn_user])
    assert len(t.scan()) == 1600
    assert t.verify_indexes() == 1600

"""Bad input, closed objects, locks and limits: every refusal is an exception, never a crash."""

import mmap
import subprocess
import sys

import pytest

import talus


@pytest.mark.parametrize("bad", ["str", 1, None, 1.5, [b"a"], object()])
def test_non_bytes_keys_and_values(db, bad):
    with pytest.raises(TypeError, match="key must be bytes"):
        db.put(bad, b"v")
    with pytest.raises(TypeError, match="value must be bytes"):
        db.put(b"k", bad)
    with pytest.raises(TypeError, match="key must be bytes"):
        db.get(bad)
    with pytest.raises(TypeError, match="key must be bytes"):
        db[bad]
    with pytest.raises(TypeError, match="key must be bytes"):
        bad in db
    with pytest.raises(TypeError, match="key must be bytes"):
        db.delete(bad)
    with pytest.raises(TypeError, match="start must be bytes"):
        db.delete_range(bad, b"z")
    with pytest.raises(TypeError, match="stop must be bytes"):
        db.delete_range(b"a", bad)
    with pytest.raises(TypeError, match="key must be bytes"):
        db.multi_get([b"a", bad])
    if bad is not None:
        with pytest.raises(TypeError, match="start must be bytes"):
            db.items(start=bad)
        with pytest.raises(TypeError, match="prefix must be bytes"):
            db.keys(prefix=bad)
    wb = db.write_batch()
    with pytest.raises(TypeError, match="key must be bytes"):
        wb.put(bad, b"v")
    with pytest.raises(TypeError, match="value must be bytes"):
        wb.put(b"k", bad)
    it = db.iterator()
    with pytest.raises(TypeError, match="key must be bytes"):
        it.seek(bad)


def test_wrong_argument_types(db):
    with pytest.raises(TypeError):
        db.write(b"not a batch")
    with pytest.raises(TypeError):
        db.multi_get(5)
    with pytest.raises(TypeError):
        db.put(b"k", b"v", sync="yes")
    with pytest.raises(TypeError):
        talus.DB(12345)
    with pytest.raises(TypeError):
        db.get()


def test_buffer_of_other_item_type_is_refused(db):
    import array
    with pytest.raises(TypeError, match="key must be bytes"):
        db.put(array.array("i", [1, 2]), b"v")
    db.put(array.array("B", [1, 2]), b"v")
    assert db.get(b"\x01\x02") == b"v"


def _huge_buffer():
    """A memoryview of 4 GiB that costs no memory (a private, unreserved anonymous mapping)."""
    size = 4 << 30
    try:
        flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_NORESERVE", 0x4000)
        m = mmap.mmap(-1, size, flags=flags, prot=mmap.PROT_READ)
    except (OSError, ValueError, OverflowError) as e:
        pytest.skip(f"cannot map 4 GiB here: {e}")
    return m, memoryview(m)


def test_value_over_the_engine_limit(db):
    m, huge = _huge_buffer()
    try:
        with pytest.raises(talus.InvalidArgument, match="value is too large"):
            db.put(b"k", huge)
        with pytest.raises(talus.InvalidArgument, match="key is too large"):
            db.put(huge, b"v")
        with pytest.raises(talus.InvalidArgument, match="value is too large"):
            db.write_batch().put(b"k", huge)
        assert db.get(b"k") is None
    finally:
        huge.release()
        m.close()


def test_locked_in_this_process(db, path):
    with pytest.raises(talus.Locked):
        talus.DB(path)
    assert issubclass(talus.Locked, talus.Error)


def test_locked_by_another_process(path):
    code = (
        "import sys, talus\n"
        "db = talus.DB(sys.argv[1])\n"
        "print('open', flush=True)\n"
        "sys.stdin.readline()\n"
        "db.close()\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code, path], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "open"
        with pytest.raises(talus.Locked, match="LOCK"):
            talus.DB(path)
        ro = talus.DB(path, read_only=True)  # a read-only open works beside the writer
        ro.close()
    finally:
        p.communicate("\n", timeout=60)
    assert p.returncode == 0
    talus.DB(path).close()


def test_closed_database_raises(path):
    db = talus.DB(path)
    db.put(b"k", b"v")
    it = db.items()
    raw = db.iterator()
    raw.seek_to_first()
    snap = db.snapshot()
    wb = db.write_batch()
    wb.put(b"x", b"y")
    db.close()
    for call in [lambda: db.get(b"k"), lambda: db.put(b"k", b"v"), lambda: db[b"k"],
                 lambda: b"k" in db, lambda: db.delete(b"k"), lambda: db.multi_get([b"k"]),
                 lambda: db.flush(), lambda: db.compact_range(), lambda: db.property("x"),
                 lambda: db.items(), lambda: db.iterator(), lambda: db.snapshot(),
                 lambda: next(it), lambda: raw.key(), lambda: raw.next(), lambda: raw.valid(),
                 lambda: snap.get(b"k"), lambda: snap.items(), lambda: wb.write(),
                 lambda: db.delete_range(b"a", b"b"), lambda: talus.Catalog(db)]:
        with pytest.raises(talus.Closed):
            call()


def test_batch_used_after_write(db):
    wb = db.write_batch()
    wb.put(b"a", b"1")
    wb.write()
    for call in [lambda: wb.put(b"b", b"2"), lambda: wb.delete(b"a"), wb.write, wb.clear,
                 lambda: len(wb), lambda: db.write(wb), lambda: wb.delete_range(b"a", b"b")]:
        with pytest.raises(talus.Closed, match="already written"):
            call()
    other = talus.WriteBatch()
    db.write(other)
    with pytest.raises(talus.Closed):
        db.write(other)


def test_bad_options():
    with pytest.raises(talus.InvalidArgument, match="no_such_option"):
        talus.DB("/tmp/never-created-talus", no_such_option=1)
    with pytest.raises(talus.InvalidArgument, match="write_buffer_size"):
        talus.DB("/tmp/never-created-talus", write_buffer_size="lots")
    with pytest.raises(talus.InvalidArgument, match="options"):
        talus.DB("/tmp/never-created-talus", options="write_buffer_size")
    with pytest.raises(TypeError, match="write_buffer_size"):
        talus.DB("/tmp/never-created-talus", write_buffer_size=[1])
    with pytest.raises(talus.InvalidArgument, match="options_file"):
        talus.DB("/tmp/never-created-talus", options_file="/dev/zero")


def test_unknown_options_in_file(tmp_path):
    f = tmp_path / "OPTIONS"
    f.write_text("[Version]\n  options_file_version=1.1\n[DBOptions]\n  made_up_option=1\n"
                 "[CFOptions \"default\"]\n  write_buffer_size=1048576\n")
    with pytest.raises(talus.InvalidArgument, match="made_up_option"):
        talus.DB(str(tmp_path / "db"), options_file=str(f))
    talus.DB(str(tmp_path / "db"), options_file=str(f), ignore_unknown_options=True).close()


def test_exception_hierarchy():
    for name in ["Corruption", "Locked", "NotFound", "InvalidArgument", "Busy", "IOError",
                 "NotSupported", "BackgroundError", "Closed", "TableError"]:
        assert issubclass(getattr(talus, name), talus.Error)
    for name in ["DuplicateKey", "SchemaError", "TableExists", "NoSuchTable", "IndexExists",
                 "NoSuchIndex", "Conflict"]:
        assert issubclass(getattr(talus, name), talus.TableError)
    assert issubclass(talus.Error, Exception)

"""Iterators: items/keys/values with bounds, prefixes and reverse order; the raw iterator."""

import pytest

import talus


@pytest.fixture
def filled(db):
    for k in [b"a", b"b", b"ba", b"bb", b"c", b"\xff", b"\xff\xff"]:
        db.put(k, k.upper())
    return db


def test_items_keys_values(filled):
    db = filled
    assert list(db.keys()) == [b"a", b"b", b"ba", b"bb", b"c", b"\xff", b"\xff\xff"]
    assert list(db.items())[0] == (b"a", b"A")
    assert list(db.values(start=b"c")) == [b"C", b"\xff", b"\xff\xff"]
    assert list(db.keys(b"b", b"c")) == [b"b", b"ba", b"bb"]
    assert list(db.keys(stop=b"b")) == [b"a"]
    assert list(db.keys(start=bytearray(b"bb"), stop=memoryview(b"c"))) == [b"bb"]


def test_reverse(filled):
    db = filled
    assert list(db.keys(reverse=True))[:3] == [b"\xff\xff", b"\xff", b"c"]
    assert list(db.items(b"b", b"c", reverse=True)) == [(b"bb", b"BB"), (b"ba", b"BA"), (b"b", b"B")]


def test_prefix(filled):
    db = filled
    assert list(db.keys(prefix=b"b")) == [b"b", b"ba", b"bb"]
    assert list(db.keys(prefix=b"b", reverse=True)) == [b"bb", b"ba", b"b"]
    assert list(db.keys(prefix=b"\xff")) == [b"\xff", b"\xff\xff"]
    assert list(db.keys(prefix=b"")) == list(db.keys())
    assert list(db.keys(prefix=b"zz")) == []
    with pytest.raises(TypeError, match="prefix"):
        db.keys(b"a", prefix=b"b")


def test_many_entries_across_chunks_and_files(db):
    n = 5000
    with db.write_batch() as wb:
        for i in range(n):
            wb.put(b"k%06d" % i, b"v%d" % i)
    db.flush()
    for i in range(0, n, 3):
        db.put(b"k%06d" % i, b"new%d" % i)  # newer versions in the memtable
    got = list(db.items())
    assert len(got) == n
    assert got[3] == (b"k000003", b"new3") and got[4] == (b"k000004", b"v4")
    assert [k for k, _ in got] == sorted(k for k, _ in got)
    assert list(db.keys(reverse=True)) == [k for k, _ in reversed(got)]
    assert sum(1 for _ in db.values(b"k001000", b"k002000")) == 1000


def test_iterator_is_a_snapshot_of_its_start(db):
    db.put(b"a", b"1")
    it = db.keys()
    db.put(b"b", b"2")
    assert list(it) == [b"a"]
    assert next(it, None) is None  # stays exhausted


def test_iterator_close_and_with(filled):
    it = filled.items()
    assert next(it) == (b"a", b"A")
    it.close()
    with pytest.raises(talus.Closed):
        next(it)
    with filled.keys() as it2:
        assert next(iter(it2)) == b"a"
    with pytest.raises(talus.Closed):
        next(it2)


def test_raw_iterator(filled):
    it = filled.iterator()
    assert not it.valid()
    with pytest.raises(talus.InvalidArgument):
        it.key()
    with pytest.raises(talus.InvalidArgument):
        it.next()
    it.seek(b"b")
    assert it.valid() and it.key() == b"b" and it.value() == b"B"
    it.next()
    assert it.item() == (b"ba", b"BA")
    it.prev()
    it.prev()
    assert it.key() == b"a"
    it.prev()
    assert not it.valid()
    it.seek_for_prev(b"bz")
    assert it.key() == b"bb"
    it.seek_to_last()
    assert it.key() == b"\xff\xff"
    it.seek_to_first()
    assert it.key() == b"a"
    it.seek(b"zzz")
    assert it.valid() and it.key() == b"\xff"
    it.status()
    with it:
        pass
    with pytest.raises(talus.Closed):
        it.valid()


def test_raw_iterator_bounds(filled):
    it = filled.iterator(b"b", b"c")
    it.seek_to_first()
    keys = []
    while it.valid():
        keys.append(it.key())
        it.next()
    assert keys == [b"b", b"ba", b"bb"]
    it = filled.iterator(prefix=b"\xff", fill_cache=False)
    it.seek_to_last()
    assert it.key() == b"\xff\xff"
    it.prev()
    assert it.key() == b"\xff"
    it.prev()
    assert not it.valid()
    it.status()

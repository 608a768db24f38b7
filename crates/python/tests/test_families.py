"""Column families: create, drop, list, handles, the cf= keyword of reads, writes, iterators,
batches, snapshots, flush, compaction and properties, reopening with the families named."""

import pytest

import talus


def test_families_are_separate_keyspaces(db):
    assert [c.name for c in db.column_families()] == ["default"]
    users = db.create_column_family("users")
    assert isinstance(users, talus.ColumnFamily)
    assert (users.name, users.id) == ("users", 1)
    assert "users" in repr(users)
    db.put(b"k", b"in default")
    db.put(b"k", b"in users", cf=users)
    assert db.get(b"k") == b"in default"
    assert db.get(b"k", cf=users) == b"in users"
    assert db.get(b"missing", b"dflt", cf=users) == b"dflt"
    db.put(b"a", b"1", cf=users, sync=True)
    db.put(b"b", b"2", cf=users, disable_wal=True)
    assert db.multi_get([b"a", b"k", b"zz"], cf=users) == [b"1", b"in users", None]
    assert db.multi_get([b"a", b"k"]) == [None, b"in default"]
    assert list(db.items(cf=users)) == [(b"a", b"1"), (b"b", b"2"), (b"k", b"in users")]
    assert list(db.keys(b"b", cf=users)) == [b"b", b"k"]
    assert list(db.values(prefix=b"a", cf=users)) == [b"1"]
    assert list(db.keys(reverse=True, cf=users)) == [b"k", b"b", b"a"]
    assert list(db.keys()) == [b"k"]
    it = db.iterator(cf=users)
    it.seek(b"b")
    assert it.valid() and it.key() == b"b"
    db.delete(b"a", cf=users)
    db.delete_range(b"b", b"c", cf=users)
    assert list(db.keys(cf=users)) == [b"k"]
    assert db.get(b"k") == b"in default"


def test_handles_lookup_and_listing(db, path):
    db.create_column_family("a")
    db.create_column_family("b", write_buffer_size=1 << 20)
    with pytest.raises(talus.InvalidArgument):
        db.create_column_family("a")
    assert db.get_column_family("a").name == "a"
    assert db.get_column_family("nope") is None
    assert [c.name for c in db.column_families()] == ["default", "a", "b"]
    assert talus.DB.list_column_families(path) == ["default", "a", "b"]
    db.drop_column_family("a")
    b = db.get_column_family("b")
    db.put(b"k", b"v", cf=b)
    db.drop_column_family(b)
    assert talus.DB.list_column_families(path) == ["default"]
    with pytest.raises(talus.InvalidArgument):
        db.put(b"k", b"w", cf=b)
    with pytest.raises(talus.InvalidArgument):
        db.drop_column_family("a")
    with pytest.raises(talus.InvalidArgument):
        db.drop_column_family(db.get_column_family("default"))
    with pytest.raises(TypeError):
        db.drop_column_family(3)
    with pytest.raises(talus.NotFound):
        talus.DB.list_column_families(path + "-missing")


def test_batches_span_families_atomically(db):
    a = db.create_column_family("a")
    b = db.create_column_family("b")
    db.put(b"gone", b"x", cf=b)
    with db.write_batch() as wb:
        wb.put(b"k", b"va", cf=a)
        wb.put(b"k", b"vd")
        wb.delete(b"gone", cf=b)
        wb.delete_range(b"a", b"b", cf=a)
        assert len(wb) == 4
    assert db.get(b"k", cf=a) == b"va"
    assert db.get(b"k") == b"vd"
    assert db.get(b"gone", cf=b) is None
    batch = talus.WriteBatch()
    batch.put(b"x", b"1", cf=b)
    with pytest.raises(ValueError):
        with db.write_batch() as wb:
            wb.put(b"never", b"1", cf=a)
            raise ValueError("discard")
    db.write(batch)
    assert db.get(b"x", cf=b) == b"1"
    assert db.get(b"never", cf=a) is None


def test_snapshots_flush_compaction_and_properties(db):
    cf = db.create_column_family("c")
    db.put(b"k", b"old", cf=cf)
    snap = db.snapshot()
    db.put(b"k", b"new", cf=cf)
    assert snap.get(b"k", cf=cf) == b"old"
    assert snap.multi_get([b"k"], cf=cf) == [b"old"]
    assert list(snap.items(cf=cf)) == [(b"k", b"old")]
    assert snap.get(b"k") is None
    snap.close()
    for i in range(100):
        db.put(b"key%03d" % i, b"v", cf=cf)
    assert db.property("rocksdb.estimate-num-keys", cf=cf) == "102"
    assert db.property("rocksdb.estimate-num-keys") == "0"
    db.flush(cf=cf)
    assert db.property("rocksdb.num-files-at-level0", cf=cf) == "1"
    db.compact_range(cf=cf)
    assert db.property("rocksdb.num-files-at-level0", cf=cf) == "0"
    assert "Compaction Stats [c]" in db.property("rocksdb.cfstats", cf=cf)
    assert db.get(b"key050", cf=cf) == b"v"


def test_reopen_names_the_families(path):
    with talus.DB(path) as db:
        cf = db.create_column_family("logs")
        db.put(b"k", b"v", cf=cf)
    with pytest.raises(talus.InvalidArgument, match="logs"):
        talus.DB(path)
    with talus.DB(path, column_families=["logs"]) as db:
        assert db.get(b"k", cf=db.get_column_family("logs")) == b"v"
    with talus.DB(path, read_only=True, column_families=["logs"]) as db:
        assert db.get(b"k", cf=db.get_column_family("logs")) == b"v"
    # A missing family is created with create_missing_column_families.
    with talus.DB(path, column_families=["logs", "new"],
                  create_missing_column_families=True) as db:
        assert [c.name for c in db.column_families()] == ["default", "logs", "new"]


def test_close_closes_the_handles(path):
    db = talus.DB(path)
    cf = db.create_column_family("c")
    db.put(b"k", b"v", cf=cf)
    db.close()
    with pytest.raises(talus.Closed):
        db.get(b"k", cf=cf)
    # The LOCK is free: the handle held nothing of the database.
    with talus.DB(path, column_families=["c"]) as again:
        assert again.get(b"k", cf=again.get_column_family("c")) == b"v"
        with pytest.raises(talus.Closed):
            again.get(b"k", cf=cf)


def test_a_handle_of_another_database_is_refused(tmp_path):
    with talus.DB(str(tmp_path / "one")) as one, talus.DB(str(tmp_path / "two")) as two:
        theirs = two.create_column_family("x")
        one.create_column_family("x")
        with pytest.raises(talus.InvalidArgument):
            one.put(b"k", b"v", cf=theirs)
        with pytest.raises(talus.InvalidArgument):
            one.get(b"k", cf=theirs)


def test_merge_in_a_family_uses_its_options(path):
    with talus.DB(path, merge_operator="stringappend") as db:
        same = db.create_column_family("same")  # the database's options, merge operator too
        plain = db.create_column_family("plain", write_buffer_size=1 << 20)
        db.merge(b"k", b"a", cf=same)
        db.merge(b"k", b"b", cf=same)
        assert db.get(b"k", cf=same) == b"a,b"
        with pytest.raises(talus.NotSupported):
            db.merge(b"k", b"a", cf=plain)
        with db.write_batch() as wb:
            wb.merge(b"k", b"c", cf=same)
        assert db.get(b"k", cf=same) == b"a,b,c"

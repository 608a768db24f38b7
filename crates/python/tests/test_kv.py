"""The key-value API: reads, writes, batches, snapshots, maintenance, options, lifecycle."""

import os

import pytest

import talus


def test_put_get_delete(db):
    db.put(b"k", b"v")
    assert db.get(b"k") == b"v"
    assert db.get(b"missing") is None
    assert db.get(b"missing", b"dflt") == b"dflt"
    db.delete(b"k")
    assert db.get(b"k") is None
    db.delete(b"never-there")  # deleting an absent key is fine


def test_write_options_and_empty_keys(db):
    db.put(b"", b"empty key", sync=True)
    db.put(b"empty value", b"", disable_wal=True)
    assert db.get(b"") == b"empty key"
    assert db.get(b"empty value") == b""
    db.delete(b"", sync=True, disable_wal=False)
    assert db.get(b"") is None


def test_buffer_arguments(db):
    db.put(bytearray(b"ba"), memoryview(b"mv"))
    assert db.get(b"ba") == b"mv"
    assert db.get(memoryview(b"ba")) == b"mv"
    assert isinstance(db.get(bytearray(b"ba")), bytes)
    big = os.urandom(1 << 20)
    db.put(b"big", big)
    assert db.get(b"big") == big


def test_mapping_protocol(db):
    db[b"a"] = b"1"
    assert db[b"a"] == b"1"
    assert b"a" in db and b"b" not in db
    with pytest.raises(KeyError) as e:
        db[b"b"]
    assert e.value.args[0] == b"b"
    del db[b"a"]
    assert b"a" not in db
    db[b"x"] = b"1"
    db[b"y"] = b"2"
    assert list(db) == [b"x", b"y"]


def test_delete_range(db):
    for i in range(10):
        db.put(b"k%d" % i, b"v")
    db.delete_range(b"k2", b"k5", sync=False, disable_wal=False)
    assert list(db.keys()) == [b"k0", b"k1", b"k5", b"k6", b"k7", b"k8", b"k9"]


def test_multi_get(db):
    db.put(b"a", b"1")
    db.put(b"c", b"3")
    assert db.multi_get([b"a", b"b", b"c"]) == [b"1", None, b"3"]
    assert db.multi_get(k for k in [bytearray(b"c"), b"a"]) == [b"3", b"1"]
    assert db.multi_get([]) == []


def test_write_batch_context_manager(db):
    db.put(b"gone", b"x")
    with db.write_batch(sync=True) as wb:
        wb.put(b"a", b"1")
        wb.put(b"b", b"2")
        wb.delete(b"gone")
        wb.delete_range(b"x", b"z")
        assert len(wb) == 4
        assert db.get(b"a") is None  # nothing before the exit
    assert (db.get(b"a"), db.get(b"b"), db.get(b"gone")) == (b"1", b"2", None)
    assert "written" in repr(wb)


def test_write_batch_discarded_on_exception(db):
    with pytest.raises(RuntimeError):
        with db.write_batch() as wb:
            wb.put(b"a", b"1")
            raise RuntimeError("abort")
    assert db.get(b"a") is None


def test_unbound_write_batch(db):
    wb = talus.WriteBatch()
    wb.put(b"a", b"1")
    wb.put(b"b", b"2")
    wb.clear()
    assert len(wb) == 0
    wb.put(b"c", b"3")
    assert "1 ops" in repr(wb)
    db.write(wb, sync=False, disable_wal=False)
    assert db.get(b"c") == b"3"
    with pytest.raises(talus.InvalidArgument):
        talus.WriteBatch().write()


def test_bound_write_batch_explicit_write(db):
    wb = db.write_batch()
    wb.put(b"k", b"v")
    wb.write()
    assert db[b"k"] == b"v"


def test_snapshot_reads(db):
    db.put(b"a", b"old")
    db.put(b"b", b"kept")
    with db.snapshot() as s:
        assert s.sequence > 0
        db.put(b"a", b"new")
        db.delete(b"b")
        db.put(b"c", b"added")
        assert s.get(b"a") == b"old" and s[b"a"] == b"old"
        assert s.get(b"c") is None and s.get(b"c", 0) == 0
        assert b"b" in s and b"c" not in s
        assert s.multi_get([b"a", b"b", b"c"]) == [b"old", b"kept", None]
        assert list(s.items()) == [(b"a", b"old"), (b"b", b"kept")]
        assert list(s.keys(reverse=True)) == [b"b", b"a"]
        assert list(s.values(start=b"b")) == [b"kept"]
        it = s.iterator()
        it.seek_to_last()
        assert it.key() == b"b"
        with pytest.raises(KeyError):
            s[b"c"]
        assert "sequence" in repr(s)
    assert db.get(b"a") == b"new"
    with pytest.raises(talus.Closed):
        s.get(b"a")


def test_flush_compact_property(db):
    for i in range(1000):
        db.put(b"key%05d" % i, b"v" * 100)
    db.flush()
    assert db.property("talus.num-files-at-level0") == "1"
    db.compact_range()
    db.compact_range(b"key00100", b"key00200")
    db.compact_range(start=b"key00900")
    assert db.property("talus.num-files-at-level0") == "0"
    assert int(db.property("rocksdb.estimate-num-keys")) > 0
    assert "Compaction Stats" in db.property("talus.stats")
    assert db.property("no.such.property") is None
    assert db.get(b"key00500") == b"v" * 100


def test_close_and_with(path):
    with talus.DB(path) as db:
        db.put(b"k", b"v")
        assert not db.closed
        assert "closed" not in repr(db)
    assert db.closed
    assert "closed" in repr(db)
    db.close()  # twice is fine
    with talus.DB(path) as db2:  # the LOCK was released
        assert db2.get(b"k") == b"v"
        assert str(db2.path) == path
        assert db2.read_only is False


def test_reopen_keeps_data(path):
    db = talus.DB(path)
    for i in range(100):
        db.put(b"%03d" % i, b"%d" % i)
    db.close()
    db = talus.DB(path, create_if_missing=False)
    assert db.get(b"042") == b"42"
    db.close()


def test_read_only(path):
    with talus.DB(path) as db:
        db.put(b"k", b"v")
    ro = talus.DB(path, read_only=True)
    assert ro.read_only and ro.get(b"k") == b"v"
    with pytest.raises(talus.NotSupported):
        ro.put(b"k", b"w")
    with pytest.raises(talus.NotSupported):
        ro.flush()
    writer = talus.DB(path)  # a read-only open takes no LOCK
    writer.put(b"k2", b"v2")
    writer.close()
    ro.close()


def test_missing_database(tmp_path):
    with pytest.raises(talus.NotFound):
        talus.DB(str(tmp_path / "nope"), create_if_missing=False)
    with pytest.raises(talus.NotFound):
        talus.DB(str(tmp_path / "nope"), read_only=True)


def test_destroy_db(path):
    with talus.DB(path) as db:
        db.put(b"k", b"v")
    talus.destroy_db(path)
    with talus.DB(path) as db:
        assert db.get(b"k") is None


def test_destroy_db_refuses_open_database(db, path):
    with pytest.raises(talus.Locked):
        talus.destroy_db(path)
    assert db.get(b"k") is None


def test_options_by_name_string_and_file(path, tmp_path):
    db = talus.DB(path, write_buffer_size=1 << 20, compression="kZSTD", paranoid_checks=True,
                  max_bytes_for_level_multiplier=8.0)
    db.put(b"k", b"v")
    db.close()
    options_file = sorted(p for p in os.listdir(path) if p.startswith("OPTIONS-"))[-1]
    text = open(os.path.join(path, options_file)).read()
    assert "write_buffer_size=1048576" in text and "kZSTD" in text
    # The file Talus wrote reads back; the string and the keywords override it, in that order.
    other = str(tmp_path / "other")
    db = talus.DB(other, options_file=os.path.join(path, options_file),
                  options="write_buffer_size=2M;max_write_buffer_number=3",
                  max_write_buffer_number=5)
    db.close()
    text = open(os.path.join(other, sorted(
        p for p in os.listdir(other) if p.startswith("OPTIONS-"))[-1])).read()
    assert "write_buffer_size=2097152" in text and "max_write_buffer_number=5" in text
    assert "kZSTD" in text


def test_version():
    assert talus.__version__.count(".") == 2


def test_create_checkpoint(db, tmp_path):
    for i in range(1000):
        db.put(b"key%05d" % i, b"v%d" % i)
    cp = tmp_path / "cp"
    db.create_checkpoint(cp)
    db.put(b"key00001", b"later")
    with pytest.raises(talus.InvalidArgument):
        db.create_checkpoint(str(cp))
    with talus.DB(str(cp), create_if_missing=False) as copy:
        assert copy.get(b"key00001") == b"v1"
        assert len(list(copy.keys())) == 1000


def test_backup_engine(db, tmp_path):
    for i in range(1000):
        db.put(b"key%05d" % i, b"v%d" % i)
    db.flush()
    with talus.BackupEngine(tmp_path / "bk") as be:
        first = be.create_new_backup(db)
        db.put(b"key00001", b"later")
        second = be.create_new_backup(db)
        infos = be.get_backup_info()
        assert [i["backup_id"] for i in infos] == [first, second]
        assert infos[1]["sequence"] > infos[0]["sequence"] and infos[0]["num_files"] > 0
        be.verify_backup(first)
        with pytest.raises(talus.NotFound):
            be.verify_backup(99)
        be.restore_db_from_backup(first, tmp_path / "r1")
        be.restore_db_from_latest_backup(str(tmp_path / "r2"))
        with pytest.raises(talus.Locked):
            talus.BackupEngine(tmp_path / "bk")
        be.purge_old_backups(1)
        assert [i["backup_id"] for i in be.get_backup_info()] == [second]
    with pytest.raises(talus.Closed):
        be.get_backup_info()
    with talus.DB(str(tmp_path / "r1"), create_if_missing=False) as r1:
        assert r1.get(b"key00001") == b"v1"
    with talus.DB(str(tmp_path / "r2"), create_if_missing=False) as r2:
        assert r2.get(b"key00001") == b"later"
        assert len(list(r2.keys())) == 1000
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(talus.InvalidArgument):
        talus.BackupEngine(tmp_path / "other")
    assert (tmp_path / "other" / "notes.txt").read_text() == "mine"


def test_merge_with_a_builtin_operator(path):
    d = talus.DB(path, merge_operator="uint64add")
    for i in range(10):
        d.merge(b"hits", (i).to_bytes(8, "little"))
    b = d.write_batch()
    b.merge(b"hits", (100).to_bytes(8, "little"))
    b.write()
    assert int.from_bytes(d.get(b"hits"), "little") == 145
    d.compact_range()
    assert int.from_bytes(d.get(b"hits"), "little") == 145
    d.close()
    d = talus.DB(path, merge_operator="stringappend")
    d.put(b"s", b"a")
    d.merge(b"s", b"b")
    assert d.get(b"s") == b"a,b"
    d.close()
    plain = talus.DB(path)
    with pytest.raises(talus.NotSupported):
        plain.merge(b"s", b"c")
    plain.close()
    with pytest.raises(talus.InvalidArgument):
        talus.DB(path, merge_operator="no-such-operator")

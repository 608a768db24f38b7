"""The table layer: catalog DDL, rows, point reads, scans by index, transactions."""

import datetime

import pytest

import talus

UTC = datetime.timezone.utc


@pytest.fixture
def cat(db):
    return talus.Catalog(db)


@pytest.fixture
def users(cat):
    return cat.create_table(
        "users",
        columns=[("id", "i64"), ("name", "varchar"), ("email", "str", True), ("age", "i32", True),
                 ("score", "f64", True), ("blob", "bytes", True), ("seen", "datetime", True),
                 ("big", "u64", True)],
        primary_key=["id"],
        indexes=[("by_name", ["name"]), ("by_email", ["email"], True),
                 ("by_age_desc", ["age DESC", "name"])],
    )


def test_types_round_trip(users):
    seen = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    row = (1, "ann", "a@x", 30, 1.5, b"\x00\xff", seen, 2**64 - 1)
    users.insert(row)
    assert users.get(1) == row
    users.insert({"id": 2, "name": "bob", "seen": 1_000_000, "blob": bytearray(b"b")})
    got = users.get((2,))
    assert got[:3] == (2, "bob", None)
    assert got[5] == b"b"
    assert got[6] == datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)
    assert users.get(3) is None
    assert users.name == "users" and users.primary_key == ["id"]
    assert users.columns[0] == ("id", "i64", False) and users.columns[2] == ("email", "varchar", True)
    assert [i[0] for i in users.indexes()] == ["by_name", "by_email", "by_age_desc"]
    assert "users" in repr(users)


def test_update_delete_get_many(users):
    users.insert_many([(i, "n%d" % i, None, i, None, None, None, None) for i in range(10)])
    assert users.update((3, "three", None, 3, None, None, None, None)) is True
    assert users.update((99, "x", None, 1, None, None, None, None)) is False
    assert users.delete(4) is True and users.delete(4) is False
    got = users.get_many([3, 4, 5])
    assert got[0][1] == "three" and got[1] is None and got[2][1] == "n5"
    assert users.verify_indexes() == 9


def test_scans(users):
    for i, name in enumerate(["cy", "al", "bo", "al", "di"]):
        users.insert((i, name, None, i * 10, None, None, None, None))
    assert [r[0] for r in users.scan()] == [0, 1, 2, 3, 4]
    assert [r[0] for r in users.scan(reverse=True, limit=2)] == [4, 3]
    assert [r[0] for r in users.scan("PRIMARY", 1, 3)] == [1, 2, 3]
    assert users.scan("by_name", "al", "al", columns=["id", "name"]) == [(1, "al"), (3, "al")]
    assert [r[1] for r in users.scan("by_name", start="b")] == ["bo", "cy", "di"]
    assert [r[3] for r in users.scan("by_age_desc")] == [40, 30, 20, 10, 0]
    assert [r[0] for r in users.scan("by_age_desc", (30,), (10,))] == [3, 2, 1]
    with pytest.raises(talus.NoSuchIndex):
        users.scan("nope")
    with pytest.raises(talus.SchemaError):
        users.scan("by_name", ("a", "b", "c"))


def test_refusals(cat, users):
    users.insert((1, "a", "e@x", None, None, None, None, None))
    with pytest.raises(talus.DuplicateKey, match="PRIMARY"):
        users.insert((1, "b", None, None, None, None, None, None))
    with pytest.raises(talus.DuplicateKey, match="by_email"):
        users.insert((2, "b", "e@x", None, None, None, None, None))
    with pytest.raises(talus.SchemaError, match="name"):
        users.insert((3, None, None, None, None, None, None, None))
    with pytest.raises(talus.SchemaError, match="values"):
        users.insert((3, "x"))
    with pytest.raises(talus.SchemaError, match="nope"):
        users.insert({"id": 3, "name": "x", "nope": 1})
    with pytest.raises(TypeError, match="id"):
        users.insert(("3", "x", None, None, None, None, None, None))
    with pytest.raises(TypeError, match="seen"):
        users.insert((3, "x", None, None, None, None, datetime.datetime(2020, 1, 1), None))
    with pytest.raises(TypeError, match="age"):
        users.insert((3, "x", None, 2**40, None, None, None, None))
    with pytest.raises(TypeError, match="row"):
        users.insert(5)
    with pytest.raises(talus.TableExists):
        cat.create_table("users", [("id", "i64")], ["id"])
    with pytest.raises(talus.NoSuchTable):
        cat.table("nope")
    with pytest.raises(talus.InvalidArgument, match="column type"):
        cat.create_table("t2", [("id", "int128")], ["id"])
    with pytest.raises(TypeError, match="column"):
        cat.create_table("t2", ["id"], ["id"])
    with pytest.raises(TypeError, match="index"):
        cat.create_table("t2", [("id", "i64")], ["id"], ["by_x"])
    assert users.verify_indexes() == 1


def test_ddl(cat, users):
    users.insert((1, "a", None, 5, None, None, None, None))
    cat.create_index("users", "by_age", ["age"], sort_memory_bytes=1 << 20)
    assert users.scan("by_age", 5, 5)[0][0] == 1  # a handle made before the index sees it
    with pytest.raises(talus.IndexExists):
        cat.create_index("users", "by_age", ["age"], unique=True)
    cat.drop_index("users", "by_age")
    with pytest.raises(talus.NoSuchIndex):
        users.scan("by_age")
    assert cat.table("users").get(1)[1] == "a"
    cat.drop_table("users")
    with pytest.raises(talus.NoSuchTable):
        cat.table("users")
    assert "Catalog" in repr(cat)


def test_transactions(cat, users):
    row = lambda i, n: (i, n, None, None, None, None, None, None)  # noqa: E731
    users.insert(row(1, "one"))
    with cat.begin() as tx:
        tx.insert(users, row(2, "two"))
        assert tx.update(users, row(1, "uno")) is True
        assert tx.delete(users, 9) is False
        assert tx.get(users, 2)[1] == "two"
        assert [r[0] for r in tx.scan(users)] == [1]  # its snapshot, not its own writes
        assert users.get(2) is None  # not visible before the commit
    assert users.get(2)[1] == "two" and users.get(1)[1] == "uno"
    with pytest.raises(ZeroDivisionError):
        with cat.begin() as tx:
            tx.delete(users, 1)
            1 / 0
    assert users.get(1) is not None  # rolled back
    tx = cat.begin()
    tx.insert(users, row(3, "three"))
    tx.rollback()
    assert users.get(3) is None
    with pytest.raises(talus.Closed):
        tx.commit()
    with pytest.raises(talus.DuplicateKey):
        cat.begin().insert(users, row(1, "again"))
    assert sorted(cat.stats()) == sorted([
        "rows_inserted", "rows_updated", "rows_deleted", "point_reads",
        "index_entries_written", "blind_index_writes", "rows_read_by_scans"])


def test_conflict(cat, users):
    row = lambda i, n: (i, n, None, None, None, None, None, None)  # noqa: E731
    users.insert(row(1, "one"))
    a = cat.begin()
    b = cat.begin()
    a.update(users, row(1, "by a"))
    b.update(users, row(1, "by b"))
    a.commit()
    with pytest.raises(talus.Conflict):
        b.commit()
    assert users.get(1)[1] == "by a"


def test_tables_close_with_the_database(path):
    db = talus.DB(path)
    cat = talus.Catalog(db, sync=True)
    t = cat.create_table("t", [("id", "i64")], ["id"])
    t.insert((1,))
    tx = cat.begin()
    tx.insert(t, (2,))
    db.close()
    for call in [lambda: t.get(1), lambda: t.insert((3,)), lambda: cat.table("t"),
                 lambda: cat.begin(), lambda: tx.commit(), lambda: t.scan(),
                 lambda: cat.stats()]:
        with pytest.raises(talus.Closed):
            call()
    assert "closed" in repr(t)
    with talus.DB(path) as db:
        t = talus.Catalog(db).table("t")
        assert t.scan() == [(1,)]  # the open transaction was rolled back

"""Talus, a write-optimized LSM storage engine in pure Rust, from Python.

Keys and values are ``bytes``; any bytes-like object (``bytearray``, ``memoryview``) is
accepted on input. Every call that may touch the disk releases the GIL. ``DB.close()`` (or
the ``with`` form) closes every iterator, snapshot, catalog, table and transaction made from
the database; using one afterwards raises ``talus.Closed``.
"""

import os
import pathlib
from datetime import datetime
from typing import (
    Any, Iterable, Iterator as _Iter, Mapping, Optional, Sequence, Tuple, TypeVar, Union, final,
    overload,
)

__version__: str
__all__ = [
    "BackgroundError", "BackupEngine", "Busy", "Catalog", "Closed", "Conflict", "Corruption", "DB",
    "DuplicateKey", "Error", "IOError", "IndexExists", "InvalidArgument", "Iterator", "Locked",
    "NoSuchIndex", "NoSuchTable", "NotFound", "NotSupported", "RawIterator", "SchemaError",
    "Snapshot", "Table", "TableError", "TableExists", "Transaction", "WriteBatch", "destroy_db",
]

_Buffer = Union[bytes, bytearray, memoryview]
_OptionValue = Union[bool, int, float, str]
_Column = Union[Tuple[str, str], Tuple[str, str, bool]]
_IndexSpec = Union[Tuple[str, Sequence[str]], Tuple[str, Sequence[str], bool]]
_Value = Union[None, int, float, bytes, str, datetime]
_Row = Union[Sequence[Any], Mapping[str, Any]]
_Key = Any  # one value, or a tuple of values for a key of several columns
_T = TypeVar("_T")

class Error(Exception):
    """Base class of every error Talus raises."""

class Corruption(Error):
    """Bytes on disk failed a checksum or did not decode; the message names the file and offset."""

class Locked(Error):
    """The database is open in another handle or process (its LOCK is held)."""

class NotFound(Error):
    """A database or file does not exist (never a key)."""

class InvalidArgument(Error):
    """An argument the engine refuses: an option out of range, a key or value over the limit."""

class Busy(Error):
    """The operation is not possible right now."""

class IOError(Error):
    """An operating-system IO error, with what was being done."""

class NotSupported(Error):
    """Not supported by this handle (a write to a database opened read-only)."""

class BackgroundError(Error):
    """A flush, compaction or WAL write failed; the database refuses writes until reopened."""

class Closed(Error):
    """The object (or the database it came from) is closed, or the batch was already written."""

class TableError(Error):
    """Base class of the table layer's refusals."""

class DuplicateKey(TableError):
    """The primary key or a unique index has it."""

class SchemaError(TableError):
    """A row or key does not fit the table's schema."""

class TableExists(TableError):
    """create_table of a name that exists."""

class NoSuchTable(TableError):
    """No table of that name."""

class IndexExists(TableError):
    """create_index of a name that exists."""

class NoSuchIndex(TableError):
    """No index of that name (or still building)."""

class Conflict(TableError):
    """A transaction wrote a primary key another commit wrote after it began; nothing was written."""

def destroy_db(path: Union[str, os.PathLike[str]], **options: _OptionValue) -> None:
    """Destroy the database in ``path`` (only a database, and not one that is open)."""

@final
class DB:
    """An open database.

    ``options`` are RocksDB's names as keyword arguments (``write_buffer_size=64 << 20``,
    ``compression="kZSTD"``), a RocksDB option string (``options="k=v;k=v"``) or an OPTIONS file
    (``options_file=``); later wins: file, string, keywords. ``create_if_missing`` defaults to
    True. ``read_only=True`` opens without writing anything (beside a writer too).
    ``column_families=["a", ...]`` names the database's families other than ``default`` (each
    opened with these options; a database with families must name them all, as RocksDB's);
    every read, write, iterator, flush, compaction and property takes ``cf=`` (a
    ``ColumnFamily``; ``default`` without it).
    """

    def __new__(
        cls,
        path: Union[str, os.PathLike[str]],
        *,
        create_if_missing: Optional[bool] = None,
        read_only: bool = False,
        options: Optional[str] = None,
        options_file: Optional[str] = None,
        ignore_unknown_options: bool = False,
        column_families: Optional[list[str]] = None,
        **kwargs: _OptionValue,
    ) -> DB: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def closed(self) -> bool: ...
    @property
    def read_only(self) -> bool: ...
    @overload
    def get(self, key: _Buffer, *, cf: Optional[ColumnFamily] = None) -> Optional[bytes]: ...
    @overload
    def get(self, key: _Buffer, default: _T, *, cf: Optional[ColumnFamily] = None) -> Union[bytes, _T]: ...
    def put(self, key: _Buffer, value: _Buffer, *, sync: bool = False, disable_wal: bool = False, cf: Optional[ColumnFamily] = None) -> None: ...
    def merge(self, key: _Buffer, value: _Buffer, *, sync: bool = False, disable_wal: bool = False, cf: Optional[ColumnFamily] = None) -> None:
        """Merge ``value`` into ``key`` through the merge operator the database was opened with
        (``merge_operator="uint64add"``, ``"stringappend"``, ``"put"``, ``"max"``)."""
    def delete(self, key: _Buffer, *, sync: bool = False, disable_wal: bool = False, cf: Optional[ColumnFamily] = None) -> None: ...
    def delete_range(self, start: _Buffer, stop: _Buffer, *, sync: bool = False, disable_wal: bool = False, cf: Optional[ColumnFamily] = None) -> None:
        """Delete every key in ``[start, stop)``."""
    def multi_get(self, keys: Iterable[_Buffer], *, cf: Optional[ColumnFamily] = None) -> list[Optional[bytes]]:
        """The values of ``keys`` in order (``None`` where absent), from one consistent view."""
    def __getitem__(self, key: _Buffer, /) -> bytes: ...
    def __setitem__(self, key: _Buffer, value: _Buffer, /) -> None: ...
    def __delitem__(self, key: _Buffer, /) -> None: ...
    def __contains__(self, key: _Buffer, /) -> bool: ...
    def __iter__(self) -> Iterator[bytes]: ...
    def write(self, batch: WriteBatch, *, sync: bool = False, disable_wal: bool = False) -> None: ...
    def write_batch(self, *, sync: bool = False, disable_wal: bool = False) -> WriteBatch:
        """A batch bound to this database; ``with db.write_batch() as b:`` writes on a clean exit."""
    def snapshot(self) -> Snapshot: ...
    def items(
        self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *,
        prefix: Optional[_Buffer] = None, reverse: bool = False, fill_cache: bool = True,
        cf: Optional[ColumnFamily] = None,
    ) -> Iterator[Tuple[bytes, bytes]]:
        """Pairs with ``start <= key < stop`` (or under ``prefix``), ascending or ``reverse``."""
    def keys(
        self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *,
        prefix: Optional[_Buffer] = None, reverse: bool = False, fill_cache: bool = True,
        cf: Optional[ColumnFamily] = None,
    ) -> Iterator[bytes]: ...
    def values(
        self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *,
        prefix: Optional[_Buffer] = None, reverse: bool = False, fill_cache: bool = True,
        cf: Optional[ColumnFamily] = None,
    ) -> Iterator[bytes]: ...
    def iterator(
        self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *,
        prefix: Optional[_Buffer] = None, fill_cache: bool = True,
        cf: Optional[ColumnFamily] = None,
    ) -> RawIterator:
        """A seekable cursor within the bounds, not positioned."""
    def create_checkpoint(self, path: Union[str, os.PathLike[str]]) -> None:
        """An openable copy of the database as it is now, in the new directory ``path``
        (table files hard-linked). ``talus.InvalidArgument`` if ``path`` exists."""
    def flush(self, *, cf: Optional[ColumnFamily] = None) -> None:
        """Flush the memtables (every family's: they are cut together)."""
    def compact_range(self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *, cf: Optional[ColumnFamily] = None) -> None: ...
    def property(self, name: str, *, cf: Optional[ColumnFamily] = None) -> Optional[str]:
        """``talus.stats``, ``rocksdb.estimate-num-keys``, ... of family ``cf`` (``default``), or None."""
    def create_column_family(self, name: str, **options: _OptionValue) -> ColumnFamily:
        """Create the family ``name`` (options by RocksDB's names; without any, the
        database's). ``talus.InvalidArgument`` if it exists."""
    def drop_column_family(self, cf: Union[ColumnFamily, str]) -> None:
        """Drop a family (not ``default``); its handles still read what it held."""
    def get_column_family(self, name: str) -> Optional[ColumnFamily]: ...
    def column_families(self) -> list[ColumnFamily]:
        """The live families' handles, ``default`` first."""
    @staticmethod
    def list_column_families(path: Union[str, os.PathLike[str]]) -> list[str]:
        """The families of the database in ``path``, ``default`` first (RocksDB's
        ``ListColumnFamilies``). ``talus.NotFound`` if there is none."""
    def close(self) -> None: ...
    def __enter__(self) -> DB: ...
    def __exit__(self, *exc: object) -> bool: ...

@final
class ColumnFamily:
    """A column family of an open database (``db.create_column_family``,
    ``db.get_column_family``); closed with the database."""

    @property
    def name(self) -> str: ...
    @property
    def id(self) -> int: ...

@final
class WriteBatch:
    """Writes applied atomically; used up by its write."""

    def __new__(cls) -> WriteBatch: ...
    def put(self, key: _Buffer, value: _Buffer, *, cf: Optional[ColumnFamily] = None) -> None: ...
    def merge(self, key: _Buffer, value: _Buffer, *, cf: Optional[ColumnFamily] = None) -> None: ...
    def delete(self, key: _Buffer, *, cf: Optional[ColumnFamily] = None) -> None: ...
    def delete_range(self, start: _Buffer, stop: _Buffer, *, cf: Optional[ColumnFamily] = None) -> None: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...
    def write(self) -> None:
        """Write to the database it is bound to (``db.write_batch()``)."""
    def __enter__(self) -> WriteBatch: ...
    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> bool: ...

@final
class Snapshot:
    """A consistent read view; ``with db.snapshot() as s:`` releases it on exit."""

    @property
    def sequence(self) -> int: ...
    @overload
    def get(self, key: _Buffer, *, cf: Optional[ColumnFamily] = None) -> Optional[bytes]: ...
    @overload
    def get(self, key: _Buffer, default: _T, *, cf: Optional[ColumnFamily] = None) -> Union[bytes, _T]: ...
    def multi_get(self, keys: Iterable[_Buffer], *, cf: Optional[ColumnFamily] = None) -> list[Optional[bytes]]: ...
    def __getitem__(self, key: _Buffer, /) -> bytes: ...
    def __contains__(self, key: _Buffer, /) -> bool: ...
    def items(
        self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *,
        prefix: Optional[_Buffer] = None, reverse: bool = False, fill_cache: bool = True,
        cf: Optional[ColumnFamily] = None,
    ) -> Iterator[Tuple[bytes, bytes]]: ...
    def keys(
        self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *,
        prefix: Optional[_Buffer] = None, reverse: bool = False, fill_cache: bool = True,
        cf: Optional[ColumnFamily] = None,
    ) -> Iterator[bytes]: ...
    def values(
        self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *,
        prefix: Optional[_Buffer] = None, reverse: bool = False, fill_cache: bool = True,
        cf: Optional[ColumnFamily] = None,
    ) -> Iterator[bytes]: ...
    def iterator(
        self, start: Optional[_Buffer] = None, stop: Optional[_Buffer] = None, *,
        prefix: Optional[_Buffer] = None, fill_cache: bool = True,
        cf: Optional[ColumnFamily] = None,
    ) -> RawIterator: ...
    def close(self) -> None: ...
    def __enter__(self) -> Snapshot: ...
    def __exit__(self, *exc: object) -> bool: ...

@final
class Iterator(_Iter[_T]):
    """What ``items()``, ``keys()`` and ``values()`` return."""

    def __iter__(self) -> Iterator[_T]: ...
    def __next__(self) -> _T: ...
    def close(self) -> None: ...
    def __enter__(self) -> Iterator[_T]: ...
    def __exit__(self, *exc: object) -> bool: ...

@final
class RawIterator:
    """A seekable cursor (RocksDB's iterator)."""

    def valid(self) -> bool: ...
    def seek_to_first(self) -> None: ...
    def seek_to_last(self) -> None: ...
    def seek(self, key: _Buffer) -> None: ...
    def seek_for_prev(self, key: _Buffer) -> None: ...
    def next(self) -> None: ...
    def prev(self) -> None: ...
    def key(self) -> bytes: ...
    def value(self) -> bytes: ...
    def item(self) -> Tuple[bytes, bytes]: ...
    def status(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> RawIterator: ...
    def __exit__(self, *exc: object) -> bool: ...

@final
class BackupEngine:
    """Incremental backups of databases in one directory (RocksDB's ``BackupEngine``): table
    files shared between backups are copied once, every file is checksummed. Holds the
    directory's LOCK until closed."""

    def __new__(cls, path: Union[str, os.PathLike[str]]) -> BackupEngine: ...
    def create_new_backup(self, db: DB) -> int:
        """Backs ``db`` up; returns the new backup's id."""
    def get_backup_info(self) -> list[dict[str, int]]:
        """Oldest first: ``backup_id``, ``timestamp``, ``size``, ``num_files``, ``sequence``."""
    def verify_backup(self, backup_id: int) -> None:
        """``talus.Corruption`` naming the file whose size or checksum differs."""
    def restore_db_from_backup(
        self, backup_id: int, db_dir: Union[str, os.PathLike[str]]
    ) -> None: ...
    def restore_db_from_latest_backup(self, db_dir: Union[str, os.PathLike[str]]) -> None: ...
    def delete_backup(self, backup_id: int) -> None: ...
    def purge_old_backups(self, num_backups_to_keep: int) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> BackupEngine: ...
    def __exit__(self, *exc: object) -> bool: ...

@final
class Catalog:
    """The tables of one database (MyRocks's layout: rows and secondary indexes as keys).

    Column types: ``i64``, ``u64``, ``i32``, ``f64``, ``bytes``, ``varchar`` (``str``),
    ``datetime`` (an aware ``datetime`` or int microseconds; reads back as UTC ``datetime``).
    """

    def __new__(cls, db: DB, *, sync: bool = False, disable_wal: bool = False) -> Catalog:
        """``talus.Busy`` if another Catalog of ``db`` is open: one per database."""
    def create_table(
        self, name: str, columns: Iterable[_Column], primary_key: Sequence[str],
        indexes: Optional[Iterable[_IndexSpec]] = None,
    ) -> Table: ...
    def table(self, name: str) -> Table: ...
    def drop_table(self, name: str) -> None: ...
    def create_index(
        self, table: str, name: str, columns: Sequence[str], *, unique: bool = False,
        sort_memory_bytes: Optional[int] = None,
    ) -> None: ...
    def drop_index(self, table: str, index: str) -> None: ...
    def begin(self) -> Transaction: ...
    def stats(self) -> dict[str, int]: ...

@final
class Table:
    """One table: rows in as sequences or mappings, out as tuples."""

    @property
    def name(self) -> str: ...
    @property
    def columns(self) -> list[Tuple[str, str, bool]]: ...
    @property
    def primary_key(self) -> list[str]: ...
    def indexes(self) -> list[Tuple[str, list[str], bool]]: ...
    def insert(self, row: _Row) -> None: ...
    def insert_many(self, rows: Iterable[_Row]) -> None: ...
    def get(self, pk: _Key) -> Optional[Tuple[_Value, ...]]: ...
    def get_many(self, pks: Iterable[_Key]) -> list[Optional[Tuple[_Value, ...]]]: ...
    def update(self, row: _Row) -> bool: ...
    def delete(self, pk: _Key) -> bool: ...
    def scan(
        self, index: str = "PRIMARY", start: Optional[_Key] = None, end: Optional[_Key] = None, *,
        reverse: bool = False, columns: Optional[Sequence[str]] = None, limit: Optional[int] = None,
    ) -> list[Tuple[_Value, ...]]:
        """Rows whose leading index columns lie between the prefixes ``start`` and ``end`` (inclusive)."""
    def verify_indexes(self) -> int: ...

@final
class Transaction:
    """Snapshot isolation, optimistic on primary keys (first committer wins; write skew possible); ``with cat.begin() as tx:`` commits on a clean exit."""

    def insert(self, table: Table, row: _Row) -> None: ...
    def update(self, table: Table, row: _Row) -> bool: ...
    def delete(self, table: Table, pk: _Key) -> bool: ...
    def get(self, table: Table, pk: _Key) -> Optional[Tuple[_Value, ...]]: ...
    def scan(
        self, table: Table, index: str = "PRIMARY", start: Optional[_Key] = None,
        end: Optional[_Key] = None, *, reverse: bool = False,
        columns: Optional[Sequence[str]] = None, limit: Optional[int] = None,
    ) -> list[Tuple[_Value, ...]]: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def __enter__(self) -> Transaction: ...
    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> bool: ...

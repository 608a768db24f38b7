"""kill -9 of a Python process writing to a database: the reopened database holds every write
the process saw acknowledged (sync=False survives a process crash), in order, with no holes."""

import os
import signal
import subprocess
import sys

import talus

WRITER = r"""
import sys, talus
db = talus.DB(sys.argv[1])
cat = talus.Catalog(db)
try:
    t = cat.table("rows")
except talus.NoSuchTable:
    t = cat.create_table("rows", [("id", "i64"), ("v", "str")], ["id"], [("by_v", ["v"])])
start = int(sys.argv[2])
i = start
while True:
    with db.write_batch() as wb:
        wb.put(b"k%08d" % i, b"v%d" % i)
        wb.put(b"last", b"%d" % i)
    t.insert((i, "v%d" % (i % 10)))
    print(i, flush=True)
    i += 1
"""


def crash_after(path, start, acked_at_least):
    p = subprocess.Popen([sys.executable, "-c", WRITER, path, str(start)],
                         stdout=subprocess.PIPE, text=True)
    last = None
    for line in p.stdout:
        last = int(line)
        if last >= start + acked_at_least:
            break
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert p.returncode == -signal.SIGKILL
    return last


def check(path, acked):
    with talus.DB(path) as db:
        last = int(db.get(b"last"))
        assert last >= acked, "an acknowledged write was lost"
        keys = list(db.keys(b"k", b"l"))
        assert keys == [b"k%08d" % i for i in range(last + 1)], "a hole in the history"
        t = talus.Catalog(db).table("rows")
        rows = t.scan()
        assert [r[0] for r in rows][: acked + 1] == list(range(acked + 1))
        assert len(rows) in (last, last + 1)  # the kill may fall between a batch and its row
        assert t.verify_indexes() == len(rows)
        return len(rows)


def test_kill_9_and_reopen(path):
    talus.DB(path).close()
    acked = crash_after(path, 0, 300)
    n = check(path, acked)
    acked = crash_after(path, n, 300)  # again, on the recovered database
    check(path, acked)

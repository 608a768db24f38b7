"""Splits a callgrind profile's instructions between Talus's layers, so a regression "above the
storage engine" (post 004's question) can be told from one in it.

Layers by the source file of each function (debug info): `engine` (crates/engine/), `table`
(crates/table/), and `rest` (everything else: the benchmark's own code in crates/cli, std,
libc, SQLite). A layer's cost is inclusive: what its functions run plus what they call (malloc,
memcpy, ...), taken from callgrind's call edges that cross into the layer:

- engine = the inclusive cost of every call from a non-engine function into an engine function;
- table = the inclusive cost of every call from outside the table layer (and outside the engine)
  into a table function, less the engine calls made from table functions;
- rest = the total less both.

Approximations, stated: code inlined across a crate boundary counts for the crate of the
function it was inlined into; a call back from the engine into a table-layer function (a
comparator) stays in the engine's share; a chain that crosses into the engine twice (engine ->
table callback -> engine) counts the inner part twice, so shares are clamped to the total.

Used by regress_run.Counter (callgrind) and regress.py's counted pass; `python3
bench/callgrind_layers.py FILE` prints the split of one profile.
"""
import re
import sys

LAYERS = ("table", "engine", "rest")
_NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def layer_of(path):
    if path is None:
        return "rest"
    if "crates/engine/" in path:
        return "engine"
    if "crates/table/" in path:
        return "table"
    return "rest"


def _name(table, value):
    """Callgrind's name compression: `(id) name` defines, `(id)` refers."""
    m = _NAMED.match(value.strip())
    if not m:
        return value.strip()
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
    return table.get(m.group(1))


def _cost(line):
    parts = line.split()
    try:
        return int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return 0


def split(text):
    """`{"total", "table", "engine", "rest"}` instructions of a callgrind output file's text."""
    files, fns = {}, {}
    fn_file = {}
    # Pass 1: the name tables (a file name may first appear in any of fl/fi/fe/cfi/cfl, a
    # function's in fn/cfn) and each function's file: the `fl=` it is defined under, else the
    # `cfi=`/`cfl=` of a call to it.
    fl, cfile, called_in = None, None, {}
    for line in text.splitlines():
        key = line.split("=", 1)[0] if "=" in line[:5] else ""
        if key == "fl":
            fl = _name(files, line[3:])
        elif key in ("fi", "fe"):
            _name(files, line[3:])
        elif key in ("cfi", "cfl"):
            cfile = _name(files, line[4:])
        elif key == "fn":
            fn_file.setdefault(_name(fns, line[3:]), fl)
            cfile = None
        elif key in ("cfn", "cfni"):
            name = _name(fns, line.split("=", 1)[1])
            called_in.setdefault(name, cfile or fl)
            cfile = None
    for name, f in called_in.items():
        fn_file.setdefault(name, f)
    # Pass 2: self costs and the call edges' inclusive costs. Names were all defined in pass 1
    # (a compressed name is defined once, at its first use), so the tables are complete.
    total = 0
    into = {"engine": 0, "table": 0, "table_to_engine": 0}
    fl, caller, callee, in_call = None, None, None, False
    for line in text.splitlines():
        if not line or line[0] in "#":
            continue
        if line.startswith("fl="):
            fl = _name(files, line[3:])
        elif line.startswith("fn="):
            caller = layer_of(fn_file.get(_name(fns, line[3:]), fl))
        elif line.startswith(("cfn=", "cfni=")):
            name = _name(fns, line.split("=", 1)[1])
            callee = layer_of(fn_file.get(name))
        elif line.startswith("calls="):
            in_call = True
        elif line.startswith(("summary:", "totals:")):
            pass
        elif line[0].isdigit() or line[0] in "+-*":
            c = _cost(line)
            if in_call:
                in_call = False
                if callee == "engine" and caller != "engine":
                    into["engine"] += c
                    if caller == "table":
                        into["table_to_engine"] += c
                elif callee == "table" and caller == "rest":
                    into["table"] += c
            else:
                total += c
    engine = min(into["engine"], total)
    table = max(0, min(into["table"] - into["table_to_engine"], total - engine))
    return {"total": total, "table": table, "engine": engine, "rest": total - engine - table}


def split_file(path):
    try:
        with open(path, errors="replace") as f:
            return split(f.read())
    except OSError:
        return None


if __name__ == "__main__":
    s = split_file(sys.argv[1])
    if not s:
        sys.exit(f"cannot read {sys.argv[1]}")
    for k in ("total",) + LAYERS:
        print(f"{k:<8}{s[k]:>16,}  {100 * s[k] / max(1, s['total']):5.1f}%")

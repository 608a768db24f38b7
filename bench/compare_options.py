"""The OPTIONS-file check of bench/compare.py: each engine writes its OPTIONS file on an empty
database, and the options both engines have are compared (issue 12: equal options, or the run is
refused unless the differences are named). Imported by compare.py only."""
import configparser
import glob
import os
import re
import shutil
import subprocess
import sys

# Options that cannot matter for the suite, or that one engine cannot set, with the reason; a
# difference in them is shown but does not stop the run.
NOT_APPLICABLE = {
    "compaction_options_fifo.": "FIFO compaction options; the suite runs leveled compaction",
    "index_shortening": "RocksDB's C API cannot set it (kShortenSeparators); db_bench's default "
                        "also shortens each file's last key (one index entry per file)",
}

OPTION_SECTIONS = ("DBOptions", "CFOptions \"default\"", "TableOptions/BlockBasedTable \"default\"")


def read_options_file(db):
    """The options of the newest OPTIONS-NNNNNN in `db`, as {(section, name): value}."""
    files = sorted(glob.glob(os.path.join(db, "OPTIONS-*")),
                   key=lambda p: int(re.sub(r"\D", "", os.path.basename(p)) or 0))
    files = [f for f in files if not f.endswith(".dbtmp")]
    if not files:
        return None, None
    cp = configparser.ConfigParser(interpolation=None, strict=False, comment_prefixes=("#",))
    cp.optionxform = str
    with open(files[-1]) as fh:
        cp.read_string(fh.read())
    opts = {}
    for sec in cp.sections():
        if sec in OPTION_SECTIONS:
            for k, v in cp.items(sec):
                k, v = k.strip(), v.strip()
                if v.startswith("{") and v.endswith("}"):
                    # A nested struct (compaction_options_universal={a=1;b=2}): its fields.
                    for part in v[1:-1].split(";"):
                        if "=" in part:
                            sk, sv = part.split("=", 1)
                            opts[(sec, f"{k}.{sk.strip()}")] = normalize(sk.strip(), sv.strip())
                else:
                    opts[(sec, k)] = normalize(k, v)
    return files[-1], opts


def normalize(name, value):
    """Values both engines write in different but equivalent spellings."""
    if value in ("true", "false"):
        return value
    try:
        x = float(value)
        return repr(x)
    except ValueError:
        pass
    if name == "filter_policy":
        # RocksDB 10 writes bloomfilter:10:false; older ones rocksdb.BuiltinBloomFilter.
        m = re.match(r"bloomfilter:([0-9.]+):", value)
        return f"bloom:{float(m.group(1))}" if m else value
    return value


def options_check(a, engines, base, common, command, refuse=True):
    """Writes each engine's OPTIONS file on an empty database (`command` makes the command line,
    as compare.py's) and diffs the options they share; exits if some differ and `refuse`."""
    found = {}
    for e in engines:
        if e == "memory":
            continue
        db = os.path.join(base, f"options-{e}")
        shutil.rmtree(db, ignore_errors=True)
        args = command(a, e, 1, db, "fillseq", [], False, common)
        p = subprocess.run(args, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{e} failed writing its OPTIONS file:\n{p.stdout}{p.stderr}")
        path, opts = read_options_file(db)
        if opts is None:
            print(f"warning: {e} wrote no OPTIONS file", file=sys.stderr)
        else:
            found[e] = (path, opts)
        shutil.rmtree(db, ignore_errors=True)
    accepted = set(x for x in a.accept_option_diff.split(",") if x)
    lines = []
    refused = []
    names = list(found)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            ox, oy = found[x][1], found[y][1]
            shared = sorted(set(ox) & set(oy))
            for key in shared:
                if ox[key] != oy[key]:
                    name = key[1]
                    line = f"  {name}: {x}={ox[key]} {y}={oy[key]}"
                    why = [r for p, r in NOT_APPLICABLE.items() if name.startswith(p)]
                    if {ox[key], oy[key]} & {"bloomfilter"} and all(
                            v.startswith("bloom") for v in (ox[key], oy[key])):
                        # The C API's filter wrapper serializes without its bits per key.
                        why = ["RocksDB's C API filter wrapper does not write its bits"]
                    if why:
                        lines.append(line + f"  (not applicable: {why[0]})")
                    elif name in accepted:
                        lines.append(line + "  (accepted)")
                    else:
                        refused.append(line)
            lines.append(f"  {x} vs {y}: {len(shared)} options in common, compared")
    print("Options (from each engine's OPTIONS file):")
    for e, (path, _) in found.items():
        print(f"  {e}: {path}")
    for line in lines:
        print(line)
    if refused and not refuse:
        print("Options that differ (each engine's defaults: shown, not refused):")
        for line in refused:
            print(line)
    elif refused:
        print("Options differ (pass --accept_option_diff=NAME,... to run anyway):")
        for line in refused:
            print(line)
        sys.exit(2)

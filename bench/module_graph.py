#!/usr/bin/env python3
"""Module dependency graph of a crate's sources, from their `crate::` and `super::` paths.

Usage: bench/module_graph.py crates/engine/src [--depth N] [--cycles]

Every `crate::a::b` path (in `use` lines and inline) and every `super::x` path is an edge from
the file's module to the module it names, cut to the first N path segments (default 1: the
top-level modules; 2: `db::core`, `sst::reader`, ...). Test files (`*tests*.rs`, `tests/`
directories and `#[cfg(test)]` tails of files) are skipped. With --cycles, prints the strongly
connected components with more than one module (the circles) and exits 1 if there is one;
otherwise prints the edges.
"""
import os
import re
import sys

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def module_of(root, path):
    rel = os.path.relpath(path, root)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return rel


def source_lines(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip().startswith("#[cfg(test)]"):
                return
            s = line.strip()
            if s.startswith("//"):
                continue
            yield line


def edges(root, depth):
    out = {}
    for d, _, files in os.walk(root):
        if "tests" in os.path.relpath(d, root).split(os.sep):
            continue
        for name in files:
            if not name.endswith(".rs") or "tests" in name:
                continue
            path = os.path.join(d, name)
            me = module_of(root, path)
            src = ".".join(me[:depth]) or "lib"
            deps = out.setdefault(src, set())
            # `super` is relative to the file's module (a `mod.rs` is its directory's module).
            parent = me[:-1]
            for line in source_lines(path):
                for kind, rest in PATH.findall(line):
                    segs = [s for s in rest.split("::") if s]
                    if kind == "crate":
                        target = segs
                    else:
                        base = parent
                        while segs and segs[0] == "super":
                            base = base[:-1]
                            segs = segs[1:]
                        target = base + segs
                    # Drop the item name: keep module segments only (lowercase).
                    mods = []
                    for s in target:
                        if not s[0].islower():
                            break
                        mods.append(s)
                    if not mods:
                        continue
                    dst = ".".join(mods[:depth])
                    if dst != src and not src.startswith(dst + ".") and mods[0] != "self":
                        deps.add(dst)
    return out


def sccs(graph):
    index, low, stack, on, res, counter = {}, {}, [], set(), [], [0]
    nodes = set(graph) | {d for ds in graph.values() for d in ds}

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            res.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return [c for c in res if len(c) > 1]


def main():
    args = sys.argv[1:]
    root = args[0]
    depth = int(args[args.index("--depth") + 1]) if "--depth" in args else 1
    graph = edges(root, depth)
    if "--cycles" in args:
        found = sccs(graph)
        for c in found:
            print("circle:", " <-> ".join(c))
        sys.exit(1 if found else 0)
    for src in sorted(graph):
        for dst in sorted(graph[src]):
            print(f"{src} -> {dst}")


if __name__ == "__main__":
    main()

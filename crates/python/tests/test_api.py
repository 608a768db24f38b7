"""The package as installed: the type stubs match the module, and every public method of every
class is exercised by these tests (so a method added without a test fails here)."""

import ast
import inspect
import os
import pathlib

import talus

CLASSES = ["DB", "ColumnFamily", "WriteBatch", "Snapshot", "Iterator", "RawIterator", "Catalog",
           "Table", "Transaction"]


def public(cls):
    return {n for n in dir(cls) if not n.startswith("_")}


def stub_tree():
    pkg = pathlib.Path(talus.__file__).parent
    stub = pkg / "__init__.pyi"
    assert stub.exists(), "the wheel carries talus.pyi as the package's __init__.pyi"
    assert (pkg / "py.typed").exists()
    return ast.parse(stub.read_text())


def test_stubs_list_every_name():
    tree = stub_tree()
    names = set()
    members = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        if isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    runtime = {n for n in dir(talus) if not n.startswith("_") and n != "talus"}
    assert runtime - names == set(), "in the module, not in talus.pyi"
    assert {n for n in names if not n.startswith("_")} - runtime == set(), "stubbed, not real"
    for cls in CLASSES:
        missing = public(getattr(talus, cls)) - members[cls]
        assert missing == set(), f"{cls}: not in talus.pyi"


def test_every_method_is_tested():
    here = pathlib.Path(__file__).parent
    text = "".join(p.read_text() for p in here.glob("test_*.py") if p.name != "test_api.py")
    for cls in CLASSES:
        for name in public(getattr(talus, cls)):
            assert f".{name}" in text or f"{name}=" in text, f"{cls}.{name} is never called"


def test_docstrings():
    assert talus.__doc__ and "Talus" in talus.__doc__
    for cls in CLASSES:
        c = getattr(talus, cls)
        for name in public(c):
            attr = getattr(c, name)
            if inspect.isroutine(attr) or isinstance(attr, property):
                assert attr.__doc__, f"{cls}.{name} has no docstring"
    assert talus.destroy_db.__doc__
    assert os.path.basename(talus.__file__) == "__init__.py"

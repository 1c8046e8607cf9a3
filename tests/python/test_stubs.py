"""The type stubs (ksieve/__init__.pyi) against the package they describe: every public name is in them,
every function has the parameters (names, order, keyword-only or not) that it has at run time (the Python
part by inspect, the compiled part by the signature pybind11 writes into its docstring), every public
member of a class is declared, and py.typed marks the package."""
import ast
import inspect
import os
import re

import ksieve

STUB = os.path.join(os.path.dirname(ksieve.__file__), "__init__.pyi")


def stub_tree():
    with open(STUB) as f:
        return ast.parse(f.read())


def stub_params(fn):
    """[(name, keyword_only)] of a def in the stubs, self left out."""
    a = fn.args
    params = [(p.arg, False) for p in a.posonlyargs + a.args] + [(p.arg, True) for p in a.kwonlyargs]
    return [p for p in params if p[0] != "self"]


def runtime_params(obj):
    """[(name, keyword_only)] of a function of the package, self left out."""
    try:
        sig = inspect.signature(obj)
        return [(n, p.kind == p.KEYWORD_ONLY) for n, p in sig.parameters.items() if n != "self"]
    except ValueError:  # compiled: the first line of pybind11's docstring, name(a: T, *, b: T = v) -> R
        line = obj.__doc__.strip().splitlines()[0]
        inside = line[line.index("(") + 1: line.rindex(")")]
        params, keyword_only = [], False
        for part in re.split(r",\s*(?![^\[\]]*\])", inside):
            name = part.split(":")[0].strip()
            if name == "*":
                keyword_only = True
            elif name and name != "self":
                params.append((name, keyword_only))
        return params


def test_every_public_name_is_in_the_stubs():
    tree = stub_tree()
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign)}
    assert set(ksieve.__all__) <= declared, set(ksieve.__all__) - declared
    assert os.path.isfile(os.path.join(os.path.dirname(ksieve.__file__), "py.typed"))


def test_functions_have_the_parameters_of_the_stubs():
    functions = {n.name: n for n in stub_tree().body if isinstance(n, ast.FunctionDef)}
    assert len(functions) >= 6
    for name, fn in functions.items():
        assert stub_params(fn) == runtime_params(getattr(ksieve, name)), name


def test_classes_declare_their_members_and_methods_their_parameters():
    classes = {n.name: n for n in stub_tree().body if isinstance(n, ast.ClassDef)}
    for name, cls in classes.items():
        members = {}
        for node in cls.body:
            if isinstance(node, ast.FunctionDef):
                members[node.name] = node
            elif isinstance(node, ast.AnnAssign):
                members[node.target.id] = None
        runtime = getattr(ksieve, name)
        public = {m for m in dir(runtime) if not m.startswith("_")} - set(dir(RuntimeError))
        assert public <= set(members), (name, public - set(members))
        for member, fn in members.items():
            attr = getattr(runtime, member)
            if fn is not None and callable(attr) and not member.startswith("__"):
                assert stub_params(fn) == runtime_params(attr), (name, member)

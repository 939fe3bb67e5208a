"""The package's modules depend on each other one way (issue 35, point 10):
no module imports, even for type hints only (``if TYPE_CHECKING:``) or
inside a function, a module that imports it back, directly or through
others. Read from the source (src/python/onnxzip), by Python's own parser."""
import ast

from _helpers import REPO

PACKAGE = REPO / "src" / "python" / "onnxzip"


def imported(path):
    """The package's modules (by name, "_archive") that the file imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:  # from . import x / from .x import y
            names.update([node.module] if node.module else [a.name for a in node.names])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("onnxzip"):
            names.add(node.module.partition(".")[2] or "__init__")
        elif isinstance(node, ast.Import):
            names.update(a.name.partition(".")[2] for a in node.names if a.name.startswith("onnxzip."))
    return names


def cycle(graph):
    """A list of modules forming a cycle of the graph (first == last), or None."""
    state = {}  # module -> "open" while on the path, "done" after

    def visit(module, path):
        state[module] = "open"
        for other in sorted(graph.get(module, ())):
            if state.get(other) == "open":
                return path[path.index(other):] + [module, other] if other in path else [module, other]
            if other not in state:
                found = visit(other, path + [module])
                if found:
                    return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [])
            if found:
                return found
    return None


def test_cycle_finder():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_module_imports_one_that_imports_it():
    modules = {p.stem: p for p in PACKAGE.glob("*.py")}
    assert {"_archive", "_package", "_torch"} <= set(modules)
    graph = {name: imported(path) & set(modules) for name, path in modules.items() if name != "__init__"}
    found = cycle(graph)
    assert found is None, f"a circle of imports: {' -> '.join(found)}"

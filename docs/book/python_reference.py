"""Writes the docs book's Python API reference (``src/reference/python.md``) from the installed
package's docstrings and signatures: ``python docs/book/python_reference.py [OUT]`` (``cargo xtask
docs`` runs it; ``tests/python/test_sklearn.py`` checks that the committed page is up to date)."""

import inspect
import sys
from pathlib import Path

import distillrank

HEADER = """# Python reference

Generated from the package's docstrings and signatures by `cargo xtask docs`; a test fails when
this page and the package disagree. Every keyword of `Ranker` and `Setup` is a setting of the
[settings reference](settings.md), by its field's last name.
"""


def signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def doc(obj) -> str:
    return inspect.cleandoc(obj.__doc__ or "").strip()


def block(title: str, text: str) -> str:
    return f"{title}\n\n```text\n{text}\n```\n" if text else f"{title}\n"


def reference() -> str:
    parts = [HEADER]
    for name in distillrank.__all__:
        obj = getattr(distillrank, name)
        if inspect.isclass(obj):
            shown = "" if issubclass(obj, BaseException) else signature(obj)
            parts.append(block(f"## `{name}{shown}`", doc(obj)))
            own = [(n, m) for n, m in vars(obj).items() if not n.startswith("_")]
            for member, value in own:
                if isinstance(value, property):
                    parts.append(block(f"### `{name}.{member}` (property)", doc(value)))
                elif inspect.isfunction(value) or isinstance(value, (classmethod, staticmethod)):
                    function = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
                    parts.append(block(f"### `{name}.{member}{signature(function)}`", doc(function)))
        elif callable(obj):
            parts.append(block(f"## `{name}{signature(obj)}`", doc(obj)))
        elif name == "logger":
            parts.append(f"## `{name}`\n\nThe `logging` logger `\"distillrank\"`: notes and epoch lines at INFO, "
                         "warnings at WARNING.\n")
        else:
            parts.append(f"## `{name}`\n\n`{obj!r}`\n")
    # The module that runs a comparison's jobs on a Dask cluster.
    import distillrank.dask as on_dask

    parts.append(block("## `distillrank.dask`", doc(on_dask)))
    # Every public function the module defines, in the order of its source.
    functions = [f for n, f in vars(on_dask).items()
                 if not n.startswith("_") and callable(f) and getattr(f, "__module__", None) == on_dask.__name__]
    for function in sorted(functions, key=lambda f: f.__code__.co_firstlineno):
        name = function.__name__
        parts.append(block(f"### `distillrank.dask.{name}{signature(function)}`", doc(function)))
    return "\n".join(parts)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "src" / "reference" / "python.md"
    out.write_text(reference())

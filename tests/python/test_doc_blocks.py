"""The README's and the book's shell and Python blocks, run as a reader would run them.

A block runs unless the line above it says why not (`<!-- not run: REASON -->`; tests/docs.rs
checks that every block does one or the other). The README's blocks run first, then the book's
pages in the summary's order, all in one folder, so a page may use what an earlier one saved (the
serving page exports the Python tutorial's student). Shell blocks find `distillrank` on the PATH
(DISTILLRANK_BIN's folder) and the real LETOR data at `target/data`. Where the text after a block
says "It prints N", the block's output must show N as written.
"""

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("DISTILLRANK_BIN", ROOT / "target" / "debug" / "distillrank")).resolve()
BOOK = ROOT / "docs" / "book" / "src"


def pages():
    """README.md, then the book's pages as SUMMARY.md lists them."""
    summary = (BOOK / "SUMMARY.md").read_text()
    listed = re.findall(r"\]\(([^)]+\.md)\)", summary)
    return [ROOT / "README.md"] + [BOOK / page for page in listed]


def blocks(page):
    """(line, language, code, skipped, text after) for each shell or Python block of `page`."""
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = lines[i].strip()
        if not fence.startswith("```"):
            i += 1
            continue
        language = fence[3:].split(",")[0].strip()
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith("```"))
        if language in ("sh", "bash", "python"):
            skipped = i > 0 and lines[i - 1].strip().startswith("<!-- not run:")
            after = " ".join(lines[end + 1 : end + 4])
            found.append((i + 1, language, textwrap.dedent("\n".join(lines[i + 1 : end])), skipped, after))
        i = end + 1
    return found


# Runs one page's blocks in order as a reader would: the Python blocks in one interpreter, so a
# later block uses an earlier one's names; each shell block in bash. A line before each block's
# output tells the outputs apart.
DRIVER = """
import json, subprocess, sys
page, runs = json.load(sys.stdin)
names = {"__name__": "__main__"}
for line, language, code in runs:
    print(f"\\n@@ block {line}", flush=True)
    if language == "python":
        exec(compile(code, f"{page}:{line}", "exec"), names)
        sys.stdout.flush()
    else:
        subprocess.run(["bash", "-euo", "pipefail", "-c", code], check=True)
"""


def runnable_pages():
    return [
        pytest.param(page, [b for b in blocks(page) if not b[3]], id=page.name)
        for page in pages()
        if any(not skipped for _, _, _, skipped, _ in blocks(page))
    ]


@pytest.fixture(scope="module")
def reader_folder(tmp_path_factory):
    """One folder for every page, with the real data where the docs say they are."""
    folder = tmp_path_factory.mktemp("reader")
    (folder / "target").mkdir()
    (folder / "target" / "data").symlink_to(ROOT / "target" / "data")
    return folder


@pytest.mark.parametrize("page, runs", runnable_pages())
def test_the_pages_blocks_run_as_written(reader_folder, page, runs):
    if not BIN.exists():
        pytest.fail(f"{BIN} is missing: build it with `cargo build --bin distillrank` (or set DISTILLRANK_BIN)")
    env = dict(os.environ, PATH=f"{BIN.parent}{os.pathsep}{os.environ['PATH']}")
    where = page.relative_to(ROOT)
    job = json.dumps([str(where), [(line, language, code) for line, language, code, _, _ in runs]])
    done = subprocess.run(
        [sys.executable, "-c", DRIVER], input=job, cwd=reader_folder, env=env, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, f"{where}'s blocks failed:\n{done.stdout}\n{done.stderr}"
    outputs = dict(re.findall(r"@@ block (\d+)\n(.*?)(?=\n@@ block |\Z)", done.stdout, re.S))
    for line, _, _, _, after in runs:
        promised = re.match(r"\s*It prints (-?[0-9]+\.[0-9]+)", after)
        if not promised:
            continue
        figure = promised.group(1)
        decimals = len(figure.split(".")[1])
        printed = [float(v) for v in re.findall(r"-?[0-9]+\.[0-9]+", outputs.get(str(line), ""))]
        assert any(f"{v:.{decimals}f}" == figure for v in printed), (
            f"{where}:{line}: the text says it prints {figure}; it printed {outputs.get(str(line))!r}"
        )


def test_the_walk_finds_the_readmes_python_and_a_shell_block():
    """The README's Python quickstart is among the blocks that run, and so is a shell block."""
    ran = {(page.name, b[1]) for page in pages() for b in blocks(page) if not b[3]}
    assert ("README.md", "python") in ran
    assert any(language == "sh" for _, language in ran)

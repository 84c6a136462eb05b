"""The wheel users install (``cargo xtask wheel``): one abi3 wheel for CPython 3.9 and newer that
installs into a fresh virtual environment, with numpy its only dependency (Dask and pyarrow are
the extras ``dask`` and ``parquet``), and trains and scores there. ``cargo xtask python`` names it in DISTILLRANK_WHEEL (the other tests run against it too,
installed in the test venv)."""

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

WHEEL = os.environ.get("DISTILLRANK_WHEEL")


@pytest.mark.skipif(not WHEEL, reason="DISTILLRANK_WHEEL names no wheel (cargo xtask python sets it)")
def test_the_wheel_installs_in_a_fresh_venv_and_trains(tmp_path):
    wheel = Path(WHEEL)
    assert wheel.exists(), wheel
    # abi3: one wheel serves every CPython from 3.9.
    assert "-cp39-abi3-" in wheel.name, wheel.name
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=600)
    script = (
        "import distillrank, numpy as np\n"
        "X, y, qid = distillrank.mq2008()['train']\n"
        "r = distillrank.Ranker(method='no-distillation', labels='grades', epochs=1, widths=[8], backend='cpu')\n"
        "r.fit(X, y, qid=qid, verbose=False)\n"
        "s = r.predict(X[:5])\n"
        "assert s.shape == (5,) and np.isfinite(s).all()\n"
        "print(distillrank.__version__, distillrank.__file__)\n"
    )
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The package imported is the fresh venv's, not the source tree's.
    assert str(env_dir) in done.stdout, done.stdout
    # Its dependencies are numpy alone: scikit-learn, pandas and the references stay optional.
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True,
                            text=True, check=True).stdout.lower()
    names = {line.split("==")[0] for line in listed.splitlines()}
    assert {"distillrank", "numpy"} <= names and not names & {"scikit-learn", "pandas", "lightgbm"}, names
    # Dask and pyarrow are extras: named in the wheel's metadata, installed only when asked for.
    metadata = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.metadata('distillrank'))"],
                              capture_output=True, text=True, check=True).stdout
    assert "Provides-Extra: dask" in metadata and "Provides-Extra: parquet" in metadata, metadata
    assert "Requires-Dist: dask[distributed]>=2024.1 ; extra == 'dask'" in metadata, metadata
    assert not names & {"dask", "distributed", "pyarrow"}, names

"""A comparison's jobs as tasks on a Dask cluster: the numbers ``distillrank.compare`` gives on one
machine, from the workers of an existing cluster.

The library splits a comparison into its jobs (``distillrank compare``'s own: one seed of some
methods each, every method's teachers before its student inside the job, and methods that share a
teacher in one job), so no job waits for another: each is one task, and the cluster may run them
anywhere in any order. Each worker prepares the data from the setup itself (files on storage every
worker reads, or the bundled data); with ``Setup(prepared_cache=True, ...)`` the first preparation
writes the prepared splits beside the training file and the others map that file instead of
preparing again. The scheduler's side gathers the runs and summarises them with the library's
``compare`` report, paired tests included.

One model's training stays on one worker: the default student steps in about 3.6 ms on 2 cores,
less than an all-reduce of its 142,081 gradients would take on a 1 Gbit/s link, so the cluster
spreads jobs, never steps (the docs book's "On a Dask cluster").

Dask is not a dependency of the package: ``pip install "dask[distributed]"`` where it runs.

    from dask.distributed import Client
    import distillrank, distillrank.dask
    client = Client("tcp://scheduler:8786")
    results = distillrank.dask.compare(distillrank.Setup(source="mq2008"), client)
"""

import importlib as _importlib
import json as _json
from typing import Any, Dict, List, Optional, Sequence

from . import Setup

# The compiled library and the package's setup reader, which the typed stub leaves out.
_distillrank: Any = _importlib.import_module("distillrank._distillrank")
_setup_json: Any = getattr(_importlib.import_module("distillrank"), "_setup_json")


def _run_job(setup: str, job: str, base: Optional[str]) -> str:
    """One job on a worker: the library's ``run_compare_job`` (imported there)."""
    native: Any = _importlib.import_module("distillrank._distillrank")
    return str(native.run_compare_job(setup, job, base))


def _submit(client: Any, text: str, folder: Optional[str]) -> Any:
    """Submits `text`'s jobs; returns (jobs, futures)."""
    jobs = _json.loads(_distillrank.compare_jobs(text, folder))
    futures = [
        client.submit(_run_job, text, _json.dumps(job), folder, pure=False, key=f"distillrank-job-{k}-{_key(text)}")
        for k, job in enumerate(jobs)
    ]
    return jobs, futures


def _key(text: str) -> str:
    """A short key of a setup, so that two comparisons' tasks never share a name."""
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:12]


def compare(setup: Any = None, client: Any = None, base: Optional[str] = None) -> Dict[str, Any]:
    """Runs the comparison ``setup`` describes (a :class:`distillrank.Setup`, a dict or a JSON
    string; None: the defaults) as one Dask task per job on ``client`` (a
    ``dask.distributed.Client``), and returns the object ``distillrank.compare`` returns for the
    same setup: the same figures and paired tests. Relative file names are read against ``base``,
    as in :func:`distillrank.compare`; the workers must read the same paths. A setup of folds runs
    on one machine: give ``distillrank.compare`` it."""
    if client is None:
        raise ValueError("client: a dask.distributed.Client is needed (Client(\"tcp://scheduler:8786\"), or Client(LocalCluster()))")
    text = _setup_json(Setup() if setup is None else setup)
    folder = None if base is None else str(base)
    jobs, futures = _submit(client, text, folder)
    results = [_json.loads(r) for r in client.gather(futures)]
    return _json.loads(_distillrank.summarize_compare(text, _json.dumps(jobs), _json.dumps(results), folder))


def sweep(
    param: str, values: Sequence[float], setup: Any = None, client: Any = None, base: Optional[str] = None
) -> List[Dict[str, Any]]:
    """The comparison of ``setup`` at each of ``values`` of ``param`` (a name of
    :data:`distillrank.SWEEP_PARAMS`), every value's jobs submitted at once: a list of each
    value's results, as :func:`compare` returns them, in the order of ``values``."""
    if client is None:
        raise ValueError("client: a dask.distributed.Client is needed")
    text = _setup_json(Setup() if setup is None else setup)
    name = param.replace("_", "-")
    folder = None if base is None else str(base)
    submitted = []
    for value in values:
        at = _distillrank.sweep_setup(text, name, float(value))
        submitted.append((at, *_submit(client, at, folder)))
    out = []
    for at, jobs, futures in submitted:
        results = [_json.loads(r) for r in client.gather(futures)]
        out.append(_json.loads(_distillrank.summarize_compare(at, _json.dumps(jobs), _json.dumps(results), folder)))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m distillrank compare --setup setup.json --scheduler ADDRESS [--out results.json]``."""
    import argparse
    import pathlib

    p = argparse.ArgumentParser(prog="python -m distillrank", description="A comparison's jobs on a Dask cluster.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="run a setup.json's comparison on a Dask cluster")
    c.add_argument("--setup", required=True, help="a setup.json (as distillrank compare or the page writes it)")
    c.add_argument("--scheduler", required=True, help="the Dask scheduler's address (tcp://HOST:8786)")
    c.add_argument("--out", help="write results.json here (default: print it)")
    args = p.parse_args(argv)
    from dask.distributed import Client

    path = pathlib.Path(args.setup)
    text = path.read_text()
    with Client(args.scheduler) as client:
        results = compare(text, client, base=str(path.resolve().parent))
    shown = _json.dumps(results, indent=1)
    if args.out:
        pathlib.Path(args.out).write_text(shown + "\n")
    else:
        print(shown)
    return 0

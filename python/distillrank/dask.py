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
spreads jobs, never steps (the docs book's "Past one machine: a Dask cluster").

Dask is not a dependency of the package: ``pip install "dask[distributed]"`` where it runs.

    from dask.distributed import Client
    import distillrank, distillrank.dask
    client = Client("tcp://scheduler:8786")
    results = distillrank.dask.compare(distillrank.Setup(source="mq2008"), client)
"""

import importlib as _importlib
import json as _json
import pathlib as _pathlib
import sys as _sys
from typing import Any, Dict, List, Optional, Sequence

from . import Setup

# The compiled library and the package's setup reader, which the typed stub leaves out.
_distillrank: Any = _importlib.import_module("distillrank._distillrank")
_setup_json: Any = getattr(_importlib.import_module("distillrank"), "_setup_json")
_numbers: Any = getattr(_importlib.import_module("distillrank"), "_numbers")
_check_names: Any = getattr(_importlib.import_module("distillrank"), "_check_names")
_say: Any = getattr(_importlib.import_module("distillrank"), "_say")
_warn_by_position: Any = getattr(_importlib.import_module("distillrank"), "_warn_by_position")
_teacher_model: Any = getattr(_importlib.import_module("distillrank"), "_teacher_model")
_check_k: Any = getattr(_importlib.import_module("distillrank"), "_check_k")
_grades: Any = getattr(_importlib.import_module("distillrank"), "_grades")


def _run_job(setup: str, job: str, base: Optional[str]) -> str:
    """One job on a worker: the library's ``run_compare_job`` (imported there)."""
    native: Any = _importlib.import_module("distillrank._distillrank")
    return str(native.run_compare_job(setup, job, base))


def _check_client(client: Any) -> None:
    """Refuses a client that is not one (None, or the scheduler's address itself)."""
    if client is None or not callable(getattr(client, "submit", None)):
        raise ValueError(
            "client: a dask.distributed.Client is needed (Client(\"tcp://scheduler:8786\"), or "
            f"Client(LocalCluster())), not {type(client).__name__}")


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
    _check_client(client)
    text = _setup_json(Setup() if setup is None else setup)
    folder = None if base is None else str(base)
    jobs, futures = _submit(client, text, folder)
    results = [_json.loads(r) for r in client.gather(futures)]
    out = _json.loads(_distillrank.summarize_compare(text, _json.dumps(jobs), _json.dumps(results), folder))
    # What one machine's comparison warns of (the splits, the settings nothing reads), said once
    # here on the client.
    _say([(True, sentence) for key in ("warnings", "unused_settings") for sentence in out.get(key, [])])
    return out


def sweep(
    param: str, values: Sequence[float], setup: Any = None, client: Any = None, base: Optional[str] = None
) -> List[Dict[str, Any]]:
    """The comparison of ``setup`` at each of ``values`` of ``param`` (a name of
    :data:`distillrank.SWEEP_PARAMS`), every value's jobs submitted at once: a list of each
    value's results, as :func:`compare` returns them, in the order of ``values``."""
    _check_client(client)
    if not isinstance(param, str):
        raise TypeError(f"param: expected a name of distillrank.SWEEP_PARAMS, not {type(param).__name__}")
    text = _setup_json(Setup() if setup is None else setup)
    name = param.replace("_", "-")
    folder = None if base is None else str(base)
    # The values as the in-process sweep reads them (numbers, at least one), refused by name.
    values = _numbers(values, "values")
    if not values:
        raise ValueError(f"values: a sweep of {param} needs at least one value")
    submitted = []
    setups = _distillrank.sweep_setups(text, name, [float(v) for v in values])
    # What a sweep warns of before its first value, as one machine's sweep says it.
    _say([(True, sentence) for sentence in _distillrank.sweep_warnings(text, name)])
    for at in setups:
        submitted.append((at, *_submit(client, at, folder)))
    out = []
    for at, jobs, futures in submitted:
        results = [_json.loads(r) for r in client.gather(futures)]
        out.append(_json.loads(_distillrank.summarize_compare(at, _json.dumps(jobs), _json.dumps(results), folder)))
    return out


def _scorer(model: Any, features: Sequence[Any], model_columns: str = "auto") -> Any:
    """A function from a partition's feature matrix and query ids (None when the frame has
    none; a listwise model needs them, the others ignore them) to its scores, for `model`: a fitted
    :class:`distillrank.Ranker` (sent to the workers pickled), a saved model's prefix (read on
    each worker), or a LightGBM or XGBoost model, its file or the object (read here, scored on
    the workers by the library's reader, as its library scores it). ``features``: the frame's
    feature columns, whose names a saved model or a tree model trained on named columns checks
    here, before any task runs. ``model_columns``: a tree model's columns against the features (``auto``,
    ``from-1`` or ``from-0``), checked whatever the model is; the others read the features in
    the order they were fitted on."""
    import numpy as np

    if model_columns not in ("auto", "from-1", "from-0"):
        raise ValueError(f"model_columns {model_columns!r}: expected auto, from-1 or from-0")

    def tree(data: bytes, name: str) -> Any:
        names = _names_of(features)
        # No row yet: the column mapping and the names, checked before any task, and what the
        # library says of them logged here, once.
        _, notes = _distillrank.forest_scores(
            data, name, np.zeros((0, len(features))), model_columns, names, "model_columns")
        _say(notes)
        return lambda x, q: np.asarray(
            _distillrank.forest_scores(
                data, name, np.asarray(x, np.float64), model_columns, names, "model_columns")[0],
            np.float32)

    if isinstance(model, str) or hasattr(model, "__fspath__"):
        import os

        path = os.fspath(model)
        prefix = _saved_prefix(path)
        if prefix is not None:
            # Read here as every door reads a saved model (its config, and its weights checked
            # against it), so that a broken one is refused in the library's words before any
            # task, and its column names and width are checked; each worker reads it again, so
            # that the weights never travel through the scheduler.
            config = _load(prefix).model_config_
            _check_names("frame", _names_of(features), config.get("feature_names"))
            _check_width(features, config.get("source_features"))
            # Warned of once, here on the client, not by each partition's predict.
            _warn_by_position("frame", _names_of(features), config.get("feature_names"), stacklevel=4)
            return lambda x, q: _predict_checked(_load(prefix), x, q)
        if not os.path.isfile(path):
            raise ValueError(
                f"model: {path}: no such file (expected a saved model's prefix, PREFIX.json + "
                "PREFIX.safetensors, or a LightGBM or XGBoost model file)"
            )
        with open(path, "rb") as file:
            return tree(file.read(), path)
    if isinstance(model, _importlib.import_module("distillrank").Ranker):
        _check_width(features, getattr(model, "n_features_in_", None))
        _warn_by_position("frame", _names_of(features), getattr(model, "feature_names_in_", None), stacklevel=4)
        return lambda x, q: _predict_checked(model, x, q)
    if _is_tree_model(model):
        # A Booster or a fitted estimator: scored by the library's reader of its dump, as a
        # model file is, so that model_columns and the names are read alike.
        try:
            data, name = _teacher_model(model)
        except (TypeError, ValueError) as e:
            raise ValueError(str(e).replace("teacher: ", "model: ", 1)) from e
        return tree(data, name)
    if hasattr(model, "predict"):
        return lambda x, q: model.predict(x)
    raise ValueError(
        "model: a fitted distillrank.Ranker, a saved model's prefix (PREFIX.json + PREFIX.safetensors), "
        "a LightGBM or XGBoost model (a Booster, a fitted estimator or its file), or a model with predict"
    )


def _predict_checked(ranker: Any, x: Any, q: Any) -> Any:
    """A ranker's scores of a partition's feature frame, whose columns this door checked against
    the ranker's before any task (and warned of, once, where they are read by position): without
    the warning of that case, which every partition would repeat."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X has (no )?feature names", category=UserWarning)
        return ranker.predict(x, qid=q)


def _is_tree_model(model: Any) -> bool:
    """Whether `model` is a LightGBM or XGBoost Booster or estimator (a Dataset or a DMatrix is
    not)."""
    return type(model).__module__.split(".")[0] in ("lightgbm", "xgboost") and any(
        hasattr(model, a) for a in ("model_to_string", "save_raw", "booster_", "get_booster"))


def _check_width(features: Sequence[Any], trained: Any) -> None:
    """The frame's feature columns against the width a distillrank model was trained on, checked
    here before any task, as ``Ranker.predict`` checks it on each partition."""
    if trained is not None and len(features) != int(trained):
        raise ValueError(
            f"frame: the data have {len(features)} feature columns, the model was trained on data "
            f"with {int(trained)}: give the columns it was trained on (columns=, exclude=)"
        )


class _OfPartitions:
    """A function of a partition that holds a model: dask names its tasks by a hash of their
    function, and a model has no deterministic hash, so each such function carries a token of
    its own (a new one per call: the tasks are never reused). A refusal of the partition's rows
    is named by the partition's number (dask passes it as ``partition_info``), since its rows
    are counted from the partition's first: ``partition 3: X: row 12: ...``."""

    def __init__(self, function: Any) -> None:
        import uuid

        self.function = function
        self.token = uuid.uuid4().hex

    def __call__(self, part: Any, partition_info: Any = None) -> Any:
        try:
            return self.function(part)
        except (ValueError, TypeError) as error:
            if type(error) not in (ValueError, TypeError):
                raise
            number = (partition_info or {}).get("number")
            where = "a partition" if number is None else f"partition {number}"
            raise type(error)(f"{where}: {error}") from error

    def __dask_tokenize__(self) -> str:
        return self.token


def _load(prefix: str) -> Any:
    return _importlib.import_module("distillrank").load(prefix)


def _saved_prefix(path: str) -> Optional[str]:
    """The prefix of the saved distillrank model that ``path`` names (the prefix, or either of
    its two files, ``PREFIX.json`` and ``PREFIX.safetensors``), where either file is there and
    ``path`` is not a model of another kind: a JSON file without weights beside it is one of a
    tree model's unless its ``format`` says it is a distillrank model's config. None otherwise."""
    import os

    prefix = next((path[: -len(end)] for end in (".json", ".safetensors") if path.endswith(end)), path)
    config, weights = prefix + ".json", prefix + ".safetensors"
    if os.path.exists(weights) or (os.path.exists(config) and path != config):
        return prefix
    if path == config and os.path.isfile(config):
        try:
            # A config is at most 16 MiB, as the library reads one.
            with open(config, "rb") as f:
                own = _json.loads(f.read(16 << 20)).get("format") == "distillrank-model"
        except (ValueError, AttributeError):
            own = False
        return prefix if own else None
    return None


def _columns(frame: Any, columns: Optional[Sequence[str]], exclude: Sequence[str]) -> List[str]:
    """The feature columns: those given, or every column but `exclude`, in the frame's order."""
    if not hasattr(frame, "map_partitions"):
        raise TypeError(
            f"frame: expected a Dask dataframe, not {type(frame).__name__} (dask.dataframe.from_pandas(df, "
            "npartitions=N); a frame in memory is scored by Ranker.predict)"
        )
    if columns is not None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(f"columns: the frame has no column {missing[0]!r}")
        return list(columns)
    return [c for c in frame.columns if c not in exclude]


def _check_partition_columns(part: Any, expected: Sequence[Any]) -> None:
    """Refuses a partition whose columns are not the frame's (a folder of part files whose
    columns differ, read by ``dd.read_parquet``): by position, its features would be misread."""
    if list(part.columns) != list(expected):
        missing = [c for c in expected if c not in part.columns]
        extra = [c for c in part.columns if c not in expected]
        raise ValueError(
            f"its columns are not the frame's: missing {missing}, unexpected {extra}"
            + ("" if missing or extra else ", in another order")
            + "; every partition (every part file) must have the frame's columns, in its order"
        )


def check_queries_whole(frame: Any, qid: str = "qid", contiguous: bool = True) -> None:
    """Refuses a Dask dataframe in which a query's rows lie in two partitions (or, with
    ``contiguous``, are not contiguous within one), naming the query and the partitions: a
    per-query metric computed partition by partition would count it as two queries. The frame is
    not repartitioned here: a shuffle by query (``frame.shuffle(on=qid)``, or
    ``frame.set_index(qid)``) moves every row over the network, and on data of this size that is
    the user's to choose."""
    import numpy as np
    pd: Any = _importlib.import_module("pandas")

    if qid not in frame.columns:
        raise ValueError(f"qid: the frame has no column {qid!r}")

    def runs(part: Any, partition_info: Any = None) -> Any:
        # Each run of equal query ids in the partition, once; a missing id is no query.
        missing = part[qid].isna().to_numpy()
        if missing.any():
            raise ValueError(
                f"qid: partition {(partition_info or {}).get('number', '?')}, its row "
                f"{int(missing.argmax()) + 1}: a missing value; every row needs its query's id")
        q = part[qid].to_numpy()
        if not contiguous:
            q = np.unique(q)
        starts = np.ones(len(q), dtype=bool)
        starts[1:] = q[1:] != q[:-1]
        number = (partition_info or {}).get("number", -1)
        return pd.DataFrame({"qid": q[starts], "partition": np.full(int(starts.sum()), number, dtype="i8")})

    found = frame.map_partitions(runs, meta={"qid": frame[qid].dtype, "partition": "i8"}).compute()
    first: Dict[Any, int] = {}
    for q, partition in zip(found["qid"].tolist(), found["partition"].tolist()):
        if q in first:
            where = (f"partitions {first[q]} and {partition}" if first[q] != partition
                     else f"partition {partition}, in two runs")
            raise ValueError(
                f"qid {q} has rows in {where}: a query's rows must be contiguous in one partition; "
                f"shuffle the frame by query first (frame.shuffle(on={qid!r}), or frame.set_index({qid!r}))"
            )
        first[q] = partition


_LOG_COLUMNS = ("qid", "session", "position", "doc", "click", "list_log_probability", "conversion", "dwell")


def click_table(impressions: Any, data: str, query: Optional[str] = None, out: Optional[str] = None) -> Dict[str, Any]:
    """The clicks by document and displayed rank of an impressions log held as a Dask dataframe,
    summed on the workers: what ``distillrank.read_impressions`` gives on the same log, to the
    last count.

    ``impressions`` has one row per shown document, with the columns of an impressions log:
    ``qid``, ``session``, ``position``, ``doc`` (the row within its query in ``data``) or
    ``docid`` (the document's docid comment there), ``click`` and optionally
    ``list_log_probability``, ``conversion`` (0 or 1) and ``dwell`` (seconds); every query's rows
    in one partition (refused by name otherwise). Any other column is refused by name, never
    dropped; a boolean (numpy's or pandas' nullable) or a float holding whole numbers reads as
    the integers it holds, as in Parquet. With ``conversion`` and ``dwell`` the table has
    each document's ``conversions`` and ``dwell_ms`` (its clicks' dwell in whole milliseconds),
    summed as integers too.
    Each partition is sorted by qid, session and position (stable), so that a shuffle which
    interleaved the sessions does not matter, and read by the library's reader with its checks
    (each session a list: each document and each rank in it at most once). Only the cells with
    an impression travel back, and the sums are of integers, so neither the partitioning nor the
    order of the partitions changes them. ``data`` (and ``query``, a ``.query`` file of group
    sizes) is the LETOR or Parquet file the log's queries and documents are of, read here; the
    workers open it only where the log names documents by docid.

    ``out``: also write the library's click-table file there. Every door reads it wherever it
    reads an impressions log (the logs sidecar's ``impressions``, ``read_impressions``)."""
    import numpy as np

    from . import read_letor

    doc = "doc" if "doc" in impressions.columns else "docid"
    header = [c if c != "doc" else doc for c in _LOG_COLUMNS
              if (c if c != "doc" else doc) in impressions.columns]
    expected = ("an impressions log has qid, session, position, doc or docid, click and optionally "
                "list_log_probability, conversion (0 or 1) and dwell (seconds)")
    missing = [c for c in ("qid", "session", "position", doc, "click") if c not in header]
    if missing:
        raise ValueError(f"impressions: the frame has no column {missing[0]!r} ({expected})")
    # A column the reader would not read is refused, as the text log's header and Parquet refuse it:
    # a log's dwell_time or conversions is not dropped without a word.
    unknown = [c for c in impressions.columns if c not in header]
    if unknown:
        raise ValueError(f"impressions: the frame's column {unknown[0]!r} is not one of an impressions log's "
                         f"({expected}); rename the column or drop it")
    check_queries_whole(impressions, "qid", contiguous=False)
    _, _, qid = read_letor(data, query)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    qids = [int(q) for q in qid[starts]]
    sizes = [int(n) for n in np.diff(np.r_[starts, len(qid)])]
    group_of = {q: g for g, q in enumerate(qids)}
    path = str(_pathlib.Path(data).resolve())

    def cells(part: Any, number: int) -> Any:
        pd_types: Any = _importlib.import_module("pandas.api.types")

        if len(part) == 0:
            return None
        part = part[header].reset_index(drop=True).sort_values(["qid", "session", "position"], kind="stable")
        # Whole-number columns as the Parquet reader writes them: a boolean (numpy's or pandas'
        # nullable one) as 0 or 1, and a float that holds whole numbers without its ".0"; a missing
        # value stays empty, for the reader to refuse by line.
        for column in ("qid", "session", "position", "doc", "click", "conversion"):
            if column in part.columns and not pd_types.is_integer_dtype(part[column]):
                values = part[column]
                if pd_types.is_bool_dtype(values) or (
                        pd_types.is_float_dtype(values)
                        and bool(((values.dropna() % 1 == 0) & (values.dropna().abs() < 2**53)).all())):
                    part[column] = values.astype("Int64")
        text = part.to_csv(sep="\t", index=False).encode()
        name = f"partition {number} of the impressions frame (sorted by qid, session and position)"
        # The reader sees the partition's own queries (a query the data lack is refused by it),
        # so that a partition's work and memory follow its rows, not the whole file's.
        groups = sorted({group_of[q] for q in part["qid"].unique().tolist() if q in group_of})
        if len(groups) < part["qid"].nunique():
            groups = list(range(len(qids)))
        shown, sessions, (docs, ranks, n, c), (odocs, conv, dwell) = _distillrank.impressions_cells(
            text, name, path, [qids[g] for g in groups], [sizes[g] for g in groups])
        # Each document back to its row in the whole file.
        local = np.r_[0, np.cumsum([sizes[g] for g in groups])]
        first = np.asarray([starts[g] for g in groups], dtype=np.int64)

        def rows(d: Any) -> Any:
            which = np.searchsorted(local, d, side="right") - 1
            return first[which] + (d.astype(np.int64) - local[which])

        return shown, sessions, (rows(docs), ranks, n, c), (rows(odocs), conv, dwell)

    dask: Any = _importlib.import_module("dask")
    tasks = [dask.delayed(cells)(p, k) for k, p in enumerate(impressions.to_delayed())]
    found = [r for r in dask.compute(*tasks) if r is not None]
    if not found:
        raise ValueError("impressions: the frame has no rows")
    shown = max(r[0] for r in found)
    impressions_by_rank = np.zeros((len(qid), shown), dtype=np.int64)
    clicks_by_rank = np.zeros((len(qid), shown), dtype=np.int64)
    # Each partition has the same columns, so a table has conversions (dwell) when any does.
    conversions = np.zeros(len(qid), dtype=np.int64) if "conversion" in header else None
    dwell_ms = np.zeros(len(qid), dtype=np.int64) if "dwell" in header else None
    for _, _, (docs, ranks, n, c), (odocs, conv, dwell) in found:
        np.add.at(impressions_by_rank, (docs.astype(np.int64), ranks.astype(np.int64)), n.astype(np.int64))
        np.add.at(clicks_by_rank, (docs.astype(np.int64), ranks.astype(np.int64)), c.astype(np.int64))
        if conversions is not None:
            np.add.at(conversions, odocs, conv.astype(np.int64))
        if dwell_ms is not None:
            np.add.at(dwell_ms, odocs, dwell.astype(np.int64))
    table = {"impressions": impressions_by_rank, "clicks": clicks_by_rank, "qid": qid,
             "sessions": max(r[1] for r in found)}
    if conversions is not None:
        table["conversions"] = conversions
    if dwell_ms is not None:
        table["dwell_ms"] = dwell_ms
    if out is not None:
        if impressions_by_rank.max(initial=0) > 2**32 - 1:
            raise ValueError("out: a document has more than 2^32 - 1 impressions at a rank, past the file's counts")
        head = {"shown": shown, "sessions": table["sessions"], "impressions": impressions_by_rank.ravel().tolist(),
                "clicks": clicks_by_rank.ravel().tolist(), "examination": None,
                "group_offsets": [0, *np.cumsum(sizes).tolist()], "qids": qids, "from_rows": False}
        if conversions is not None:
            if conversions.max(initial=0) > 2**32 - 1:
                raise ValueError("out: a document has more than 2^32 - 1 conversions, past the file's counts")
            head["conversions"] = conversions.tolist()
        if dwell_ms is not None:
            head["dwell_ms"] = dwell_ms.tolist()
        _distillrank.write_click_table(_json.dumps(head), str(out))
    return table


def _names_of(features: Sequence[Any]) -> Optional[List[str]]:
    """The frame's feature columns as feature names, as ``Ranker.fit`` takes them: only where
    every label is a string (pandas' default 0, 1, ... name none, and are read by position)."""
    return [str(c) for c in features] if all(isinstance(c, str) for c in features) else None


def _check_feature_names(model: Any, features: Sequence[Any]) -> None:
    """The frame's feature columns against those a ranker fitted on a data frame saw
    (``feature_names_in_``), checked here before any task runs, as ``Ranker.predict`` checks
    them: the same names in the same order."""
    if _is_tree_model(model):
        # A tree model's names are its library's (LightGBM's `Column_0` for none, underscores
        # for spaces): the library's reader checks them as it checks a model file's.
        return
    expected = getattr(model, "feature_names_in_", None)
    if expected is not None:
        _check_names("frame", _names_of(features), [str(c) for c in expected])


def predict(
    model: Any, frame: Any, columns: Optional[Sequence[str]] = None, exclude: Optional[Sequence[str]] = None,
    qid: str = "qid", model_columns: str = "auto",
) -> Any:
    """Scores the rows of a Dask dataframe on the cluster's workers, partition by partition
    (``map_partitions``): a Dask series of float32 scores, one per row, with the frame's index.
    ``model``: a fitted :class:`distillrank.Ranker`, a saved model's prefix, or a LightGBM or
    XGBoost model (its file, a Booster or a fitted estimator). ``columns``: the features in the
    model's order (default: every column but ``exclude``, the query id and the grade, which are
    never features). The ``qid`` column, when the frame has it, groups each partition's rows
    into queries for a listwise model (``attention_heads`` above 0), which then needs each query
    whole in one partition (:func:`check_queries_whole`). ``exclude`` defaults to the ``qid`` column and ``label``. A
    ranker fitted on a data frame (or saved from one), and a tree model trained on named
    columns, check the feature columns' names and order before any task, as ``Ranker.predict``
    does. ``model_columns``: a tree model's input columns against the features, as the CLI's
    ``predict --columns`` reads them: ``auto`` (by the widths, or where they do not tell, the
    mapping under which every column the trees split on is a feature, said in a note),
    ``from-1`` (column 0 is the first feature: a model trained on arrays or frames) or
    ``from-0`` (column j is feature j: a model trained by LightGBM's or XGBoost's own LETOR
    reader); a distillrank model reads its features in the order fit saw them."""
    pd: Any = _importlib.import_module("pandas")

    features = _columns(frame, columns, (qid, "label") if exclude is None else exclude)
    _check_feature_names(model, features)
    score = _scorer(model, features, model_columns)
    if _attends(model):
        check_queries_whole(frame, qid)

    columns = list(frame.columns)

    def scores(part: Any) -> Any:
        _check_partition_columns(part, columns)
        # An empty partition (a filter's) scores no row.
        if len(part) == 0:
            return pd.Series([], index=part.index, dtype="float32", name="score")
        qids = part[qid].to_numpy() if qid in part.columns else None
        return pd.Series(score(part[features], qids), index=part.index, dtype="float32", name="score")

    return frame.map_partitions(
        _OfPartitions(scores),
        meta=("score", "f4"),
    )


def evaluate(
    model: Any,
    frame: Any,
    label: str = "label",
    qid: str = "qid",
    columns: Optional[Sequence[str]] = None,
    k: int = 8,
    model_columns: str = "auto",
) -> Dict[str, Any]:
    """NDCG@k of ``model`` on a Dask dataframe of documents (a query id column, a grade column
    and the features), computed on the workers: each partition's queries scored and measured
    there, then the per-query figures reduced in qid order here. A query split across
    partitions is refused by name (:func:`check_queries_whole`). Returns ``ndcg@k`` (the mean
    over the queries with a relevant document), ``queries`` and ``per_query`` (``{qid: NDCG}``,
    None for a query without a relevant document); every figure is None, said in a warning,
    where no query holds two different grades (``distillrank eval``'s n/a), and a model that
    gives every document of each query one score is said not to rank. ``model_columns``: as
    :func:`predict`."""
    import numpy as np

    pd: Any = _importlib.import_module("pandas")

    _check_k(k)
    features = _columns(frame, columns, (qid, label))
    for name, column in (("qid", qid), ("label", label)):
        if column not in frame.columns:
            raise ValueError(f"{name}: the frame has no column {column!r}")
    frame_columns = list(frame.columns)
    # The checks on the client first, then the one that runs a graph.
    _check_feature_names(model, features)
    score = _scorer(model, features, model_columns)
    check_queries_whole(frame, qid)

    def per_query(part: Any) -> Any:
        _check_partition_columns(part, frame_columns)
        if len(part) == 0:
            return pd.DataFrame({"qid": pd.Series([], dtype="u8"), "ndcg": pd.Series([], dtype="f8"),
                                 "documents": pd.Series([], dtype="i8"), "mixed": pd.Series([], dtype="bool"),
                                 "note": pd.Series([], dtype="object")})
        scores = _np_f32(score(part[features], part[qid].to_numpy()))
        # Numbers of any pandas dtype (nullable ones among them) as floats; text is refused.
        column = part[label]
        values = (column.to_numpy(dtype="float64", na_value=float("nan"))
                  if pd.api.types.is_numeric_dtype(column.dtype) else column.to_numpy())
        grades = _grades(f"label column {label!r}", values)
        missing = grades != grades
        if missing.any():
            raise ValueError(f"label column {label!r}: its row {int(missing.argmax()) + 1}: a missing value; "
                             "expected a relevance grade on every row")
        ids = part[qid].astype("u8").to_numpy()
        qids, values, mixed = _distillrank.ndcg_per_query(scores.tolist(), grades.tolist(), ids.tolist(), int(k))
        # Each query's documents, and the library's note where the model gives every document of
        # each of the partition's queries one score: it does not rank where every partition's
        # note is there, which is said once the partitions are reduced.
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        note = _distillrank.ties_note(scores.tolist(), ids.tolist())
        return pd.DataFrame({"qid": pd.Series(qids, dtype="u8"),
                             "ndcg": pd.Series([float("nan") if v is None else v for v in values], dtype="f8"),
                             "documents": pd.Series(np.diff(np.r_[starts, len(ids)]), dtype="i8"),
                             "mixed": pd.Series(mixed, dtype="bool"),
                             "note": pd.Series([note] * len(qids), dtype="object")})

    found = frame.map_partitions(_OfPartitions(per_query),
                                 meta={"qid": "u8", "ndcg": "f8", "documents": "i8", "mixed": "bool",
                                       "note": "object"}).compute().sort_values("qid")
    ranked = found[found["documents"] >= 2]
    if len(ranked) and bool(ranked["note"].notna().all()):
        _say([(True, ranked["note"].iloc[0])])
    if not bool(found["mixed"].any()):
        # As ``distillrank eval``'s n/a: every order of every query is as good as any other.
        _say([(True, _distillrank.UNMEASURABLE)])
        return {f"ndcg@{k}": None, "queries": 0, "per_query": {int(q): None for q in found["qid"]}}
    measured = [v for v in found["ndcg"].tolist() if v == v]
    return {
        f"ndcg@{k}": (sum(measured) / len(measured)) if measured else None,
        "queries": len(measured),
        "per_query": {int(q): (None if v != v else float(v)) for q, v in zip(found["qid"], found["ndcg"])},
    }


def _attends(model: Any) -> bool:
    """Whether `model` is a listwise distillrank model (its scores depend on the query's other
    documents)."""
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        import os

        prefix = _saved_prefix(os.fspath(model))
        if prefix is None:
            return False
        return int(_load(prefix).model_config_.get("attention_heads", 0)) > 0
    try:
        return int(model.model_config_.get("attention_heads", 0)) > 0
    except (AttributeError, ValueError):
        return False


def _np_f32(values: Any) -> Any:
    import numpy as np

    return np.asarray(values, dtype=np.float32)


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
    c.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to wait for the scheduler to answer (default 30)")
    args = p.parse_args(argv)
    from dask.distributed import Client

    path = pathlib.Path(args.setup)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        print(f"python -m distillrank: --setup {path}: {e.strerror if isinstance(e, OSError) else e}: "
              "expected a setup.json (as distillrank compare or the page writes it)", file=_sys.stderr)
        return 1
    try:
        client = Client(args.scheduler, timeout=args.timeout)
    except (OSError, TimeoutError, ValueError) as e:
        print(f"python -m distillrank: no Dask scheduler answered at {args.scheduler} within {args.timeout:g} s "
              f"({type(e).__name__}: {e}): start one (dask scheduler), or give its address (tcp://HOST:8786)",
              file=_sys.stderr)
        return 1
    with client:
        try:
            results = compare(text, client, base=str(path.resolve().parent))
        except ValueError as e:
            # A refusal of the setup (a setting out of range, a file not there): its message.
            print(f"python -m distillrank: --setup {path}: {e}", file=_sys.stderr)
            return 1
    shown = _json.dumps(results, indent=1)
    if args.out:
        pathlib.Path(args.out).write_text(shown + "\n")
    else:
        print(shown)
    return 0

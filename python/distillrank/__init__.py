"""distillrank: learning to rank with privileged features and distillation (PFD).

The Python door of the Rust library ``distillrank``, beside its CLI and its web page: the same
training, comparisons, saved models and errors, with numpy arrays in and out.

* :class:`Ranker`: one method (PFD by default) trained on arrays, LightGBM / XGBoost style:
  ``Ranker(method="pfd").fit(X, y, qid=qid, privileged=Z).predict(X)``.
* :func:`compare`: every method of a :class:`Setup` over its seeds, as ``distillrank compare``;
  returns the object of its ``results.json``.
* :func:`load`: a model saved by :meth:`Ranker.save`, by ``distillrank train --save`` or by the
  page (``PREFIX.safetensors`` + ``PREFIX.json``).
* :func:`read_letor`, :func:`mq2008`: LETOR / SVMlight files and the bundled MQ2008 Fold1 as
  arrays.
* :func:`paired_test`: the paired significance test of two methods' per-query metrics.

Every setting takes the library's default (``Setup()``); every error of the library is a
``ValueError`` carrying the library's own message, the one the CLI prints.
"""

import json as _json
import logging as _logging
import math as _math
import os as _os
import sys as _sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as _np

from . import _distillrank
from ._distillrank import __version__

try:  # scikit-learn is optional: with it, Ranker is one of its estimators (clone, metadata routing).
    from sklearn.base import BaseEstimator as _EstimatorBase
    from sklearn.exceptions import NotFittedError as _NotFittedBase
except ImportError:  # pragma: no cover - exercised where scikit-learn is absent
    _EstimatorBase = object

    class _NotFittedBase(ValueError, AttributeError):  # type: ignore[no-redef]
        pass


class NotFittedError(_NotFittedBase):
    """A :class:`Ranker` used before :meth:`Ranker.fit`: a ``ValueError`` and an
    ``AttributeError``, and scikit-learn's ``NotFittedError`` where scikit-learn is installed."""


#: The package's logger: notes and epoch lines at INFO, warnings at WARNING.
logger = _logging.getLogger("distillrank")


def _log(level: int, text: str) -> None:
    """What a training run says, through :data:`logger`; on stderr, as the CLI prints it, while
    the application has configured no logging at all."""
    if logger.hasHandlers():
        logger.log(level, text)
    elif logger.level == _logging.NOTSET or logger.isEnabledFor(level):
        prefix = "distillrank: warning: " if level >= _logging.WARNING else "distillrank: "
        _sys.stderr.write(prefix + text + "\n")
        _sys.stderr.flush()

__all__ = [
    "NotFittedError",
    "logger",
    "METHODS",
    "LOSSES",
    "TRANSFORMS",
    "Ranker",
    "Setup",
    "compare",
    "sweep",
    "SWEEP_PARAMS",
    "objectives",
    "load",
    "read_letor",
    "read_impressions",
    "mq2008",
    "paired_test",
    "__version__",
]


_CHOICES = _json.loads(_distillrank.choices())

#: Every method's name, as the library's entries give them (``Ranker(method=...)``,
#: ``Setup.methods``): ``no-distillation``, ``pfd``, ...
METHODS: Tuple[str, ...] = tuple(m["name"] for m in _CHOICES["methods"])

#: Every loss's name, as the library's entries give them (``loss=...``): ``ranknet``, ...
LOSSES: Tuple[str, ...] = tuple(loss["name"] for loss in _CHOICES["losses"])

#: Every input transform's name (``Ranker(transform=...)``), from the library's entries.
TRANSFORMS: Tuple[str, ...] = tuple(t["name"] for t in _CHOICES["transforms"])


def _defaults() -> Dict[str, Any]:
    """The library's defaults: ``Setup::default()`` as a dict."""
    return _json.loads(_distillrank.default_setup())


def _method_name(name: str) -> str:
    """A method as the library spells it: ``multi_teacher_pfd`` -> ``multi-teacher-pfd``."""
    return name.replace("_", "-") if isinstance(name, str) else name


def _json_text(setup: Any, at: str = "") -> str:
    """``setup`` as JSON text: numpy's numbers and arrays as the plain numbers and lists they
    hold, a path as its text; a number JSON cannot hold (NaN, infinity) or a value that is no
    setting (an object) refused by the keyword or field that holds it, rather than as a
    position in the text or a traceback from the json module."""

    def plain(value: Any, path: str) -> Any:
        where = path or "the setup"
        if isinstance(value, _np.ndarray):
            value = value.tolist()
        elif isinstance(value, _np.generic):
            value = value.item()
        elif isinstance(value, _os.PathLike):
            value = _os.fspath(value)
        if isinstance(value, float) and not _math.isfinite(value):
            raise ValueError(f"{where} = {value}: expected a finite number")
        # A whole number JSON's readers hold only as a rounded float (past 2^64 - 1).
        if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**64:
            raise ValueError(f"{where} = {value} is out of range: a whole number outside -2^63..=2^64 - 1, which no setting takes")
        if isinstance(value, dict):
            return {key: plain(inner, f"{path}.{key}" if path else str(key)) for key, inner in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(inner, path) for inner in value]
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise ValueError(
            f"{where} = {value!r}: expected a number, a string, true or false, or a list of them, "
            f"not {type(value).__name__}"
        )

    return _json.dumps(plain(setup, at))


def _numbers(values: Any, what: str, flat: bool = False) -> list:
    """``values`` (an array, a list or any iterable of numbers, one dimension, or one column
    with ``flat``) as a list of floats, refused by ``what`` where one of them is not a number
    or the values are not one list: read row by row, a matrix of several columns would put
    its values on other rows. A string is no list (its letters are not the numbers), and a
    bool no number."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{what}: {values!r} is text: expected a list of numbers, such as [0.3, 0.5]")
    if not isinstance(values, _np.ndarray):
        try:
            values = list(values)
        except TypeError as e:
            raise ValueError(f"{what}: expected a list of numbers, not {type(values).__name__}") from e
    try:
        array = _np.asarray(values, dtype=_np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{what}: expected numbers ({e})") from e
    if isinstance(values, _np.ndarray) and values.dtype == _np.bool_ or \
            not isinstance(values, _np.ndarray) and any(isinstance(v, (bool, _np.bool_)) for v in values):
        raise ValueError(f"{what}: expected numbers, not True or False")
    if flat and array.ndim == 2 and array.shape[1] == 1:
        array = array.ravel()
    if array.ndim != 1:
        raise ValueError(f"{what}: expected one list of numbers, got shape {array.shape}")
    return array.tolist()


def _is_array_like(values: Any) -> bool:
    """Whether ``values`` is an array of numbers by its type: a numpy array, or anything numpy
    reads as one (a pandas or polars Series, a pyarrow array), a model aside."""
    if isinstance(values, _np.ndarray):
        return True
    library = type(values).__module__.split(".")[0]
    return hasattr(values, "__array__") and library not in ("lightgbm", "xgboost")


def _is_scores(teacher: Any) -> bool:
    """Whether ``teacher`` is scores (an array, a Series, a list of numbers, or a list / tuple
    of those) rather than a model."""
    if isinstance(teacher, (list, tuple)):
        return len(teacher) > 0 and (
            all(_np.ndim(t) == 1 and not isinstance(t, (str, bytes)) for t in teacher)
            or _is_one_split(teacher)
        )
    return _is_array_like(teacher)


def _is_one_split(teacher: Any) -> bool:
    """Whether ``teacher`` is one split's scores: an array, a Series, or a list of numbers."""
    if _is_array_like(teacher):
        return True
    return isinstance(teacher, (list, tuple)) and all(
        _np.ndim(t) == 0 and not isinstance(t, (str, bytes)) for t in teacher
    )


def _score_splits(teacher: Any) -> List[Any]:
    """Scores as one array per split: one split's scores (an array, a list of numbers) alone."""
    return [teacher] if _is_one_split(teacher) else list(teacher)


def _teacher_model(teacher: Any, keyword: str = "teacher") -> Tuple[bytes, str]:
    """A tree model's bytes and name: a path, a ``lightgbm.Booster`` or ``LGBMRanker`` (its
    ``model_to_string()``), an ``xgboost.Booster`` or ``XGBRanker`` (its JSON, ``save_raw``).
    Neither package is imported: their objects are read through their own dumps. Refusals name
    ``keyword`` (``teacher``, ``reference``)."""
    library = type(teacher).__module__.split(".")[0]
    if library in ("lightgbm", "xgboost") and not hasattr(type(teacher), "model_to_string") \
            and not hasattr(type(teacher), "save_raw"):
        # An estimator (LGBMRanker, XGBRanker, ...): its booster, once it is fitted.
        try:
            teacher = teacher.booster_ if library == "lightgbm" else teacher.get_booster()
        except (ValueError, AttributeError) as e:
            raise ValueError(
                f"{keyword}: this {type(teacher).__name__} is not fitted: fit it first, or give a fitted "
                "model or its saved file"
            ) from e
    if hasattr(teacher, "model_to_string"):
        return teacher.model_to_string().encode(), "lightgbm.Booster"
    if hasattr(teacher, "save_raw"):
        return bytes(teacher.save_raw("json")), "xgboost.Booster"
    if isinstance(teacher, (str, _os.PathLike)):
        try:
            with open(teacher, "rb") as f:
                return f.read(), str(teacher)
        except OSError as e:
            raise ValueError(f"{keyword}: {teacher}: {e.strerror or e}; expected a tree model's file") from e
    raise TypeError(
        f"{keyword}: expected a model file's path, a lightgbm.Booster, an xgboost.Booster, or "
        f"scores (an array per split), not {type(teacher).__name__}"
    )


#: Files written for teachers given as objects (a Booster, score arrays) to a comparison, which
#: reads files: kept until the interpreter ends.
_TEACHER_FILES: list = []


def _teacher_setting(teacher: Any, columns: Any, keyword: str = "teacher") -> Dict[str, Any]:
    """``data.teacher`` (or ``data.reference``: ``keyword``) for a comparison, which reads files:
    a path as Python opens it (a relative one against the working directory, as
    ``Ranker(teacher=...)`` reads it); a Booster or scores (arrays for the training, validation
    and test files) written to files first."""
    import tempfile

    setting: Dict[str, Any] = {} if columns is None else {"columns": columns}
    if teacher is None:
        return setting
    if isinstance(teacher, dict):
        return dict(teacher, **setting)
    if isinstance(teacher, (str, _os.PathLike)):
        path = _os.fspath(teacher)
        # An empty name stays empty: the library refuses it by name.
        return dict(setting, model=_os.path.abspath(path) if path.strip() else path)
    folder = tempfile.mkdtemp(prefix="distillrank-teacher-")
    _TEACHER_FILES.append(folder)
    if _is_scores(teacher):
        splits = _score_splits(teacher)
        paths = []
        for i, scores in enumerate(splits):
            path = _os.path.join(folder, f"split{i}.scores")
            _np.savetxt(path, _np.asarray(_numbers(scores, f"{keyword}'s scores of split {i + 1}", flat=True)), fmt="%.17g")
            paths.append(path)
        return dict(setting, scores=",".join(paths))
    model, name = _teacher_model(teacher, keyword)
    path = _os.path.join(folder, "model.json" if name.startswith("xgboost") else "model.txt")
    with open(path, "wb") as f:
        f.write(model)
    return dict(setting, model=path)


def _setup_dict(settings: Dict[str, Any], base: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Keywords set on the fields of the same name of a setup (``base``, else the defaults): top
    level, or under ``data``; ``seed`` sets ``first_seed``, ``method`` the one method of
    ``methods``. Unknown keywords stay at the top level, where the library refuses them by name.
    The result is checked and completed by the library."""
    setup = _defaults() if base is None else _json.loads(_json.dumps(base))
    data_fields = set(setup["data"])
    if "teacher" in settings or "teacher_columns" in settings:
        settings = dict(settings)
        setup["data"]["teacher"] = _teacher_setting(settings.pop("teacher", None), settings.pop("teacher_columns", None))
    # The reference, a field of ``data`` the defaults leave out: a model's path, its section, a
    # Booster or scores, as a teacher is given.
    if "reference" in settings:
        settings = dict(settings)
        setup["data"]["reference"] = _teacher_setting(settings.pop("reference"), None, "reference")
    # Two keywords of one field would leave the last one's value without a word.
    for one, other in (("seed", "first_seed"), ("method", "methods")):
        if one in settings and other in settings:
            raise ValueError(f"{one}= and {other}= both set {other}: give one")
    for key, value in settings.items():
        if key == "seed":
            setup["first_seed"] = value
        elif key == "method":
            setup["methods"] = [_method_name(value)]
        elif key == "methods":
            # One name is one method, as a setup document reads it (never its letters).
            names = [value] if isinstance(value, str) else value
            setup["methods"] = [_method_name(m) for m in names]
        elif key in data_fields and key not in setup:
            setup["data"][key] = value
        else:
            setup[key] = value
    try:
        return _json.loads(_distillrank.check_setup(_json_text(setup)))
    except ValueError as e:
        if "seed" not in settings:
            raise
        # The field the keyword fills, named as the keyword.
        raise ValueError(str(e).replace("first_seed", "seed")) from None


class Setup:
    """One comparison, as the CLI's ``setup.json`` and the page's "Export setup" describe it: the
    data, the privileged split, the methods, the losses, the training settings and the backend.

    ``Setup()`` is the library's defaults; keywords set fields by name, top level or under
    ``data`` (``Setup(epochs=2, seeds=2, source="mq2008", backend="cpu")``); ``seed`` sets
    ``first_seed``. ``to_dict()`` is the whole setup, and fields read as attributes
    (``Setup().epochs``)."""

    def __init__(self, **settings: Any) -> None:
        self._setup = _setup_dict(settings)

    @classmethod
    def from_json(cls, text: str) -> "Setup":
        """A setup from its JSON (fields left out take their defaults)."""
        if isinstance(text, str):
            _not_a_file_name(text)
        setup = cls.__new__(cls)
        setup._setup = _json.loads(_distillrank.check_setup(text))
        return setup

    @classmethod
    def from_dict(cls, value: Dict[str, Any]) -> "Setup":
        """A setup from a dict shaped like its JSON."""
        return cls.from_json(_json_text(value))

    def to_json(self) -> str:
        """The setup's JSON, every field written (``distillrank compare --setup`` reads it)."""
        return _distillrank.check_setup(_json.dumps(self._setup))

    def to_dict(self) -> Dict[str, Any]:
        """The setup as a dict (a copy)."""
        return _json.loads(_json.dumps(self._setup))

    def __getattr__(self, name: str) -> Any:
        setup = self.__dict__.get("_setup")
        if setup is not None and name in setup:
            return setup[name]
        raise AttributeError(f"Setup has no field '{name}'")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Setup) and self._setup == other._setup

    def __repr__(self) -> str:
        return f"Setup.from_json({self.to_json()!r})"


def _setup_json(setup: Any) -> str:
    """A :class:`Setup`, a dict or a JSON string, as JSON text."""
    if isinstance(setup, Setup):
        return setup.to_json()
    if isinstance(setup, dict):
        return _json_text(setup)
    if isinstance(setup, str):
        _not_a_file_name(setup)
        return setup
    raise TypeError(f"setup: expected a Setup, a dict or a JSON string, not {type(setup).__name__}")


def _not_a_file_name(text: str) -> None:
    """Refuses setup text that is a file's name (``"setup.json"``), which the JSON reader would
    call an unexpected character: the setup is the file's text."""
    stripped = text.strip()
    if stripped and stripped[0] not in "{[\"" and (stripped.endswith(".json") or _os.path.isfile(stripped)):
        raise ValueError(
            f"setup: {stripped!r} is a file's name, and a setup is given as its JSON text: "
            f"distillrank.Setup.from_json(open({stripped!r}).read()), a dict or a Setup"
        )


def _features(name: str, x: Any) -> _np.ndarray:
    """A 2-D float32 C-contiguous matrix (no copy when it is one already)."""
    try:
        x = _np.asarray(x)
    except ValueError as e:
        # Rows of different lengths (a ragged list of lists): numpy's words name neither.
        if "inhomogeneous" in str(e) or "setting an array element with a sequence" in str(e):
            raise ValueError(f"{name}: rows of different lengths: expected a 2-D array (rows, features), "
                             f"every row as long as the first ({e})") from None
        raise ValueError(f"{name}: {e}") from None
    if x.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (rows, features), got shape {x.shape}")
    if x.dtype == object and all(
            isinstance(v, (int, float, _np.number)) and not isinstance(v, _np.timedelta64) for v in x.flat):
        # Numbers held as Python objects (an array built from mixed lists); text, even text of
        # numbers, and missing values stay refused, as a frame's are.
        x = x.astype(_np.float64)
    if not (_np.issubdtype(x.dtype, _np.floating) or _np.issubdtype(x.dtype, _np.integer)
            or x.dtype == _np.bool_):
        raise ValueError(f"{name}: expected numbers, got dtype {x.dtype}")
    if x.shape[1] == 0:
        raise ValueError(f"{name}: no feature columns (shape {x.shape}): expected one or more")
    # A value beyond float32's range becomes inf, which the library refuses by its row and
    # feature, saying so; numpy's own warning would only repeat it without the place.
    with _np.errstate(over="ignore"):
        return _np.ascontiguousarray(x, dtype=_np.float32)


def _is_arrow(x: Any) -> bool:
    """A pyarrow Table or RecordBatch: named columns of (chunked) arrays, no ``to_numpy``."""
    return hasattr(x, "column_names") and hasattr(x, "columns") and not hasattr(x, "to_numpy")


def _arrow_index_columns(x: Any) -> List[str]:
    """The columns of a pyarrow table that hold a pandas index it was made from
    (``Table.from_pandas`` stores a filtered frame's row labels as ``__index_level_0__``): row
    labels, not features."""
    schema = getattr(x, "schema", None)
    metadata = getattr(schema, "pandas_metadata", None) or {}
    return [c for c in metadata.get("index_columns", []) if isinstance(c, str)]


def _is_lazy(x: Any) -> bool:
    """Whether `x` is a polars LazyFrame, asked by its type alone: its `columns` resolves its
    schema, with a warning."""
    return type(x).__name__ == "LazyFrame" and hasattr(x, "collect")


def _column_names(x: Any) -> Optional[List[str]]:
    """The column names of a data frame (pandas, polars: anything with ``columns``; a pyarrow
    table's ``column_names``, a stored pandas index left out), as strings; None for an array."""
    if isinstance(x, _np.ndarray) or _is_lazy(x):
        # A LazyFrame's `columns` resolves its schema, with a warning; `_as_array` refuses it.
        return None
    names = getattr(x, "column_names", None)
    if names is not None and _is_arrow(x):
        index = _arrow_index_columns(x)
        names = [c for c in names if c not in index]
    if names is None:
        names = getattr(x, "columns", None)
    if names is None:
        return None
    return [str(c) for c in names]


def _feature_names(x: Any) -> Optional[List[str]]:
    """The names of a frame's columns as feature names, as scikit-learn takes them: only where
    every one is a string (pandas' default 0, 1, ... name no feature, and a frame of them is
    taken by position, as an array is)."""
    names = _column_names(x)
    columns = getattr(x, "columns", None)
    if names is None or _is_arrow(x) or columns is None:
        return names
    return names if all(isinstance(c, str) for c in columns) else None


def _frame_column(name: str, column: str, values: Any) -> _np.ndarray:
    """One column of a data frame as numbers: booleans as 0 and 1, pandas' nullable integers
    and floats (without a missing value) as their numbers; anything else (text, even text of
    numbers, dates, times and durations, categories) refused by its name."""
    values = _np.asarray(values)
    kind = values.dtype.kind
    # A list, an array or a struct in each row (polars' List, Array and Struct) is no one number:
    # spread over columns it would shift every column after it.
    nested = values.ndim != 1 or kind == "V" or (
        kind == "O" and any(isinstance(v, (list, tuple, dict, _np.ndarray)) for v in values))
    if nested:
        raise ValueError(
            f"{name}: column {column!r} holds a list, array or struct in each row: expected one "
            "number per row (unnest it into columns of their own first)"
        )
    if kind in "mM":
        raise ValueError(
            f"{name}: column {column!r} holds dates, times or durations ({values.dtype}): expected "
            "numbers (a date as a feature is a number you derive from it, such as days since an event)"
        )
    if values.dtype == _np.bool_ or _np.issubdtype(values.dtype, _np.number):
        return values
    text = kind in "USO" and (kind != "O" or any(isinstance(v, (str, bytes)) for v in values))
    if not text:
        try:
            return _np.asarray(values, dtype=_np.float64)
        except (TypeError, ValueError):
            pass
    raise ValueError(
        f"{name}: column {column!r} holds {values.dtype} values that are not numbers "
        "(strings, categories or missing values of a nullable column): expected numbers"
    ) from None


def _distinct(name: str, names: List[str]) -> None:
    """Refuses a frame with two columns of one name: they cannot be told apart when predict
    checks the columns' order (nor read by name)."""
    seen: Dict[str, int] = {}
    for i, c in enumerate(names):
        if c in seen:
            raise ValueError(
                f"{name}: columns {seen[c]} and {i} are both named {c!r}: give each column its own name "
                "(predict checks the columns by name)"
            )
        seen[c] = i


def _frame_columns(name: str, x: Any, names: List[str]) -> _np.ndarray:
    """A pandas or polars data frame's columns, each as :func:`_frame_column` reads it, so that
    a frame's own conversion to one array (which turns polars' dates into numbers) never
    decides."""
    if hasattr(x, "iloc"):
        columns = [_frame_column(name, c, x.iloc[:, i].to_numpy()) for i, c in enumerate(names)]
    elif hasattr(x, "to_series"):
        columns = [_frame_column(name, c, x.to_series(i).to_numpy()) for i, c in enumerate(names)]
    else:
        columns = [_frame_column(name, c, _np.asarray(x[c])) for c in names]
    return _np.column_stack(columns) if columns else _np.zeros((len(x), 0), _np.float32)


def _as_array(x: Any, name: str = "X", dtype: Any = _np.float32) -> Any:
    """A data frame's values as a numpy array (pandas, polars, a pyarrow table, column by
    column, a pyarrow table's stored pandas index left out); a scipy sparse matrix dense in
    ``dtype`` (float32, what training reads; a tree model's scores read float64), its absent
    entries 0 (as LightGBM reads one); anything else as given."""
    if isinstance(x, _np.ndarray):
        return x
    if hasattr(x, "toarray") and hasattr(x, "tocsr") and hasattr(x, "nnz"):
        rows, columns = x.shape
        try:
            return x.astype(dtype).toarray()
        except MemoryError:
            gib = rows * columns * _np.dtype(dtype).itemsize / 2**30
            raise MemoryError(
                f"{name}: a sparse matrix of {rows} rows and {columns} columns is read dense "
                f"({gib:.1f} GiB as {_np.dtype(dtype).name}), more than this machine could "
                "allocate: distillrank trains on dense features; keep the columns that carry "
                "information, or write the data to a LETOR file and train from it"
            ) from None
    if _is_lazy(x):
        raise ValueError(f"{name}: a lazy frame (polars' LazyFrame) holds no values yet: give {name}.collect()")
    names = _column_names(x)
    if names is not None:
        _distinct(name, names)
    if _is_arrow(x):
        # A pyarrow Table or RecordBatch: its columns are (chunked) arrays.
        columns = [_frame_column(name, c, x.column(c)) for c in names]
        return _np.column_stack(columns) if columns else _np.zeros((x.num_rows, 0), _np.float32)
    if hasattr(x, "to_numpy") and hasattr(x, "columns") and names is not None:
        return _frame_columns(name, x, names)
    return x


def _say(notes: Sequence[Tuple[bool, str]], verbose: bool = True) -> None:
    """What the library says beside a result, as (is a warning, text): warnings whatever
    ``verbose`` says, notes where it is on, as a training run logs them."""
    for warning, text in notes:
        if warning or verbose:
            _log(_logging.WARNING if warning else _logging.INFO, text)


def _check_names(name: str, names: Optional[List[str]], expected: Optional[List[str]]) -> None:
    """A frame's columns against those fit saw (``feature_names_in_``), as scikit-learn checks
    them: the same names in the same order, or a ValueError naming the first that differs. An
    array (no names) is taken by position."""
    if names is None or expected is None or names == expected:
        return
    missing = [c for c in expected if c not in names]
    extra = [c for c in names if c not in expected]
    if missing or extra:
        raise ValueError(
            f"{name}: its columns are not those fit saw: missing {missing[:5]}, unexpected {extra[:5]}; "
            "give the columns fit saw (feature_names_in_)"
        )
    at = next(i for i, (a, b) in enumerate(zip(names, expected)) if a != b)
    raise ValueError(
        f"{name}: column {at} is {names[at]!r} where fit saw {expected[at]!r}: the same columns in "
        "another order would score other features; select them in fit's order "
        "(X[ranker.feature_names_in_])"
    )


def _warn_by_position(name: str, names: Optional[List[str]], fitted: Any, stacklevel: int) -> None:
    """Warns, as scikit-learn does, where a table's columns are read by position: a frame of
    named columns for a model fitted on an array, or the reverse (``names``: the table's feature
    names; ``fitted``: the model's, or None)."""
    if (names is None) != (fitted is None):
        import warnings

        warnings.warn(
            f"{name} has {'no ' if names is None else ''}feature names, but the model was fitted "
            f"{'with' if names is None else 'without'} feature names: its columns are read by position",
            UserWarning,
            stacklevel=stacklevel,
        )


def _grades(name: str, y: Any) -> _np.ndarray:
    y = _np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name}: expected one relevance grade per row (1-D), got shape {y.shape}")
    if not (_np.issubdtype(y.dtype, _np.floating) or _np.issubdtype(y.dtype, _np.integer)
            or y.dtype == _np.bool_):
        raise ValueError(f"{name}: expected integer relevance grades, got dtype {y.dtype}")
    return _np.ascontiguousarray(y, dtype=_np.float64)


def _check_k(k: Any) -> None:
    """Refuses a cutoff of NDCG@k that is not a whole number of places."""
    if isinstance(k, bool) or not isinstance(k, (int, _np.integer)) or not 1 <= k <= 1_000_000:
        raise ValueError(f"k: {k!r}: expected a whole number of places in 1..=1,000,000")


def _qids(name: str, qid: Any) -> _np.ndarray:
    qid = _np.asarray(qid)
    if qid.ndim != 1:
        raise ValueError(f"{name}: expected one query id per row (1-D), got shape {qid.shape}")
    # A missing value (pandas' nullable Int64 with NA reads as float NaN or None): its row.
    missing = [i for i, q in enumerate(qid.tolist())
               if q is None or (isinstance(q, float) and q != q) or type(q).__name__ == "NAType"] \
        if qid.dtype.kind in "fO" else []
    if missing:
        raise ValueError(
            f"{name}, row {missing[0] + 1}: a missing value: expected a query id on every row "
            f"({len(missing)} row{'s' if len(missing) > 1 else ''} without one)"
        )
    # An empty list reads as float64: the library says what is wrong with no rows.
    if qid.size and not _np.issubdtype(qid.dtype, _np.integer):
        raise ValueError(f"{name}: expected integer query ids, got dtype {qid.dtype}")
    if qid.size and _np.issubdtype(qid.dtype, _np.signedinteger) and qid.min() < 0:
        raise ValueError(f"{name}: query ids must be >= 0 (found {qid.min()})")
    return _np.ascontiguousarray(qid, dtype=_np.uint64)


def _split(prefix: str, x: Any, y: Any, qid: Any, z: Any) -> Tuple[Any, ...]:
    """One split's arrays in the dtypes the library takes."""
    if qid is None:
        raise ValueError(f"{prefix}qid: a query id per row is required (rows of a query contiguous)")
    x = _features(prefix + "X", x)
    z = None if z is None else _features(prefix + "privileged", _as_array(z, prefix + "privileged"))
    grades, qids = _grades(prefix + "y", y), _qids(prefix + "qid", qid)
    # Each array of the wrong length is named as itself, against X's rows.
    for what, values, per in [("y", grades, "relevance grade"), ("qid", qids, "query id")]:
        if len(values) != x.shape[0]:
            raise ValueError(
                f"{prefix}{what}: {len(values)} values for {x.shape[0]} rows of {prefix}X: expected one {per} per row"
            )
    return (x, grades, qids, z)


class Ranker(_EstimatorBase):
    """A ranking model trained with one method of the PFD paper's Table 2 (or Ranking
    Distillation), LightGBM / XGBoost style, and a scikit-learn estimator: ``clone``,
    ``get_params`` and ``set_params`` are exact, fitted attributes appear after :meth:`fit`,
    :meth:`score` is NDCG@k, and a fitted ranker pickles, deep-copies and saves with joblib.

    Parameters
    ----------
    method : str, default "pfd"
        ``"pfd"`` (a teacher that sees the privileged features distils into a student that does
        not) or any other name of :data:`METHODS` (underscores are fine too).
    **settings
        Every other keyword is a setting of the library's :class:`Setup`, by its name, with the
        library's default: ``loss`` (a name of :data:`LOSSES`), ``epochs``, ``patience``, ``lr``,
        ``weight_decay``, ``lr_schedule`` (``"constant"``, ``"cosine"``), ``input_noise``,
        ``dropout``, ``norm`` (``"none"``, ``"layer"``: layer normalisation of the hidden layers),
        ``attention_heads`` (0: the MLP; H: the listwise family, self-attention with H heads
        over each query's documents, whose ``predict`` then takes ``qid``),
        ``teacher_attention_heads`` (the teachers' family; default: the student's), ``ensemble`` (members of the student whose scores are averaged), ``alpha``,
        ``teacher_temperature``, ``widths``, ``teacher_widths``, ``batch_docs``, ``teachers``,
        ``rd``, ``objective``, ``idcg_zero``, ``backend`` ("auto", "cpu", "gpu"); ``teacher``, a
        teacher trained elsewhere for ``pfd``: a LightGBM or XGBoost model (a file's path, a
        ``lightgbm.Booster``, an ``xgboost.Booster`` or their rankers, trained on X beside the
        privileged features and scored as their libraries score) or its scores (an array of the
        training rows' scores, or ``(train_scores, eval_scores)`` with an eval_set), with
        ``teacher_columns`` (``"auto"``, ``"from-1"``, ``"from-0"``); the data's ``labels``
        (``"gumbel"``: the paper's labelling of y; ``"grades"``: y itself, as LightGBM trains,
        with a ``loss`` that learns grades: {graded_losses}), ``tau_target``, ``t``,
        ``min_group_size``, ``data_seed``, ``transform`` (a name of :data:`TRANSFORMS`: how the
        inputs are transformed, fitted on the training rows and carried by the model),
        ``privileged`` (a split of X such as ``"top:30%"`` when no privileged array is given),
        ``log_labels``, ``logs``; ``seed`` (the model's initialisation and batch order).

        The values are kept as given (``get_params`` returns them, as scikit-learn's ``clone``
        expects) and checked by :meth:`fit` (and :attr:`setup`), as scikit-learn's estimators
        check theirs: an unknown name or a bad value is a ``ValueError`` naming it.

    Attributes
    ----------
    n_features_in_ : int
        The width of the X that fit saw.
    feature_names_in_ : numpy.ndarray of str
        X's column names, when fit saw a data frame; :meth:`predict` checks them.
    best_epoch_ : int
        The epoch whose model was kept (best validation NDCG@8); of an ensemble, the first
        member's (each member keeps its own best epoch).
    best_valid_ndcg_ : float
        The validation NDCG@8 of the kept model (of an ensemble, of its members' mean scores).
    evals_result_ : dict
        Per epoch, as LightGBM's: ``{"training": {"loss": [...]}, "valid_0": {"ndcg@8": [...]}}``;
        of an ensemble, the first member's.
    members_evals_result_ : list of dict
        Each member's ``evals_result_``, in member order (one entry for one model).
    members_best_epoch_ : list of int
        Each member's kept epoch, in member order.
    history_ : list of dict
        The student's epochs as the library logs them (loss, validation NDCG@8, time); of an
        ensemble, the first member's (``run_["student"]["later_members"]`` holds the others').
    run_ : dict
        The whole training run: the student, the teachers, the preparation.
    """

    def __init__(self, method: str = "pfd", **settings: Any) -> None:
        self._params = dict(settings, method=method)

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The settings, as keywords that ``Ranker(**params)`` takes back: every field of the
        setup (those of ``data`` included, its ``source`` aside) with ``method``, ``seed``,
        ``teacher`` and ``teacher_columns``. Values given to the constructor or to
        :meth:`set_params` are returned as given (the same objects); the others are the
        library's defaults."""
        setup = _defaults()
        data = setup.pop("data")
        data.pop("source", None)
        data.pop("teacher", None)
        methods = setup.pop("methods")
        params: Dict[str, Any] = {"method": methods[0], "seed": setup.pop("first_seed")}
        params.update(setup)
        params.update(data)
        params.update(teacher=None, teacher_columns="auto")
        params.update(self._params)
        return params

    def set_params(self, **settings: Any) -> "Ranker":
        """Changes settings by name, as the constructor takes them; :meth:`fit` checks them."""
        self._params = dict(self._params, **settings)
        return self

    @property
    def _setup(self) -> Dict[str, Any]:
        """The setup the settings make (the library's, checked and completed)."""
        return _setup_dict(_setup_keywords(self._params))

    def _serving(self, name: str) -> Any:
        """A setting that scoring reads (``backend``, ``idcg_zero``), checked alone: a training
        setting changed by ``set_params`` since fit (checked at the next fit) does not stop a
        fitted ranker from scoring."""
        return _setup_dict({k: v for k, v in self._params.items() if k == name})[name]

    @property
    def _teacher(self) -> Any:
        return self._params.get("teacher")

    @property
    def _teacher_columns(self) -> str:
        """The tree teacher's columns against X's, checked whether a teacher is given or not (as
        ``Setup`` checks it): None is ``auto``, its default."""
        columns = self._params.get("teacher_columns", "auto")
        if columns is None:
            return "auto"
        if not isinstance(columns, str) or columns not in ("auto", "from-1", "from-0"):
            raise ValueError(f"teacher_columns {columns!r}: expected auto, from-1 or from-0")
        return columns

    def _teacher_scores(
        self, X: Any, Z: Any, valid: Any, names: Optional[List[str]] = None, verbose: bool = True
    ) -> Tuple[Any, Dict[str, Any]]:
        """The teacher's scores of the training rows (``X`` beside ``Z``, as given to fit; the
        names of X's columns where it was a frame) and of the eval_set's (``valid``, as given),
        and ``data.teacher`` saying what they are: a model scores X beside the privileged
        features (the columns it was trained on), as its library does, checking their names
        against its own; scores are taken as given."""
        teacher = self._teacher
        if _is_scores(teacher):
            splits = _score_splits(teacher)
            if valid is not None and len(splits) < 2:
                raise ValueError(
                    "teacher: with an eval_set, give the teacher's scores of both, (train_scores, eval_scores)"
                )
            # Scores of a split fit does not have are a slip (another run's, a test split's).
            wanted = 1 if valid is None else 2
            if len(splits) > wanted:
                raise ValueError(
                    f"teacher: {len(splits)} splits of scores, and fit reads {wanted}: "
                    + ("X's alone (train_scores), as fit has no eval_set" if valid is None
                       else "X's and the eval_set's, (train_scores, eval_scores)")
                )
            train = _numbers(splits[0], "teacher's scores of X", flat=True)
            held = None if valid is None else _numbers(splits[1], "teacher's scores of the eval_set", flat=True)
            return (train, held), {"scores": "arrays given to fit"}
        model, name = _teacher_model(teacher)

        def score(x: Any, z: Any, x_names: Optional[List[str]], say: bool = False) -> list:
            # Any table fit takes, as fit reads it (a sparse matrix dense, no stored index).
            full = _np.asarray(_as_array(x, dtype=_np.float64), dtype=_np.float64)
            # The frames' column names, checked against a model trained on named columns.
            columns = x_names
            if z is not None:
                full = _np.hstack([full, _np.asarray(_as_array(z, "privileged", _np.float64), dtype=_np.float64)])
                z_names = _feature_names(z)
                columns = None if x_names is None or z_names is None else x_names + z_names
            scores, notes = _distillrank.forest_scores(
                model, name, _np.ascontiguousarray(full), self._teacher_columns, columns, "teacher_columns")
            if say:
                _say(notes, verbose)
            return scores.tolist()

        held = None if valid is None else score(
            valid[0], valid[3] if len(valid) == 4 else None, _feature_names(valid[0]))
        return (score(X, Z, names, say=True), held), {"scores": f"{name}'s scores of the arrays given to fit"}

    @property
    def setup(self) -> Setup:
        """The ranker's settings as a :class:`Setup` (its data source is set by ``fit``)."""
        return Setup.from_dict(self._setup)

    def fit(
        self,
        X: Any,
        y: Any,
        qid: Any = None,
        privileged: Any = None,
        eval_set: Optional[Any] = None,
        verbose: bool = True,
        position: Any = None,
    ) -> "Ranker":
        """Trains the method.

        Parameters
        ----------
        X : array-like of shape (n_docs, n_features)
            The documents' features (numpy, pandas, polars or pyarrow; float32 or float64). A
            data frame's column names are kept (``feature_names_in_``) and checked at
            :meth:`predict`.
        y : array-like of shape (n_docs,)
            Integer relevance grades 0..31, as LETOR files hold them.
        qid : array-like of shape (n_docs,)
            A query id per row, the rows of a query contiguous. Required.
        privileged : array-like of shape (n_docs, n_z), optional
            Features seen only in training, by the teachers; the student, and so
            :meth:`predict`, reads ``X`` alone. Without it, the ranker's ``privileged`` split of
            X's columns is used (the library's default for files).
        eval_set : tuple or list of one tuple, optional
            The validation split (early stopping, the kept epoch): ``(X, y, qid)`` or
            ``(X, y, qid, privileged)``, or LightGBM's form, a list holding one such tuple.
            Without it 10% of the training queries are held out.
        verbose : bool, default True
            Notes and one line per epoch, at INFO through the ``logging`` logger
            ``"distillrank"`` (shown on stderr when the application has configured no logging);
            warnings are logged at WARNING whatever ``verbose`` says.
        position : array-like of shape (n_docs,), optional
            Each row's displayed position (1-based integers), as LightGBM's
            ``Dataset(position=...)`` takes it: ``y`` is then each row's click (0 or 1), one
            impression a row, and the methods that learn from clicks (``naive``,
            ``ips-estimated``, ``dla``, ``two-tower``) train on the clicks by rank; a query's
            sessions are its rows at position 1. The labels are then y itself
            (``labels="grades"``), in the eval_set too.

        Returns
        -------
        Ranker
            ``self``. Training releases the GIL and stops on Ctrl-C (``KeyboardInterrupt``).
        """
        setup = self._setup
        self._teacher_columns  # refuses a bad value here, whether a teacher is given or not
        if "source" in self._params:
            # X and eval_set are the data: a source beside them would be read by nothing and
            # recorded as the ranker's data.
            raise ValueError(
                f"source {self._params['source']!r}: fit trains on X (and eval_set), which are the data; "
                "leave source out, or give the source to distillrank.compare"
            )
        names = _feature_names(X)
        # A tree teacher scores X as given (a sparse matrix in float64, as its library reads it).
        given = X
        X = _as_array(X)
        train = _split("", X, y, qid, privileged)
        positions = None
        if position is not None:
            positions = _np.asarray(position)
            if positions.shape != (train[0].shape[0],):
                raise ValueError(
                    f"position: expected one displayed position per row ({train[0].shape[0]}), "
                    f"got shape {positions.shape}"
                )
            if not _np.issubdtype(positions.dtype, _np.integer):
                raise ValueError(f"position: expected integers (1-based ranks), got {positions.dtype}")
            if (positions < 1).any():
                row = int(_np.argmax(positions < 1))
                raise ValueError(f"position, row {row + 1}: {positions[row]}: expected a displayed rank of 1 or more")
            positions = [int(p) for p in positions]
        if privileged is not None and setup["data"].get("privileged") is not None:
            raise ValueError(
                "privileged features given twice: as the privileged= array and as the split "
                f"'{setup['data']['privileged']}' of X; give one"
            )
        eval_set = _one_eval_set(eval_set)
        valid = None
        if eval_set is not None:
            xv, yv, qv = eval_set[:3]
            zv = eval_set[3] if len(eval_set) == 4 else None
            _check_names("eval_set X", _feature_names(xv), names)
            valid = _split("eval_set ", _as_array(xv, "eval_set X"), yv, qv, zv)
            if valid[0].shape[1] != train[0].shape[1]:
                raise ValueError(
                    f"eval_set: X has {valid[0].shape[1]} columns, the training X {train[0].shape[1]}"
                )
            if (valid[3] is None) != (train[3] is None) or (
                valid[3] is not None and valid[3].shape[1] != train[3].shape[1]
            ):
                raise ValueError(
                    "eval_set: its privileged features must match the training split's "
                    "(the same number of columns, or none on both)"
                )
        scores = None
        if self._teacher is not None:
            scores, described = self._teacher_scores(given, privileged, eval_set, names, verbose)
            setup["data"]["teacher"] = described
        if positions is not None:
            # y holds the clicks: the labels are y itself.
            setup["data"]["labels"] = "grades"
        model, run = _distillrank.fit(_json.dumps(setup), train, valid, verbose, scores, positions, _log)
        if names is not None:
            # Kept in the model, so that a saved and loaded ranker checks a frame's columns too.
            model = model.with_feature_names(names)
        self._model = model
        self.run_ = _json.loads(run)
        student = self.run_["student"]
        self.best_epoch_ = student["best_epoch"]
        self.best_valid_ndcg_ = student["best_valid_ndcg"]
        self.history_ = student["history"]
        later = student.get("later_members", [])
        self.members_evals_result_ = [_evals_result(h) for h in [self.history_] + [m["history"] for m in later]]
        self.members_best_epoch_ = [self.best_epoch_] + [m["best_epoch"] for m in later]
        self.evals_result_ = self.members_evals_result_[0]
        self.n_features_in_ = int(train[0].shape[1])
        # A data frame's column names, checked at predict as scikit-learn checks them.
        if names is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = _np.array(names, dtype=object)
        return self

    def _fitted(self) -> Any:
        model = self.__dict__.get("_model")
        if model is None:
            raise NotFittedError("this Ranker is not fitted: call fit (or distillrank.load) first")
        return model

    @property
    def model_config_(self) -> Dict[str, Any]:
        """The JSON half of the saved model: the columns it reads, its widths, its loss."""
        return _json.loads(self._fitted().config_json())

    def predict(self, X: Any, backend: Optional[str] = None, allow_missing_features: bool = False,
                qid: Any = None) -> _np.ndarray:
        """One float32 score per row of ``X`` (the width of the training X), the scores
        ``distillrank predict`` writes for the same model file. ``backend`` overrides the
        ranker's. ``allow_missing_features``: an ``X`` narrower than the training X has its
        missing last columns read as 0 (as ``distillrank predict --allow-missing-features``
        reads a sparse file whose last columns are all zero); without it, it is refused.
        ``qid``: a query id per row (each query's rows together); required by a listwise
        model (``attention_heads`` above 0), whose documents attend to the others of their
        query, and checked but not needed by an MLP."""
        fitted = self._fitted()
        if not isinstance(allow_missing_features, (bool, _np.bool_)):
            raise TypeError(
                f"allow_missing_features: expected True or False, not {allow_missing_features!r}"
            )
        expected = getattr(self, "feature_names_in_", None)
        names = _feature_names(X)
        _check_names("X", names, None if expected is None else list(expected))
        _warn_by_position("X", names, expected, stacklevel=3)
        x = _features("X", _as_array(X))
        # X's width against the training X's, in an array's words (the library's speak of a
        # file's highest feature index).
        width = getattr(self, "n_features_in_", None)
        if width is not None and x.shape[1] > width:
            raise ValueError(f"X: {x.shape[1]} columns, and the model was trained on {width}: another dataset?")
        if width is not None and x.shape[1] < width and not allow_missing_features:
            raise ValueError(
                f"X: {x.shape[1]} columns, and the model was trained on {width}: another dataset? If X "
                "only leaves out the last columns (all zero), allow_missing_features=True reads them as 0"
            )
        qids = None if qid is None else _qids("qid", qid).tolist()
        if qids is not None and len(qids) != x.shape[0]:
            raise ValueError(f"qid: {len(qids)} query ids for {x.shape[0]} rows of X: expected one per row")
        return fitted.predict(x, backend or self._serving("backend"), bool(allow_missing_features), qids)

    def score(self, X: Any, y: Any, qid: Any = None, k: int = 8) -> float:
        """Mean NDCG@k of :meth:`predict`'s scores against the relevance grades ``y`` over the
        queries of ``qid`` (required; rows of a query contiguous), with the gains of ``distillrank
        eval`` and the ranker's ``idcg_zero`` convention for queries without a relevant
        document. Higher is better, as scikit-learn's model selection expects. NaN when no query
        counts, or when no query holds two different grades (any order is as good: ``distillrank
        eval``'s n/a), said in a warning."""
        if qid is None:
            raise ValueError("qid: a query id per row is required to score a ranking (NDCG@k per query)")
        _check_k(k)
        scores = self.predict(X, qid=qid)
        grades = _grades("y", y)
        if len(grades) != len(scores):
            raise ValueError(f"y: {len(grades)} values for {len(scores)} rows of X: expected one relevance grade per row")
        value, notes = _distillrank.ndcg(scores.tolist(), grades.tolist(), _qids("qid", qid).tolist(), int(k),
                                         self._serving("idcg_zero"))
        # What ``distillrank eval`` says beside its figures: a model that does not rank, labels
        # no query mixes (NaN, as eval's n/a).
        _say([(True, note) for note in notes])
        return float("nan") if value is None else float(value)

    def save(self, prefix: str) -> Tuple[str, str]:
        """Writes ``PREFIX.safetensors`` + ``PREFIX.json`` (what ``distillrank predict --model``
        and the page read); returns their paths."""
        weights, config = self._fitted().save(str(prefix))
        return str(weights), str(config)

    def to_onnx(self, path: str, metadata: Optional[Dict[str, str]] = None) -> None:
        """Writes the model as ONNX: raw feature vectors in (float32 [batch, X's width], input
        "features"), the scores of :meth:`predict` out (float32 [batch], output "score"). A
        listwise model's (``attention_heads`` above 0) batch is one query's documents, whole."""
        if metadata is not None and not isinstance(metadata, dict):
            raise TypeError(f"metadata: expected a dict of text keys and values, not {type(metadata).__name__}")
        for key, value in (metadata or {}).items():
            # ONNX's metadata_props hold text: None or a number written as text would read back
            # as what it was not.
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(f"metadata: {key!r}: {value!r}: expected text keys and values")
        self._fitted().to_onnx(str(path), list((metadata or {}).items()))

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self._params.items() if k != "method")
        return f"Ranker(method={self._params['method']!r}{', ' if given else ''}{given})"


# The losses that learn graded targets, from the library's entries, named where the docstring
# says which losses train on the grades.
_GRADED_LOSSES = tuple(loss["name"] for loss in _CHOICES["losses"] if loss["graded"])
Ranker.__doc__ = (Ranker.__doc__ or "").replace(
    "{graded_losses}", ", ".join(f'``"{name}"``' for name in _GRADED_LOSSES)
)


def _setup_keywords(params: Dict[str, Any]) -> Dict[str, Any]:
    """A ranker's keywords as :func:`_setup_dict` takes them: the teacher's two stay out (they
    are checked when fit scores the teacher)."""
    return {k: v for k, v in params.items() if k not in ("teacher", "teacher_columns")}


def _evals_result(history: List[Dict[str, Any]]) -> Dict[str, Dict[str, List[float]]]:
    """A model's epochs as LightGBM's ``evals_result_`` shapes them."""
    return {
        "training": {"loss": [e["data_loss"] for e in history]},
        "valid_0": {"ndcg@8": [e["valid_ndcg"] for e in history]},
    }


def _one_eval_set(eval_set: Any) -> Optional[Tuple[Any, ...]]:
    """``eval_set`` as one tuple: ``(X, y, qid[, privileged])``, or a list holding one (LightGBM's
    and XGBoost's form)."""
    if eval_set is None:
        return None
    if isinstance(eval_set, list) and len(eval_set) >= 1 and all(isinstance(e, (tuple, list)) for e in eval_set):
        if len(eval_set) > 1:
            raise ValueError(
                f"eval_set: {len(eval_set)} validation splits given; the ranker keeps the epoch that is best "
                "on one, so give one (X, y, qid) tuple"
            )
        eval_set = eval_set[0]
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (3, 4):
        raise ValueError("eval_set: expected (X, y, qid), (X, y, qid, privileged) or a list of one such tuple")
    return tuple(eval_set)


def load(prefix: str, **settings: Any) -> Ranker:
    """A fitted :class:`Ranker` from ``PREFIX.safetensors`` + ``PREFIX.json`` (saved by
    :meth:`Ranker.save`, ``distillrank train --save``, ``compare``'s students or the page).
    Keywords set the ranker's settings (``backend="cpu"``): its ``get_params()`` are those
    keywords and the defaults, not the settings that trained the saved model (``model_config_``
    says what the model is, and its ``setup`` what trained it, where recorded), so a ``clone``
    of it fits with the defaults. A model saved from a data frame checks a frame's columns
    against the names it was fitted on (``feature_names_in_``), as the fitted ranker did."""
    if not isinstance(prefix, (str, _os.PathLike)):
        raise TypeError(
            f"prefix: expected a saved model's prefix (a str or a path: PREFIX.json + PREFIX.safetensors), "
            f"not {type(prefix).__name__}"
        )
    if not _os.fspath(prefix).strip():
        raise ValueError("prefix is empty: name a saved model's prefix (PREFIX.json + PREFIX.safetensors)")
    ranker = Ranker(**settings)
    ranker._model = _distillrank.Model.load(_os.fspath(prefix))
    # It predicts, so it is fitted as scikit-learn sees it (check_is_fitted): the width of the X
    # it reads. The training run's attributes (run_, best_epoch_, ...) stay with the run that made it.
    ranker.n_features_in_ = int(ranker.model_config_["source_features"])
    names = ranker.model_config_.get("feature_names")
    if names is not None:
        ranker.feature_names_in_ = _np.array(names, dtype=object)
    return ranker


def compare(setup: Any = None, verbose: bool = True, base: Optional[str] = None) -> Dict[str, Any]:
    """Runs the comparison ``setup`` describes (a :class:`Setup`, a dict or a JSON string; None:
    the defaults), as ``distillrank compare --setup`` does, and returns the object its
    ``results.json`` holds: ``data``, ``preparation``, ``config``, ``setup`` and ``methods`` (per
    method the test NDCG@k mean, std and per seed, the teachers', the runs). On files,
    ``Setup(prepared_cache=True, ...)`` (``data.prepared_cache``) keeps the prepared splits beside
    the training file, as ``--prepared-cache`` does, and a later run with the same data settings
    reads them instead of preparing again.

    Relative file names in the setup are read against ``base``, the folder they are relative to
    (``distillrank compare --setup FILE`` reads them against FILE's folder); without it they are
    refused by field, so that a setup means the same data in every door."""
    text = _setup_json(Setup() if setup is None else setup)
    return _json.loads(_distillrank.compare(text, verbose, None if base is None else str(base), _log))


#: The settings :func:`sweep` moves, as the library names them: ``alpha``, ``tau-target``, ...
SWEEP_PARAMS: Tuple[str, ...] = tuple(_CHOICES["sweep_params"])


def sweep(
    param: str, values: Sequence[float], setup: Any = None, verbose: bool = True, base: Optional[str] = None
) -> Dict[str, Any]:
    """Sweeps ``param`` (a name of :data:`SWEEP_PARAMS`, underscores are fine too) over
    ``values``, every method of ``setup`` (a :class:`Setup`, a dict or a JSON string; None: the
    defaults) at each value, as ``distillrank sweep`` does, and returns the object its
    ``sweep.json`` holds (without ``command``): ``param``, ``values``, ``config`` and ``points``,
    each value's paired ``tests``, positive training groups and per method the students' test
    NDCG@8 (mean, std), the gain over no distillation, the graded NDCG@8 and the teachers'.
    Relative file names are read against ``base``, as in :func:`compare`."""
    text = _setup_json(Setup() if setup is None else setup)
    name = param.replace("_", "-") if isinstance(param, str) else param
    folder = None if base is None else str(base)
    return _json.loads(_distillrank.sweep(text, name, _numbers(values, "values"), verbose, folder, _log))


def objectives(setup: Any = None, verbose: bool = True, base: Optional[str] = None) -> Dict[str, Any]:
    """Runs the global objectives' comparison (log-loss against AUC-PR, recall at precision, ...
    trained through Lagrange multipliers) that ``setup`` describes (a dict or a JSON string: a
    whole setup, whose ``objectives`` section it runs, as in the ``setup.json`` that
    ``distillrank objectives`` writes, or that section alone; None: the defaults), as
    ``distillrank objectives --setup`` does, and returns the object its ``results.json`` holds
    (without ``command`` and ``seconds``): ``data``, ``examples``, ``config``, ``seeds`` and per
    objective every test metric (mean, std and per seed), the constraint and the runs. Relative
    file names are read against ``base``, as in :func:`compare`."""
    text = "{}" if setup is None else _setup_json(setup)
    return _json.loads(_distillrank.objectives(text, verbose, None if base is None else str(base), _log))


def _path(name: str, value: Any) -> str:
    """The file ``value`` names, as the argument ``name`` of a reader: a str or a path (``bytes``
    and numbers name no file here)."""
    if not isinstance(value, (str, _os.PathLike)) or isinstance(_os.fspath(value), bytes):
        raise TypeError(f"{name}: expected a file's path (a str or a pathlib.Path), not {type(value).__name__}")
    return _os.fspath(value)


def read_letor(path: str, query: Optional[str] = None, feature_names: bool = False) -> Tuple[Any, ...]:
    """Reads a LETOR / SVMlight ranking file (gzip or not), or Parquet (a file or a folder of
    part files: columns ``qid``, ``label`` and float or double features; nulls are entries left
    out), with the library's reader: ``X`` float32 (n_docs, n_features), ``y`` int32 grades,
    ``qid`` int64 per row. ``query``: a LightGBM ``.query`` file of group sizes, for files
    without ``qid:``. ``feature_names``: also return the feature columns' names, a list of str
    where the file names them (Parquet), None where it does not (LETOR text), as
    ``(X, y, qid, names)``; a frame of X under those names (``pandas.DataFrame(X,
    columns=names)``) gives ``Ranker.fit`` the names it checks at ``predict``. A malformed file
    raises ``ValueError`` naming file:line:column (a Parquet file: its row and column)."""
    if not isinstance(feature_names, (bool, _np.bool_)):
        raise ValueError(f"feature_names: {feature_names!r}, expected True or False")
    split, names = _distillrank.read_letor(_path("path", path), None if query is None else _path("query", query))
    return (*split, names) if feature_names else split


def read_impressions(path: str, data: str, query: Optional[str] = None) -> Dict[str, Any]:
    """Reads an impressions log (tab-separated ``qid session position doc click``, as ``distillrank
    data simulate-logs`` writes it beside the training file) against the LETOR file ``data`` whose
    queries and documents it names (``doc``: the 1-based row within its query). Returns the clicks
    by document and displayed rank, the table the methods that learn from clicks read:
    ``impressions`` and ``clicks`` int64 (n_docs, shown), ``qid`` int64 per document, and
    ``sessions``, the most sessions of a query; where the log has the columns, ``conversions``
    (int64 per document, summed over its sessions) and ``dwell_ms`` (int64 per document: its
    clicks' dwell summed in whole milliseconds). A bad log raises ``ValueError`` naming its line
    and field."""
    table = _json.loads(_distillrank.read_impressions(
        _path("path", path), _path("data", data), None if query is None else _path("query", query)))
    shown = table["shown"]
    offsets = table["group_offsets"]
    qid = _np.repeat(_np.asarray(table["qids"], dtype=_np.int64), _np.diff(_np.asarray(offsets, dtype=_np.int64)))
    out = {
        "impressions": _np.asarray(table["impressions"], dtype=_np.int64).reshape(-1, shown),
        "clicks": _np.asarray(table["clicks"], dtype=_np.int64).reshape(-1, shown),
        "qid": qid,
        "sessions": table["sessions"],
    }
    for key in ("conversions", "dwell_ms"):
        if table.get(key) is not None:
            out[key] = _np.asarray(table[key], dtype=_np.int64)
    return out


def mq2008() -> Dict[str, Tuple[_np.ndarray, _np.ndarray, _np.ndarray]]:
    """MQ2008 Fold1 (LETOR 4.0), bundled in the library: ``{"train": (X, y, qid), "valid": ...,
    "test": ...}``, 46 features, grades 0..2."""
    return _distillrank.mq2008()


def paired_test(
    a: Sequence[Sequence[Optional[float]]],
    b: Sequence[Sequence[Optional[float]]],
    seed: int = 0,
    a_name: str = "a",
    b_name: str = "b",
    metric: str = "ndcg@8",
) -> Dict[str, Any]:
    """The paired significance test of methods ``a`` and ``b``, each given per seed per test
    query (``None`` where the metric is undefined): the mean difference a - b, its bootstrap 95%
    interval, the sign-flip test's p and the smallest detectable difference."""
    def per_seed(name: str, values: Any) -> List[List[Optional[float]]]:
        rows = []
        for s, seed_values in enumerate(values):
            if isinstance(seed_values, (str, bytes)) or not hasattr(seed_values, "__iter__"):
                raise ValueError(
                    f"{name}: seed {s} is {seed_values!r}: expected one list of per-query values per seed "
                    "([[q1, q2, ...], ...]; one seed is [[q1, q2, ...]])"
                )
            row = []
            for q, v in enumerate(seed_values):
                try:
                    row.append(None if v is None else float(v))
                except (TypeError, ValueError):
                    raise ValueError(f"{name}: seed {s}, query {q}: {v!r} is not a number or None") from None
            rows.append(row)
        return rows

    if isinstance(seed, bool) or not isinstance(seed, (int, _np.integer)) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: {seed!r}: expected a whole number in 0..2**64")
    return _json.loads(_distillrank.paired_test(a_name, b_name, metric, per_seed("a", a), per_seed("b", b), int(seed)))

"""Type stubs of distillrank, the Python door of the Rust library."""

import logging
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

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

__version__: str
METHODS: Tuple[str, ...]
LOSSES: Tuple[str, ...]
TRANSFORMS: Tuple[str, ...]

_ArrayLike = npt.ArrayLike
_Split = Tuple[npt.NDArray[np.float32], npt.NDArray[np.int32], npt.NDArray[np.int64]]
_NamedSplit = Tuple[npt.NDArray[np.float32], npt.NDArray[np.int32], npt.NDArray[np.int64], Optional[List[str]]]

class Setup:
    """One comparison: data, privileged split, methods, losses, training settings, backend."""

    def __init__(self, **settings: Any) -> None: ...
    @classmethod
    def from_json(cls, text: str) -> Setup: ...
    @classmethod
    def from_dict(cls, value: Dict[str, Any]) -> Setup: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def __getattr__(self, name: str) -> Any: ...
    def __eq__(self, other: object) -> bool: ...

class NotFittedError(ValueError, AttributeError):
    """A Ranker used before fit."""

logger: logging.Logger

class Ranker:
    """A ranking model trained with one method (PFD by default), LightGBM / XGBoost style; a
    scikit-learn estimator."""

    run_: Dict[str, Any]
    n_features_in_: int
    feature_names_in_: npt.NDArray[np.object_]
    best_epoch_: int
    best_valid_ndcg_: float
    history_: List[Dict[str, Any]]
    evals_result_: Dict[str, Dict[str, List[float]]]
    members_evals_result_: List[Dict[str, Dict[str, List[float]]]]
    members_best_epoch_: List[int]

    def __init__(
        self,
        method: str = ...,
        *,
        loss: str = ...,
        epochs: int = ...,
        patience: int = ...,
        lr: float = ...,
        lr_schedule: str = ...,
        alpha: float = ...,
        teacher_temperature: float = ...,
        widths: Sequence[int] = ...,
        teacher_widths: Optional[Sequence[int]] = ...,
        batch_docs: int = ...,
        teachers: int = ...,
        teacher: Any = ...,
        teacher_columns: str = ...,
        seed: int = ...,
        backend: str = ...,
        labels: str = ...,
        transform: str = ...,
        privileged: Optional[str] = ...,
        tau_target: Optional[float] = ...,
        t: Optional[float] = ...,
        min_group_size: int = ...,
        data_seed: int = ...,
        idcg_zero: str = ...,
        ensemble: int = ...,
        dropout: float = ...,
        norm: str = ...,
        weight_decay: float = ...,
        input_noise: float = ...,
        **settings: Any,
    ) -> None: ...
    def get_params(self, deep: bool = ...) -> Dict[str, Any]: ...
    def set_params(self, **settings: Any) -> Ranker: ...
    @property
    def setup(self) -> Setup: ...
    def fit(
        self,
        X: _ArrayLike,
        y: _ArrayLike,
        qid: Optional[_ArrayLike] = ...,
        privileged: Optional[_ArrayLike] = ...,
        eval_set: Optional[Any] = ...,
        verbose: bool = ...,
        position: Optional[_ArrayLike] = ...,
    ) -> Ranker: ...
    @property
    def model_config_(self) -> Dict[str, Any]: ...
    def predict(
        self,
        X: _ArrayLike,
        backend: Optional[str] = ...,
        allow_missing_features: bool = ...,
        qid: Optional[_ArrayLike] = ...,
    ) -> npt.NDArray[np.float32]: ...
    def score(self, X: _ArrayLike, y: _ArrayLike, qid: Optional[_ArrayLike] = ..., k: int = ...) -> float: ...
    def save(self, prefix: str) -> Tuple[str, str]: ...
    def to_onnx(self, path: str, metadata: Optional[Dict[str, str]] = ...) -> None: ...

_SetupLike = Union[Setup, Dict[str, Any], str, None]
SWEEP_PARAMS: Tuple[str, ...]

def load(prefix: str, **settings: Any) -> Ranker: ...
def compare(setup: _SetupLike = ..., verbose: bool = ..., base: Optional[str] = ...) -> Dict[str, Any]: ...
def sweep(
    param: str,
    values: Sequence[float],
    setup: _SetupLike = ...,
    verbose: bool = ...,
    base: Optional[str] = ...,
) -> Dict[str, Any]: ...
def objectives(
    setup: Union[Dict[str, Any], str, None] = ..., verbose: bool = ..., base: Optional[str] = ...
) -> Dict[str, Any]: ...
@overload
def read_letor(path: str, query: Optional[str] = ..., feature_names: Literal[False] = ...) -> _Split: ...
@overload
def read_letor(path: str, query: Optional[str] = ..., *, feature_names: Literal[True]) -> _NamedSplit: ...
@overload
def read_letor(path: str, query: Optional[str], feature_names: Literal[True]) -> _NamedSplit: ...
@overload
def read_letor(path: str, query: Optional[str] = ..., feature_names: bool = ...) -> Union[_Split, _NamedSplit]: ...
def read_impressions(path: str, data: str, query: Optional[str] = ...) -> Dict[str, Any]: ...
def mq2008() -> Dict[str, _Split]: ...
def paired_test(
    a: Sequence[Sequence[Optional[float]]],
    b: Sequence[Sequence[Optional[float]]],
    seed: int = ...,
    a_name: str = ...,
    b_name: str = ...,
    metric: str = ...,
) -> Dict[str, Any]: ...

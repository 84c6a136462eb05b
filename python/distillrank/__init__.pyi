"""Type stubs of distillrank, the Python door of the Rust library."""

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str
METHODS: Tuple[str, ...]
LOSSES: Tuple[str, ...]
TRANSFORMS: Tuple[str, ...]

ArrayLike = npt.ArrayLike
Split = Tuple[npt.NDArray[np.float32], npt.NDArray[np.int32], npt.NDArray[np.int64]]

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

class Ranker:
    """A ranking model trained with one method (PFD by default), LightGBM / XGBoost style."""

    run_: Optional[Dict[str, Any]]
    n_features_in_: int
    feature_names_in_: Optional[npt.NDArray[np.object_]]

    def __init__(
        self,
        method: str = ...,
        *,
        loss: str = ...,
        epochs: int = ...,
        patience: int = ...,
        lr: float = ...,
        alpha: float = ...,
        widths: Sequence[int] = ...,
        teacher_widths: Optional[Sequence[int]] = ...,
        batch_docs: int = ...,
        teachers: int = ...,
        teacher: Any = ...,
        teacher_columns: str = ...,
        seed: int = ...,
        backend: str = ...,
        privileged: Optional[str] = ...,
        tau_target: Optional[float] = ...,
        t: Optional[float] = ...,
        min_group_size: int = ...,
        data_seed: int = ...,
        ensemble: int = ...,
        dropout: float = ...,
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
        X: ArrayLike,
        y: ArrayLike,
        qid: ArrayLike = ...,
        privileged: Optional[ArrayLike] = ...,
        eval_set: Optional[Sequence[ArrayLike]] = ...,
        verbose: bool = ...,
        position: Optional[ArrayLike] = ...,
    ) -> Ranker: ...
    @property
    def best_epoch_(self) -> int: ...
    @property
    def best_valid_ndcg_(self) -> float: ...
    @property
    def history_(self) -> List[Dict[str, Any]]: ...
    @property
    def model_config_(self) -> Dict[str, Any]: ...
    def predict(self, X: ArrayLike, backend: Optional[str] = ...) -> npt.NDArray[np.float32]: ...
    def save(self, prefix: str) -> Tuple[str, str]: ...
    def to_onnx(self, path: str, metadata: Optional[Dict[str, str]] = ...) -> None: ...

def load(prefix: str, **settings: Any) -> Ranker: ...
def compare(setup: Union[Setup, Dict[str, Any], str, None] = ..., verbose: bool = ...) -> Dict[str, Any]: ...
def objectives(setup: Union[Dict[str, Any], str, None] = ..., verbose: bool = ...) -> Dict[str, Any]: ...
def read_letor(path: str, query: Optional[str] = ...) -> Split: ...
def read_impressions(path: str, data: str, query: Optional[str] = ...) -> Dict[str, Any]: ...
def mq2008() -> Dict[str, Split]: ...
def paired_test(
    a: Sequence[Sequence[Optional[float]]],
    b: Sequence[Sequence[Optional[float]]],
    seed: int = ...,
    a_name: str = ...,
    b_name: str = ...,
    metric: str = ...,
) -> Dict[str, Any]: ...

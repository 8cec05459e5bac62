# What svc uses of cloudpickle (see ../README.md); signatures as in cloudpickle 3.
import pickle
from collections.abc import Callable
from typing import IO, Any

def dumps(
    obj: Any, protocol: int | None = None, buffer_callback: Callable[[pickle.PickleBuffer], Any] | None = None
) -> bytes: ...

class Pickler(pickle.Pickler):
    def __init__(
        self,
        file: IO[bytes],
        protocol: int | None = None,
        buffer_callback: Callable[[pickle.PickleBuffer], Any] | None = None,
    ) -> None: ...

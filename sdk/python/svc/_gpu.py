"""The ``gpu=`` option: which GPU model a container gets, how many, and what to take instead.

``gpu="H100"``, ``gpu="A100-80GB:2"``, ``gpu="any"``, ``gpu=["H100", "A100"]`` (tried in order).
The check reads the form only; whether the platform has such GPUs is checked when it is deployed
(``gpu_unavailable``). Model names are brought to one form by the rule the platform applies to
what NVIDIA's tools report (core/model/gpus/gpu-names.ts, docs/gpus.md#names): upper case, words
joined by ``-``, a leading ``NVIDIA``/``Tesla``/``GeForce``/``Quadro`` dropped, ``RTX4090`` as
``RTX-4090``; so ``"h100"``, ``"NVIDIA H100"`` and ``"H100"`` are one model. The manifest carries
``{"models": [...], "count": n}``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from . import _checks
from ._checks import Problem

ANY_GPU = "any"
MAX_GPU_COUNT = 8
MAX_GPU_MODELS = 8
MAX_MODEL_CHARS = 40

_FORM = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _-]*")
_VENDOR_WORDS = ("NVIDIA", "TESLA", "GEFORCE", "QUADRO")
_LINE_WORDS = ("RTX", "GTX", "TITAN")
_LINE_GLUED = re.compile(r"(RTX|GTX|TITAN)([A-Z]?[0-9][A-Z0-9]*)")
_MEMORY_WORD = re.compile(r"([0-9]+)GB?")
_EXAMPLES = 'such as "H100", "A100-80GB:2", "any" or ["H100", "A100"]'


def canonical_model(name: str) -> str | None:
    """The manifest's form of a model name (``"a100 80gb"`` → ``A100-80GB``), or None when it names no family."""
    if name.strip().lower() == ANY_GPU:
        return ANY_GPU
    words: list[str] = []
    for word in re.split(r"[^A-Z0-9]+", name.upper()):
        glued = _LINE_GLUED.fullmatch(word)
        words += [glued.group(1), glued.group(2)] if glued else [word] if word else []
    while len(words) > 1 and words[0] in _VENDOR_WORDS:
        words.pop(0)
    if not words or _MEMORY_WORD.fullmatch(words[0]):
        return None
    line_model = words[0] in _LINE_WORDS and len(words) > 1 and not _MEMORY_WORD.fullmatch(words[1])
    family = f"{words[0]}-{words[1]}" if line_model else words[0]
    memory = next((m for m in (_MEMORY_WORD.fullmatch(w) for w in words[2 if line_model else 1 :]) if m), None)
    return family if memory is None else f"{family}-{int(memory.group(1))}GB"


def _entry(value: Any) -> tuple[str, int | None]:
    """One model of the option, ``"H100"`` or ``"H100:2"``: its manifest name and its count (None: not said).
    A Problem's text goes on from the entry (``names no GPU model``)."""
    if not isinstance(value, str):
        raise Problem(f"is a {_checks.type_name(value)}, not a string: name a GPU model, {_EXAMPLES}")
    model, colon, count_text = value.partition(":")
    model = model.strip()
    if model == "":
        raise Problem(f"names no GPU model: write the model first, {_EXAMPLES}")
    if not _FORM.fullmatch(model) or len(model) > MAX_MODEL_CHARS:
        raise Problem(
            f"is not a GPU model: write letters, digits, spaces and '-' (at most {MAX_MODEL_CHARS}), {_EXAMPLES}"
        )
    canonical = canonical_model(model)
    if canonical is None:
        raise Problem("names no GPU model (a size alone?): write one such as 'A100-80GB'")
    if not colon:
        return canonical, None
    if not re.fullmatch(r"\s*[0-9]+\s*", count_text):
        raise Problem(f"has a count that is not a whole number: write it after ':', such as '{canonical}:2'")
    count = int(count_text)
    if not 1 <= count <= MAX_GPU_COUNT:
        raise Problem(f"asks for {count} GPUs: a container takes 1 to {MAX_GPU_COUNT}")
    return canonical, count


def _checked(item: Any, in_list: bool) -> tuple[str, int | None]:
    try:
        return _entry(item)
    except Problem as problem:
        if not in_list:
            raise
        raise Problem(f"has {item!r}, which {problem}") from None


def _entries(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise Problem(f"is a {_checks.type_name(value)}: pass a GPU model, {_EXAMPLES}, or None for no GPU")
    entries = list(cast("Sequence[Any]", value))
    if not entries:
        raise Problem(
            'is an empty list: list at least one GPU model, such as ["H100", "A100"], or pass None for no GPU'
        )
    if len(entries) > MAX_GPU_MODELS:
        raise Problem(f"lists {len(entries)} models; a fallback list takes at most {MAX_GPU_MODELS}")
    return entries


@_checks.describe(type="gpu", max_count=MAX_GPU_COUNT, max_models=MAX_GPU_MODELS)
def check_gpu(value: Any) -> dict[str, Any]:
    """``{"models": [...], "count": n}``, or Problem saying what is wrong and how to write it."""
    models: list[str] = []
    counts: set[int] = set()
    in_list = not isinstance(value, str)
    for model, count in (_checked(item, in_list) for item in _entries(value)):
        if model in models:
            raise Problem(f"lists {model} twice: list each model once")
        if ANY_GPU in models:
            raise Problem(f"lists {model} after 'any', which takes every GPU: put 'any' last")
        models.append(model)
        if count is not None:
            counts.add(count)
    if len(counts) > 1:
        raise Problem(
            f"asks for {' and '.join(str(c) for c in sorted(counts))} GPUs in one list: every model of a fallback "
            "list gets the same count (write it once, as ['H100:2', 'A100'] or on each)"
        )
    return {"models": models, "count": counts.pop() if counts else 1}

"""A "model" that is slow to load, loaded once and checkpointed.

Real models take seconds to load (reading weights, building tokenizers, warming
caches). `on_start` is where that goes: each worker runs it once before its first
request, and the handler finds its return value in `context.on_start_value`.

With `checkpoint_enabled=True` svc runs `on_start` once, in a warmed template
process, and forks every later container from it: new containers start with the
model already in memory instead of loading it again. Scaling up (or back from zero)
then costs a fork, not the 2-second load.

Try it on your machine first; nothing here needs the platform:

    python app.py                        # loads the model and predicts, in this process
    python -m svc.manifest app.py        # what the platform will read

Then serve it with `svc serve app.py` (see README.md).
"""

import os
import time
from dataclasses import dataclass

import svc

app = svc.App("checkpointed-model")
image = svc.Image(python_version="3.11")

# The "weights" of a tiny sentiment model: a score per word.
WEIGHTS = {
    "love": 2.0,
    "great": 1.5,
    "good": 1.0,
    "nice": 1.0,
    "fast": 0.5,
    "happy": 1.5,
    "hate": -2.0,
    "awful": -1.5,
    "bad": -1.0,
    "slow": -0.5,
    "broken": -1.5,
    "sad": -1.5,
}


def load_model() -> dict:
    """Loads the model: slow on purpose, like reading real weights from disk.

    It runs once per worker, or with checkpoint_enabled once per deployment (in the
    template every container is forked from). What it returns must be a plain value
    in memory (no open sockets or threads: a fork does not copy those).
    """
    started = time.monotonic()
    time.sleep(2)  # stands for reading a few hundred MB of weights
    weights = {word: score for word, score in WEIGHTS.items()}
    return {
        "name": "tiny-sentiment",
        "version": "1.0",
        "weights": weights,
        "load_seconds": round(time.monotonic() - started, 2),
        # Which process loaded it: with checkpoints, the template's pid in every container.
        "loaded_by_pid": os.getpid(),
    }


@dataclass
class Prediction:
    label: str  # "positive", "negative" or "neutral"
    score: float  # sum of the known words' weights
    model: str  # name and version of the model that answered
    loaded_by_pid: int  # the process that ran on_start
    served_by_pid: int  # the worker that served this request


# checkpoint_enabled=True: on_start runs once, in a template; containers are forks of
# it. min_containers=1 keeps one container ready; up to 3 start under load, each in a
# fork's time. concurrency=4: a worker runs four predictions at once (sync handlers
# run in a pool of that many threads; the model is read-only, so they can share it).
@app.endpoint(
    route="/predict",
    methods=["POST"],
    image=image,
    on_start=load_model,
    checkpoint_enabled=True,
    concurrency=4,
    autoscaler=svc.Autoscaler(min_containers=1, max_containers=3, tasks_per_container=4),
    keep_warm=300,
)
def predict(text: str, context: svc.Context) -> Prediction:
    """Scores the sentiment of `text` with the model on_start loaded."""
    model = context.on_start_value  # what load_model returned, already in memory
    words = [word.strip(".,!?;:").lower() for word in text.split()]
    score = sum(model["weights"].get(word, 0.0) for word in words)
    label = "positive" if score > 0 else "negative" if score < 0 else "neutral"
    return Prediction(
        label=label,
        score=score,
        model=f"{model['name']}@{model['version']}",
        loaded_by_pid=model["loaded_by_pid"],
        served_by_pid=os.getpid(),
    )


if __name__ == "__main__":
    # Locally there is no platform to call on_start: do it by hand and pass a Context.
    value = load_model()
    print(predict.local("I love this great product!", context=svc.Context(workload="predict", on_start_value=value)))

"""A class that loads its model once per worker from a volume, then scores many texts.

``Sentiment`` mounts the volume ``lexicons`` read-only at ``/lexicons`` and loads a word lexicon
(``/lexicons/<lexicon>.json``) in its ``@svc.enter()`` method, once in each worker, then scores texts in
its ``@svc.method()``. Each value of its ``lexicon`` parameter runs in containers of its own. ``rate`` is
served over HTTP once deployed (``svc deploy app.py``). Run it against ``svc server``::

    python app.py

which first uploads ``models/`` into the volume (``svc volume put lexicons models/`` does the same).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import svc

app = svc.App("model-class")
lexicons = svc.Volume.from_name("lexicons", create_if_missing=True)


@app.cls(memory="256Mi", autoscaler=svc.Autoscaler(max_containers=2), volumes={"/lexicons": lexicons.read_only()})
class Sentiment:
    """Scores a text: the sum of its words' weights in the lexicon."""

    lexicon: str = svc.parameter(default="basic")

    @svc.enter()
    def load(self) -> None:
        self.weights: dict[str, float] = json.loads(Path(f"/lexicons/{self.lexicon}.json").read_text())
        # In the worker's log (svc logs model-class), once per worker: not once per call.
        print(f"loaded the {self.lexicon} lexicon ({len(self.weights)} words) in worker {os.getpid()}", flush=True)

    @svc.method()
    def score(self, text: str) -> float:
        return sum(self.weights.get(word, 0.0) for word in text.lower().split())

    @svc.method()
    def worker(self) -> int:
        return os.getpid()

    # Served over HTTP too, by a workload of its own (sentiment-rate), whose workers load the lexicon the same way.
    @svc.endpoint(route="/rate", methods=["POST"])
    def rate(self, text: str) -> dict[str, float | str]:
        score = self.score(text)
        return {"lexicon": self.lexicon, "score": score, "label": "positive" if score > 0 else "negative"}

    @svc.exit()
    def close(self) -> None:
        print(f"worker {os.getpid()} stops", flush=True)


REVIEWS = ["I love it, great", "fine", "awful, I hate it", "good but bad"]

if __name__ == "__main__":
    lexicons.put_dir(Path(__file__).parent / "models")  # the model files, into the volume the workers mount
    basic, strict = Sentiment(), Sentiment(lexicon="strict")
    print("one:", basic.score.remote("great fine"))
    print("map:", list(basic.score.map(REVIEWS)))
    print("strict:", list(strict.score.map(REVIEWS)))
    call = strict.score.spawn("bad bad")  # kept by the server: FunctionCall.from_id(call.object_id) elsewhere
    print("spawned:", call.get(timeout=60))
    print("two pools:", basic.worker.remote() != strict.worker.remote(), file=sys.stderr)

"""The classes of `npm run bench:classes`: an ``enter`` that takes 2 s (a model loading), a method as cheap as the
plain function beside it, so that a warm call of each costs what svc adds and nothing else; and the same class
checkpointed (its 2 s in an ``enter(snap=True)``) beside a function with no set-up at all, both idle after 1 s, so
that a call after a pause needs a new container of each."""

import time

import svc

app = svc.App("bench-classes")


@app.cls()
class Model:
    @svc.enter()
    def load(self) -> None:
        time.sleep(2.0)
        self.weights = 3

    @svc.method()
    def predict(self, x: int) -> int:
        return x * self.weights


@app.function
def plain(x: int) -> int:
    return x * 3


@app.cls(checkpoint_enabled=True, keep_warm_seconds=1)
class SnapModel:
    @svc.enter(snap=True)
    def load(self) -> None:
        time.sleep(2.0)
        self.weights = 3

    @svc.method()
    def predict(self, x: int) -> int:
        return x * self.weights


@app.function(keep_warm_seconds=1)
def bare(x: int) -> int:
    return x * 3

"""The class of `npm run bench:classes`: an ``enter`` that takes 2 s (a model loading), a method as cheap as the
plain function beside it, so that a warm call of each costs what svc adds and nothing else."""

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

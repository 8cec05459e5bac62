"""Two endpoints whose on_start takes 2 s, one with checkpoint_enabled: for bench/checkpoint.ts."""

import time

import svc

app = svc.App("slow-start")


def load_model() -> dict:
    time.sleep(2)  # stands in for loading weights
    return {"loaded": True}


@app.endpoint(route="/", methods=["GET"], workers=2, checkpoint_enabled=True, on_start=load_model, authorized=False)
def warm() -> str:
    return "warm"


@app.endpoint(route="/", methods=["GET"], workers=2, on_start=load_model, authorized=False)
def cold() -> str:
    return "cold"

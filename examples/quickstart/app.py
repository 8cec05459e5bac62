"""Quickstart: one function and two HTTP endpoints.

Try it on your machine first; nothing here needs the platform:

    python app.py                                  # runs the function locally
    python -m svc.manifest app.py                  # what the platform will read

Then serve it with `svc serve` (see README.md).
"""

from dataclasses import dataclass

import svc

# An app is a named group of workloads. A module defines exactly one.
app = svc.App("quickstart")

# The image is the Python environment the workloads run in. Pin the Python
# version; add packages with .add_python_packages(["numpy>=1.26"]).
image = svc.Image(python_version="3.11")


# A function runs on demand. Locally it is a plain call, square(7); on a server (or the
# platform `svc serve` runs) `svc run app.py:square 7` or square.remote(7) (see call_remote.py).
@app.function(image=image)
def square(x: int) -> int:
    """Squares a number."""
    return x * x


# A public endpoint: anyone may call GET /hello?name=Ada, no token needed.
# For GET, the arguments come from the query string and are converted by the
# type hints (here a str, with a default).
@app.endpoint(route="/hello", methods=["GET"], authorized=False, image=image)
def hello(name: str = "world") -> dict:
    """Says hello to whoever asks."""
    return {"message": f"Hello, {name}!"}


# Returning a dataclass gives callers a typed JSON object.
@dataclass
class Greeting:
    message: str
    length: int


# A protected endpoint (the default): callers send `Authorization: Bearer <token>`.
# For POST, the arguments are the fields of the JSON body: {"name": "Ada", "excited": true}.
@app.endpoint(route="/greet", methods=["POST"], image=image)
def greet(name: str, excited: bool = False) -> Greeting:
    """Greets someone by name."""
    message = f"Hello, {name}{'!' if excited else '.'}"
    return Greeting(message=message, length=len(message))


if __name__ == "__main__":
    # Decorated functions stay plain Python: call them directly or with .local().
    print(square(7))
    print(greet.local("Ada", excited=True))

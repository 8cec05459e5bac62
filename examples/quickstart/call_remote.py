"""Calls the quickstart app on a server (`svc server`, or the one `svc login` signed you in to).

`square.remote(7)` uploads this folder, runs `square` in a container of the server and
returns its result; `greet.request(...)` calls the greet endpoint of the running preview
of the app, else of its deployment (`svc deploy app.py` first).
"""

import svc
from app import greet, square

if __name__ == "__main__":
    print(square.remote(7))
    try:
        print(greet.request(name="Ada", excited=True).json())
    except svc.NotFoundError as error:
        print(f"greet is not deployed yet ({error.message}); run `svc deploy app.py` first")

"""Fan-out: one function called over many inputs with .map(), .starmap() and .for_each().

`python app.py [N]` runs it against a svc server (`svc server` on this machine, or the one
`svc login` signed you in to): N inputs (1000 by default) spread over up to 4 containers.
"""

import hashlib
import sys
import time

import svc

app = svc.App("fan-out")


@app.function(cpu=0.5, autoscaler=svc.Autoscaler(max_containers=4))
def fingerprint(text: str) -> str:
    """A stand-in for real work on one input (embed a document, resize a picture): a hash, hashed again 2000 times."""
    digest = text.encode()
    for _ in range(2000):
        digest = hashlib.sha256(digest).digest()
    return digest.hex()[:16]


@app.function
def root(x: float) -> float:
    """Raises for a negative number: one failing input among many."""
    if x < 0:
        raise ValueError(f"no real square root of {x}")
    return x**0.5


@app.function
def announce(word: str, times: int = 1) -> None:
    """Prints: the lines of every input come back here, as they are printed."""
    print(" ".join([word] * times))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    started = time.monotonic()
    # A generator: the inputs are read as they are sent, a bounded way ahead of the results.
    prints = list(fingerprint.map(f"document {i}" for i in range(n)))
    print(f"{len(prints)} fingerprints, in input order; the first: {prints[0]}")
    print(f"({time.monotonic() - started:.1f} s)", file=sys.stderr)

    # return_exceptions=True: a failing input gives its exception in its place instead of raising.
    print("roots:", list(root.map([4, -1, 9], return_exceptions=True)))

    # for_each: for the calls' effects (it returns None); starmap: each input is a tuple of arguments.
    announce.for_each(["hello"])
    print("starmap:", list(announce.starmap([("bye", 2)])))

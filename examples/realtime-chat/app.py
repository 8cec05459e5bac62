"""A realtime (WebSocket) chat bot that streams its answers, one message per word.

`@app.realtime` serves a WebSocket. Each message the client sends calls the handler
once; what the handler returns goes back on the same socket. A generator (here an
async one) is streamed: every item it yields is sent as its own message, as soon as
it is yielded, which is how chat bots show an answer while it is being written.

Messages are typed with dataclasses: svc decodes each incoming text frame as JSON
and checks it against the handler's annotation (a bad message gets an
`invalid_arguments` error message, and the socket stays open); each dataclass the
handler yields goes out as a JSON object.

Try it on your machine first; nothing here needs the platform:

    python app.py                        # runs the handler in this process
    python -m svc.manifest app.py        # what the platform will read

Then serve it with `svc serve app.py` (see README.md).
"""

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Union

import svc

app = svc.App("realtime-chat")

# Nothing to install: dataclasses are in the standard library, and the platform adds
# the WebSocket server itself.
image = svc.Image(python_version="3.11")


# What the client sends: {"user": "Ada", "text": "hello there"}.
@dataclass
class ChatMessage:
    user: str
    text: str


# What the server sends back, in this order, each as one WebSocket message. The
# `type` field tells the client which kind of message it got (kw_only lets it come
# first with its default: {"type": "token", "text": "Hello"}).
@dataclass(kw_only=True)
class Typing:
    """The bot starts answering."""

    type: Literal["typing"] = "typing"
    to: str


@dataclass(kw_only=True)
class Token:
    """One word of the answer."""

    type: Literal["token"] = "token"
    text: str


@dataclass(kw_only=True)
class Done:
    """The answer is complete: how many words it had."""

    type: Literal["done"] = "done"
    words: int


Event = Union[Typing, Token, Done]


def answer_to(message: ChatMessage) -> str:
    """The bot's 'model': a canned answer. Swap in a real one (an LLM client, say)."""
    text = message.text.strip()
    if text.lower() in ("help", "/help"):
        return "Send any text and I answer word by word. Try: hello"
    if text.lower() in ("hi", "hello", "hey"):
        return f"Hello {message.user}, nice to meet you!"
    return f"{message.user}, you said {len(text.split())} words: {text}"


# One call per incoming message. concurrent_requests is the number of WebSocket
# sessions one worker holds at once: a session keeps its slot for as long as it is
# open, so a chat server wants many per worker (the handler is async, so they share
# one event loop). keep_warm_seconds keeps an idle container for 2 minutes.
@app.realtime(
    name="chat",
    image=image,
    concurrent_requests=100,
    autoscaler=svc.Autoscaler(max_containers=2, tasks_per_container=100),
    keep_warm_seconds=120,
)
async def chat(message: ChatMessage) -> AsyncIterator[Event]:
    """Streams the answer to one chat message: typing, one token per word, done."""
    yield Typing(to=message.user)
    words = answer_to(message).split()
    for word in words:
        await asyncio.sleep(0.05)  # pretend to think, so the stream is visible
        yield Token(text=word)
    yield Done(words=len(words))


if __name__ == "__main__":
    # The handler is still a plain async generator function: run it locally.
    async def main() -> None:
        async for event in chat(ChatMessage(user="Ada", text="hello")):
            print(event)

    asyncio.run(main())

"""Driving the client's sans-I/O generators without a network."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, TypeVar

import httpx

T = TypeVar("T")

Responder = Callable[[httpx.Request], httpx.Response]


def json_response(status: int, body: Any = None, **headers: str) -> httpx.Response:
    """A response with a JSON body (no body for None)."""
    if body is None:
        return httpx.Response(status, headers=headers)
    return httpx.Response(status, json=body, headers=headers)


def drive(
    machine: Generator[Any, Any, T], respond: Responder, seen: list[str] | None = None
) -> T:
    """Run `machine`, answering each request it yields with `respond`;
    `seen` collects `METHOD URL` of each request."""
    reply: Any = None
    while True:
        try:
            request = machine.send(reply)
        except StopIteration as stop:
            result: T = stop.value
            return result
        assert isinstance(request, httpx.Request), request
        if seen is not None:
            seen.append(f"{request.method} {request.url}")
        reply = respond(request)

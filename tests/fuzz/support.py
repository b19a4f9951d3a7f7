"""What the fuzz tests share: the app under test, and checking its answers."""

from __future__ import annotations

import json
import typing
from collections import Counter
from typing import Any

from mcp_specgen_runtime.app import App
from tests.fuzz.cases import Case, Reply

SEED = 20261126
"""One seed for every run: a failure is reproduced by running the test again."""


def make_app() -> App:
    """A scaffold-style app (`mcp-codegen new` writes one like it)."""
    app = App("fuzzed", version="0.1.0")

    @app.tool()
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    @app.resource("info://fuzzed/about", mime_type="text/plain")
    def about() -> str:
        """What this server is."""
        return "fuzzed 0.1.0"

    return app


def reply_of(found: Any) -> Reply:
    """The (id, code) of a well-formed response; AssertionError otherwise."""
    assert isinstance(found, dict), found
    message: dict[str, Any] = typing.cast("dict[str, Any]", found)
    assert message.get("jsonrpc") == "2.0", message
    assert "id" in message, message
    assert ("result" in message) != ("error" in message), message
    if "result" in message:
        return (message["id"], None)
    error: dict[str, Any] = message["error"]
    assert isinstance(error.get("code"), int), message
    assert isinstance(error.get("message"), str), message
    return (message["id"], error["code"])


def mismatch(case: Case, received: list[Any]) -> str | None:
    """Why what was received is not what `case` deserves (None: it is)."""
    expected = case.expected
    try:
        if expected.batch and expected.replies:
            if len(received) != 1 or not isinstance(received[0], list):
                return f"expected one batch answer, got {received!r}"
            items: list[Any] = received[0]
            got = [reply_of(item) for item in items]
        else:
            if any(isinstance(message, list) for message in received):
                return f"unexpected batch answer {received!r}"
            got = [reply_of(message) for message in received]
    except AssertionError as exc:
        return f"malformed answer: {exc}"
    if Counter(map(_key, got)) != Counter(map(_key, expected.replies)):
        return f"expected {list(expected.replies)}, got {got}"
    return None


def _key(reply: Reply) -> str:
    return json.dumps(reply)


class Tally:
    """Counts of cases, answers and codes, and the failures by kind."""

    def __init__(self) -> None:
        self.cases = 0
        self.kinds: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.failures: dict[str, list[str]] = {}

    def record(self, case: Case, problem: str | None) -> None:
        self.cases += 1
        self.kinds[case.kind] += 1
        for _, code in case.expected.replies:
            self.codes["result" if code is None else str(code)] += 1
        if not case.expected.replies:
            self.codes["silence"] += 1
        if problem is not None:
            shown = case.data[:200]
            self.failures.setdefault(case.kind, []).append(f"{shown!r}: {problem}")

    def summary(self) -> str:
        lines = [f"{self.cases} cases; expected {dict(self.codes)}"]
        for kind, problems in sorted(self.failures.items()):
            lines.append(f"{kind}: {len(problems)} failed, e.g. {problems[0]}")
        return "\n".join(lines)

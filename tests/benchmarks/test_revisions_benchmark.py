"""Smoke test of the revisions benchmark: tiny counts, the shape of every table.

No timing is asserted: only that each table has every contender with every
figure, the ratios and targets against the era's TypeScript SDK, that the
requests speak the right revision (the 2026 envelope only at 2026-07-28), and
that a wrong `tools/list` answer is refused. Spawns each stdio contender once
per tool count and revision, and each HTTP contender once (about 15 s);
installs the peers under `.cache/peers/` on first use.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from benchmarks import revisions
from benchmarks._common import Contender, Reply, ServerFailedError, initialize_body

ENVELOPE_KEY = "io.modelcontextprotocol/protocolVersion"


@pytest.fixture(scope="module")
def results() -> dict[str, Any]:
    return revisions.run(sizes=revisions.TINY, echo=lambda _line: None)


def test_every_table_is_there(results: dict[str, Any]) -> None:
    assert list(results) == [
        "2025-06-18",
        "2025-11-25",
        "2026-07-28 stdio",
        "2026-07-28 http",
    ]


@pytest.mark.parametrize("name", ["2025-06-18", "2025-11-25", "2026-07-28 stdio"])
def test_stdio_tables_have_every_figure(results: dict[str, Any], name: str) -> None:
    figures = results[name]
    typescript = revisions.TS_V2 if "2026" in name else revisions.TS_V1
    assert figures["order"] == [revisions.OURS, typescript, revisions.PY_SDK]
    for entry in figures["contenders"].values():
        for key in revisions.STDIO_METRICS:
            assert entry[key]["median"] >= 0
        for key in revisions.STDIO_THROUGHPUT:
            assert entry[key]["median"] > 0
    ratios = figures["ratios"][f"ours/{typescript}"]
    assert set(revisions.STDIO_THROUGHPUT) <= set(ratios)
    assert len(figures["targets"]) == len(revisions.STDIO_THROUGHPUT)


def test_http_table_has_every_figure(results: dict[str, Any]) -> None:
    figures = results["2026-07-28 http"]
    assert figures["order"] == [revisions.OURS, revisions.TS_V2, revisions.PY_SDK]
    for entry in figures["contenders"].values():
        for key in revisions.HTTP_THROUGHPUT:
            assert entry[key]["median"] > 0
    assert figures["node_v2_versions"] == {
        "@modelcontextprotocol/server": "2.4.0",
        "@modelcontextprotocol/node": "2.1.2",
    }


def test_report_names_the_revision(results: dict[str, Any]) -> None:
    text = revisions.report(results["2025-06-18"])
    assert text.startswith("2025-06-18 over stdio")
    assert "ours/TS1" in text


def test_only_2026_requests_carry_the_envelope() -> None:
    legacy = msgspec.json.decode(revisions.call_body(3, "2025-06-18"))
    modern = msgspec.json.decode(revisions.call_body(3, revisions.MODERN))
    assert "_meta" not in legacy["params"]
    assert modern["params"]["_meta"][ENVELOPE_KEY] == "2026-07-28"
    assert modern["params"]["name"] == legacy["params"]["name"] == revisions.TOOL
    handshake = msgspec.json.decode(initialize_body("bench", "2025-06-18"))
    assert handshake["params"]["protocolVersion"] == "2025-06-18"


def _reply(result: object) -> Reply:
    return msgspec.json.decode(
        msgspec.json.encode({"jsonrpc": "2.0", "id": 1, "result": result}), type=Reply
    )


def test_a_listing_is_checked() -> None:
    tools = [{"name": f"tool_{i:04d}"} for i in range(3)]
    assert revisions.listing_problem(_reply({"tools": tools}), 3) is None
    assert revisions.listing_problem(_reply({"tools": tools[:2]}), 3)
    paged = {"tools": tools, "nextCursor": "x"}
    assert revisions.listing_problem(_reply(paged), 3)
    assert revisions.listing_problem(_reply({"tools": tools[1:]}), 2)


HOLDER = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[1], "w").write(str(child.pid))
child.wait()
"""
"""A "server" that never answers, whose child keeps its stdout open: killing
it does not end the stream."""


def test_a_silent_server_fails_the_read_even_when_its_stdout_stays_open(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child.pid"
    argv = [sys.executable, "-c", HOLDER, str(pid_file)]
    client = revisions.StdioClient(
        Contender("silent", argv, dict(os.environ)), "2025-11-25", read_timeout=0.3
    )
    try:
        with pytest.raises(ServerFailedError, match=r"silent for 0\.3 s"):
            client.initialize()
    finally:
        client.kill()
        if pid_file.exists():  # the harness kills the server's session too
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)

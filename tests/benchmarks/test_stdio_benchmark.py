"""Smoke test of the stdio benchmark: it runs with tiny counts, reports every figure.

No timing is asserted: only the report's shape, that the load client refuses
a server that answers something other than the echo (in either shape of a
`str` tool result), and that the scaffold server is generated and
byte-compiled. Generates the scaffold into `.cache/benchmarks/scaffold/`, spawns
the five servers twice (cold start, then the round; about 7 s, most of it the
Python SDK's start-up); installs the peers `.cache/peers/` on first use
(cached afterwards).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Any

import msgspec
import pytest

from benchmarks import scaffold_server, stdio
from benchmarks._common import MESSAGE, REPO, Reply
from benchmarks.scaffold_server import echo_problem

SIZES = stdio.TINY

WRONG_ECHO = """
import sys
for line in sys.stdin:
    if '"id"' not in line:
        continue
    request_id = line.split('"id":', 1)[1].split(",", 1)[0]
    result = (
        '{"protocolVersion":"2025-11-25"}' if "initialize" in line
        else '{"content":[{"type":"text","text":"not the message"}]}'
    )
    print('{"jsonrpc":"2.0","id":%s,"result":%s}' % (request_id, result), flush=True)
"""


@pytest.fixture(scope="module")
def figures() -> dict[str, Any]:
    return stdio.run(sizes=SIZES, echo=lambda _line: None)


def test_requests_differ_only_by_id() -> None:
    first, second = stdio.call_request(1), stdio.call_request(22)
    assert first.endswith(b"\n") and first.count(b"\n") == 1
    assert first.replace(b'"id":1,', b'"id":22,') == second
    request = msgspec.json.decode(first)
    assert request["method"] == "tools/call"
    assert request["params"]["arguments"] == {"message": stdio.MESSAGE}
    assert 25 <= len(stdio.MESSAGE) <= 35


def test_every_contender_has_every_figure(figures: dict[str, Any]) -> None:
    assert tuple(figures["contenders"]) == stdio.CONTENDERS
    for entry in figures["contenders"].values():
        assert entry["argv"]
        for key in stdio.METRICS:
            stat = entry[key]
            expected = SIZES.cold_starts if key == stdio.COLD_START else SIZES.rounds
            assert len(stat["samples"]) == expected
            assert stat["min"] <= stat["median"] <= stat["max"]
            assert stat["min"] >= 0
        assert entry["sequential_calls_per_s"]["median"] > 0
        assert entry["pipelined_calls_per_s"]["median"] > 0
        assert entry["p50_us"]["median"] <= entry["p99_us"]["median"]
        assert entry["peak_rss_mib"]["median"] > 0


def test_ratios_and_targets(figures: dict[str, Any]) -> None:
    assert set(figures["ratios"]) == {f"ours/{c}" for c in stdio.CONTENDERS[1:]}
    for ratios in figures["ratios"].values():
        assert ratios["sequential_calls_per_s"] > 0
        assert ratios["pipelined_calls_per_s"] > 0
        assert ratios[stdio.COLD_START] > 0
    assert len(figures["targets"]) == 7  # TS and Py SDK x 2 modes, bare, RSS, start
    assert all(isinstance(check["met"], bool) for check in figures["targets"])
    assert figures["meets_targets"] == all(c["met"] for c in figures["targets"])


def test_report_shape(figures: dict[str, Any]) -> None:
    assert figures["protocol_version"] == "2025-11-25"
    assert figures["in_flight"] == stdio.IN_FLIGHT
    assert figures["rounds"] == SIZES.rounds
    assert figures["sequential_calls"] == SIZES.sequential
    assert figures["pipelined_calls"] == SIZES.pipelined
    assert figures["cold_start_spawns"] == SIZES.cold_starts
    ours = figures["contenders"][stdio.OURS]["argv"]
    assert ours[-2:] == ["-m", scaffold_server.PACKAGE]
    assert figures["versions"]["mcp (Python SDK)"] == "2.3.0"
    assert figures["versions"]["@modelcontextprotocol/sdk"] == "1.32.2"
    assert json.loads(json.dumps(figures)) == figures
    text = stdio.report(figures)
    for name in stdio.CONTENDERS:
        assert name in text
    for label in stdio.METRICS.values():
        assert label in text


def test_a_wrong_echo_is_refused() -> None:
    impostor = stdio.Contender(
        "impostor", [sys.executable, "-c", WRONG_ECHO], dict(os.environ)
    )
    with pytest.raises(stdio.ServerFailedError, match="wrong echo"):
        stdio.measure(impostor, SIZES)


def test_a_silent_server_is_killed() -> None:
    mute = stdio.Contender(
        "mute", [sys.executable, "-c", "import sys; sys.stdin.read()"], {}
    )
    with pytest.raises(stdio.ServerFailedError, match="silent for 1 s"):
        stdio.measure(mute, SIZES, read_timeout=1.0)


# Starts a child that inherits stdout, then goes silent: killing the server
# alone would leave the pipe open and the client's read waiting forever.
SILENT_WITH_A_CHILD = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
time.sleep(600)
"""


def test_a_silent_server_is_killed_with_its_children() -> None:
    wedged = stdio.Contender(
        "wedged", [sys.executable, "-c", SILENT_WITH_A_CHILD], dict(os.environ)
    )
    with pytest.raises(stdio.ServerFailedError, match="wedged: silent for 1 s"):
        stdio.measure(wedged, SIZES, read_timeout=1.0)


def _reply(result: dict[str, Any]) -> Reply:
    return Reply(id=1, result=msgspec.Raw(msgspec.json.encode(result)))


def test_the_echo_check_takes_both_result_shapes() -> None:
    text = {"type": "text", "text": MESSAGE}
    wrapped = {"result": MESSAGE}
    as_json = {"type": "text", "text": msgspec.json.encode(wrapped).decode()}
    assert echo_problem(_reply({"content": [text]})) is None
    assert (
        echo_problem(_reply({"content": [text], "structuredContent": wrapped})) is None
    )
    assert (
        echo_problem(_reply({"content": [as_json], "structuredContent": wrapped}))
        is None
    )
    other = {"type": "text", "text": "not the message"}
    wrong = [
        {"content": [other]},
        {"content": [as_json]},
        {"content": [other], "structuredContent": wrapped},
        {"content": [text], "structuredContent": {"result": "not the message"}},
        {"content": [text], "structuredContent": MESSAGE},
        {"content": [text, text]},
        {"content": [{"type": "image", "data": "", "mimeType": "image/png"}]},
        {"content": [text], "isError": True},
        {"structuredContent": wrapped},
    ]
    for result in wrong:
        assert echo_problem(_reply(result)) is not None, result
    assert echo_problem(Reply(id=1, error={"code": -32602})) is not None


def test_the_scaffold_is_generated_and_byte_compiled() -> None:
    project = scaffold_server.prepare()
    assert project == scaffold_server.FOLDER / scaffold_server.NAME
    package = project / scaffold_server.PACKAGE
    stray, readme = project / "stray.txt", project / "README.md"
    stray.write_text("not the scaffold's\n", encoding="utf-8")
    original = readme.read_bytes()
    readme.write_text("edited\n", encoding="utf-8")
    assert scaffold_server.prepare() == project
    assert not stray.exists()
    assert readme.read_bytes() == original
    assert "def echo(message: str) -> str:" in (package / "server.py").read_text(
        encoding="utf-8"
    )
    compiled = [
        package / "__main__.py",
        package / "server.py",
        REPO / "mcp_specgen_runtime" / "__init__.py",
    ]
    for source in compiled:
        assert os.path.exists(importlib.util.cache_from_source(str(source))), source
    assert not list(scaffold_server.FOLDER.glob(".staging-*"))
    environment = scaffold_server.env(project)
    assert environment["PYTHONPATH"].split(os.pathsep)[0] == str(project)

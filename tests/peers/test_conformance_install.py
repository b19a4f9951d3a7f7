"""Node.js 22, the conformance suites, the Inspector and oidc-provider install
(and the first three run: oidc-provider runs in `test_oidc_end_to_end`), and
`benchmarks.conformance` reads real runs correctly.

`benchmarks.node22` installs them under `.cache/peers/` (the first run
downloads about 300 MB; later ones check a few package.json files). The runs
go against the official Python SDK's Streamable HTTP echo server
(`programs/python_sdk_http_server.py`, peer venv), which has the tools `echo`
and `slow_echo` and none of the suites' fixtures: so it passes some scenarios
and fails others, which is what a parser test needs. Each run's parse is
checked against what the harness itself lists (`conformance list`) and,
scenario by scenario, against the harness' own summary lines (the parser
cross-checks those and raises on a mismatch).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import conformance, node22, peers
from benchmarks._common import REPO, peer_env

SERVER = Path(__file__).parent / "programs" / "python_sdk_http_server.py"


@pytest.fixture(scope="module")
def installed() -> dict[str, Path]:
    return node22.ensure_node22_peers(print)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The endpoint of a running Python SDK Streamable HTTP server."""
    proc = subprocess.Popen(
        [str(peers.peer_python(print)), str(SERVER), "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=peer_env(),
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        match = re.fullmatch(r"ready (\d+)\n", ready)
        assert match, f"no ready line: {ready!r}"
        yield f"http://127.0.0.1:{match.group(1)}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def _listed(version: str, *args: str) -> list[str]:
    """The `conformance list ARGS` output, as lines."""
    proc = subprocess.run(
        [*node22.conformance_command(version), "list", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return proc.stdout.splitlines()


def _server_scenarios(lines: list[str]) -> list[str]:
    """The names under `Server scenarios ...:` in `conformance list` output."""
    start = next(i for i, line in enumerate(lines) if line.startswith("Server scen"))
    names = []
    for line in lines[start + 1 :]:
        match = re.fullmatch(r"  - (\S+)( \[.*\])?", line)
        if match is None:
            break
        names.append(match.group(1))
    return names


def _not_scored_server(lines: list[str]) -> dict[str, str]:
    """`list --requirements`' never-scored server scenarios -> reason."""
    found: dict[str, str] = {}
    reason = ""
    for line in lines:
        if head := re.fullmatch(r"  (\S+) \(\d+\):", line):
            reason = head.group(1)
        elif item := re.fullmatch(r"    - (\S+) \[server\]", line):
            found[item.group(1)] = reason
    return found


# --------------------------------------------------------------------------
# Installation
# --------------------------------------------------------------------------


def test_node22_is_installed_and_runs(installed: dict[str, Path]) -> None:
    node = installed["node22"]
    assert node == node22.node22_executable()
    assert node.is_relative_to(node22.NODE22_DIR)
    proc = subprocess.run(
        [str(node), "-p", "process.version + ' ' + process.arch"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    version, _arch = proc.stdout.split()
    assert version == f"v{node22.NODE22_VERSION}"
    assert version.startswith("v22.")
    assert node22.node22_version(node) == node22.NODE22_VERSION
    minor = int(node22.NODE22_VERSION.split(".")[1])
    assert minor >= node22.NODE22_MINIMUM[1]


def test_each_suite_has_its_own_project(installed: dict[str, Path]) -> None:
    assert node22.installed_conformance_versions() == {
        "0.1.16": "0.1.16",
        "0.2.0-alpha.12": "0.2.0-alpha.12",
    }
    for version in node22.CONFORMANCE_VERSIONS:
        project = installed[f"conformance@{version}"]
        assert project == node22.conformance_dir(version)
        manifest = json.loads((project / "package.json").read_text("utf-8"))
        assert manifest["dependencies"] == {node22.CONFORMANCE_PACKAGE: version}
        command = node22.conformance_command(version)
        assert command[0] == str(installed["node22"])
        proc = subprocess.run(
            [*command, "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert proc.stdout.strip() == version


def test_installers_are_idempotent_and_quiet(installed: dict[str, Path]) -> None:
    said: list[str] = []
    started = time.perf_counter()
    assert node22.ensure_node22_peers(said.append) == installed
    assert node22.ensure_node22(said.append) == installed["node22"]
    assert node22.ensure_inspector(said.append) == node22.INSPECTOR_DIR
    assert node22.ensure_oidc_provider(said.append) == node22.OIDC_PROVIDER_DIR
    elapsed = time.perf_counter() - started
    assert said == []  # nothing to install, nothing said
    assert elapsed < 1.0


def test_peers_cli_prints_the_node22_peers(installed: dict[str, Path]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.peers", "conformance"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == (f"node22: {installed['node22']} (node {node22.NODE22_VERSION})")
    assert lines[1].startswith("conformance: ")
    assert json.loads(lines[2]) == node22.installed_conformance_versions()


def test_peers_cli_installs_and_prints_oidc_provider(
    installed: dict[str, Path],
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.peers", "oidc-provider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert installed["oidc-provider"] == node22.OIDC_PROVIDER_DIR
    assert node22.installed_oidc_provider_version() == node22.OIDC_PROVIDER_VERSION
    assert proc.stdout.splitlines()[1:] == [
        f"oidc-provider: {node22.OIDC_PROVIDER_DIR} "
        f"(oidc-provider@{node22.OIDC_PROVIDER_VERSION})"
    ]


def test_inspector_cli_lists_and_calls_tools(
    installed: dict[str, Path], url: str
) -> None:
    assert node22.installed_inspector_version() == node22.INSPECTOR_VERSION
    prefix = node22.inspector_cli_command()
    assert prefix[0] == str(installed["node22"]) and prefix[-1] == "--cli"
    env = node22.inspector_env(peer_env())
    assert Path(env["HOME"]).is_relative_to(node22.INSPECTOR_DIR)

    def run(*args: str) -> dict[str, Any]:
        proc = subprocess.run(
            [*prefix, url, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    listed = run("--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == ["echo", "slow_echo"]
    called = run(
        "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hé"
    )
    assert called["content"] == [{"type": "text", "text": "hé"}]
    assert called["isError"] is False


# --------------------------------------------------------------------------
# The runner
# --------------------------------------------------------------------------


def test_runner_reads_one_scenario(installed: dict[str, Path], url: str) -> None:
    for version in node22.CONFORMANCE_VERSIONS:
        for name, passes in (("server-initialize", True), ("tools-call-image", False)):
            run = conformance.Run(name, version, ("--scenario", name))
            result = conformance.run_conformance(run, url, timeout=60)
            (scenario,) = result.scenarios
            assert scenario.name == name
            assert scenario.scored
            assert scenario.passed is passes
            assert result.exit_code == (0 if passes else 1)
            assert result.ok is passes
            assert (result.passed, result.total) == (int(passes), 1)
            if not passes:
                (failure,) = scenario.failures
                assert failure.id == "tools-call-image"
                assert failure.message == "No image content found"


def test_runner_reads_the_three_runs(
    installed: dict[str, Path], url: str, tmp_path: Path
) -> None:
    started = time.perf_counter()
    results = conformance.run_all(url)
    assert time.perf_counter() - started < 60
    stable, old, new = results
    assert [r.run.name for r in results] == ["0.1.16 all", "2025-11-25", "2026-07-28"]

    # Every scenario the harness lists is run and read.
    listed = _server_scenarios(_listed(node22.CONFORMANCE_STABLE, "--server"))
    assert [s.name for s in stable.scenarios] == listed
    assert stable.not_scored == []
    for result in (old, new):
        lines = _listed(node22.CONFORMANCE_ALPHA, "--requirements", result.run.name)
        required = _server_scenarios(lines)
        assert [s.name for s in result.scored] == required
        reasons = {s.name: s.not_scored_reason for s in result.not_scored}
        assert reasons == _not_scored_server(lines)

    for result in results:
        assert result.total == len(result.scored)
        assert 0 < result.passed < result.total  # the echo server has no fixtures
        assert result.exit_code == 1 and not result.ok
        failing = {s.name for s in result.scored if not s.passed}
        assert "tools-call-image" in failing
        passing = {s.name for s in result.scored if s.passed}
        assert {"tools-list", "tools-call-simple-text"} <= passing
        summary = result.as_dict()
        assert (summary["passed"], summary["total"]) == (result.passed, result.total)
        assert set(summary["failures"]) == failing
        assert summary["failures"]["tools-call-image"] == [
            "tools-call-image: No image content found"
        ]

    text = conformance.report(results)
    assert text.splitlines()[0].split() == [
        "run",
        "conformance",
        "scenarios",
        "not",
        "scored",
        "exit",
        "verdict",
    ]
    assert f"{stable.passed}/{stable.total}" in text.splitlines()[2]


def test_main_exits_non_zero_and_writes_json(
    installed: dict[str, Path], url: str, tmp_path: Path
) -> None:
    out = tmp_path / "summary.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.conformance",
            url,
            "--run",
            "2025-11-25",
            "--json",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    summary = json.loads(out.read_text("utf-8"))
    assert list(summary) == ["2025-11-25"]
    run = summary["2025-11-25"]
    assert run["conformance"] == node22.CONFORMANCE_ALPHA
    assert run["args"][-2:] == ["--requirements", "2025-11-25"]
    assert f"{run['passed']}/{run['total']}" in proc.stdout


def test_parser_reports_a_crashed_scenario(tmp_path: Path) -> None:
    saved = tmp_path / "server-ping-x"
    saved.mkdir()
    checks = [{"id": "ping", "status": "SUCCESS", "description": "pong"}]
    (saved / "checks.json").write_text(json.dumps(checks), "utf-8")
    stdout = "\n".join(
        [
            "=== Running scenario: ping ===",
            "Running client scenario 'ping' against server: http://x/mcp",
            f"Results saved to {saved}",
            "=== Running scenario: boom ===",
            "Running client scenario 'boom' against server: http://x/mcp",
            "=== SUMMARY ===",
            "✓ ping: 1 passed, 0 failed",
            "✗ boom: 0 passed, 1 failed",
            "",
            "Total: 1 passed, 1 failed",
            "",
            "Not scored for 2026-07-28: 1 scenario(s) run, 0 failing.",
            "  ✓ ping (pending)",
        ]
    )
    stderr = "Failed to run scenario boom: Error: connection refused\n"
    ping, boom = conformance.parse_output(stdout, stderr)
    assert (ping.name, ping.passed, ping.scored) == ("ping", True, False)
    assert ping.not_scored_reason == "pending"
    assert (boom.name, boom.passed, boom.scored) == ("boom", False, True)
    assert boom.failures == [
        conformance.Check("boom", "FAILURE", "Error: connection refused")
    ]

    wrong = stdout.replace("✓ ping: 1 passed", "✓ ping: 2 passed")
    with pytest.raises(conformance.ConformanceParseError, match="ping"):
        conformance.parse_output(wrong, stderr)

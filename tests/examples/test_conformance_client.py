"""`examples/conformance_client.py` against the official conformance suites'
client scenarios.

One test per run of `benchmarks.conformance_client` (0.1.16 `--suite all`,
0.2.0-alpha.12 `--requirements 2025-11-25` and `2026-07-28`): every scenario
the run selects, scored or not, is run, each alone (`--scenario NAME`),
since the suite's parallel mode runs all of its mock servers in one Node.js
process, and on a loaded machine `sse-retry`'s mock then sees the client's
standalone GET stream (opened just after initialization, not awaited, as
the official SDKs do too) arrive after the first tool call: it takes that
GET for the reconnection, answers the pending call on it (a response the
specification allows on a GET stream only when resuming, with
Last-Event-ID) and measures its time (5 of 6 parallel runs failed so,
-57 to -276 ms; run alone, once in 3 runs on a loaded machine), so that
scenario alone gets a second run when it fails (`RACY_MOCKS`). Every
scored scenario must pass; the not-scored ones (extensions) are run and
listed, never required. About 30, 30 and 45 seconds alone (48 s measured
for 2025-11-25, against 31 to 51 s in parallel: no faster to speak of).
"""

from __future__ import annotations

import pytest

from benchmarks import conformance, conformance_client, node22

EXPECTED = {"0.1.16 all": 26, "2025-11-25": 18, "2026-07-28": 32}
"""Run -> scored scenarios; every one passes."""

NOT_SCORED_FAILING: set[str] = set()
"""Not-scored scenarios (extensions) known to fail: none today."""


@pytest.fixture(scope="module", autouse=True)
def installed() -> None:
    # Installed by the project's own script; a failure to install fails the test.
    node22.ensure_conformance()


@pytest.mark.parametrize("run", conformance_client.RUNS, ids=lambda run: run.name)
def test_every_scored_scenario_passes(run: conformance.Run) -> None:
    result = conformance_client.run_one_by_one(run)
    report = conformance.report([result])
    failing = {
        s.name: [c.message for c in s.failures] for s in result.scored if not s.passed
    }
    assert failing == {}, report
    assert result.total == EXPECTED[run.name], report
    assert result.ok, report
    unsupported = {s.name for s in result.not_scored if not s.passed}
    assert unsupported <= NOT_SCORED_FAILING, report

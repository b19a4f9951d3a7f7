"""The lock: canonical hashes, the file, and what drifted."""

from __future__ import annotations

import pytest

from mcp_specgen.clientgen.inspect import ClientGenError, Listing
from mcp_specgen.clientgen.lock import drift, lock_of, parse_lock

ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {}}}


def test_the_hash_ignores_key_order_and_unused_keys() -> None:
    a = lock_of(Listing("s", "1", "r", tools=[ECHO]))
    reordered = {"inputSchema": {"properties": {}, "type": "object"}, "name": "echo"}
    b = lock_of(Listing("s", "1", "r", tools=[{**reordered, "icons": []}]))
    assert a.hash == b.hash


def test_the_file_round_trips() -> None:
    lock = lock_of(Listing("s", "1", "r", tools=[ECHO], prompts=[{"name": "p"}]))
    again = parse_lock(lock.to_json(), "x")
    assert again == lock
    assert '"sha256": "' + lock.hash in lock.to_json()


def test_a_broken_file_is_an_error() -> None:
    with pytest.raises(ClientGenError, match="x is not a client lock file"):
        parse_lock("{}", "x")


def test_drift_names_what_was_added_removed_and_changed() -> None:
    was = lock_of(Listing("s", "1", "r", tools=[ECHO, {"name": "gone"}]))
    changed = {**ECHO, "description": "new"}
    now = lock_of(Listing("s", "2", "r", tools=[changed, {"name": "new"}]))
    assert drift(was, now) == [
        "server version changed: '1' -> '2'",
        "tool 'echo' changed",
        "tool 'gone' removed",
        "tool 'new' added",
    ]
    assert drift(was, was) == []

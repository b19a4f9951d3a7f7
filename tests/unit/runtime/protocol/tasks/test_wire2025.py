"""The 2025-11-25 shapes: `Task`, the capability, `params.task`."""

from __future__ import annotations

import msgspec
import pytest

from mcp_specgen_runtime.codec.wire import decode
from mcp_specgen_runtime.errors import InvalidParamsError
from mcp_specgen_runtime.protocol.tasks.wire2025 import (
    task_capability,
    task_json,
    task_params,
)
from mcp_specgen_runtime.stores.tasks import TaskRecord
from mcp_specgen_types import v2025_11_25


def test_a_task_fits_the_schema_with_iso_times_and_ttl_always_present() -> None:
    record = TaskRecord(
        task_id="t1",
        owner=None,
        era="2025-11-25",
        method="tools/call",
        created_at=1764066600.0,
        last_updated_at=1764066600.25,
        ttl_ms=None,
        poll_interval_ms=500,
    )
    task = task_json(record)
    assert task == {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2025-11-25T10:30:00.000Z",
        "lastUpdatedAt": "2025-11-25T10:30:00.250Z",
        "ttl": None,
        "pollInterval": 500,
    }
    decoded = decode(msgspec.json.encode(task), v2025_11_25.Task)
    assert decoded.task_id == "t1"


def test_the_capability_names_each_request_kind() -> None:
    caps = task_capability(["tools/call"])
    assert caps == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert decode(msgspec.json.encode(caps), v2025_11_25.ServerCapabilitiesTasks)


def test_task_params() -> None:
    assert task_params("tools/call", b'{"name":"x"}') is None
    assert task_params("tools/call", None) is None
    found = task_params("tools/call", b'{"name":"x","task":{"ttl":5}}')
    assert found is not None and found.ttl == 5
    empty = task_params("tools/call", b'{"name":"x","task":{}}')
    assert empty is not None and empty.ttl is None
    with pytest.raises(InvalidParamsError):
        task_params("tools/call", b'{"task":{"ttl":"soon"}}')


@pytest.mark.parametrize(
    ("ttl", "why"),
    [
        ("-1", "between 0 and"),
        ("1.5", "whole number"),
        ("1e300", "between 0 and"),
        ("99999999999999999999", "between 0 and"),
        ('"60000"', "Expected `int | float | null`"),
        ("true", "Expected `int | float | null`"),
    ],
)
def test_a_ttl_that_is_not_a_non_negative_integer_is_invalid(
    ttl: str, why: str
) -> None:
    params = b'{"name":"x","task":{"ttl":' + ttl.encode() + b"}}"
    with pytest.raises(InvalidParamsError) as caught:
        task_params("tools/call", params)
    assert why in caught.value.message


def test_a_ttl_written_as_a_whole_float_is_an_integer() -> None:
    found = task_params("tools/call", b'{"name":"x","task":{"ttl":60000.0}}')
    assert found is not None and found.ttl_ms == 60_000
    zero = task_params("tools/call", b'{"name":"x","task":{"ttl":0}}')
    assert zero is not None and zero.ttl_ms == 0

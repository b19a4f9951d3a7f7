"""`task_wire`: reading task answers as builtins."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec import UNSET

from mcp_specgen_runtime.client.task_wire import (
    RawPage,
    created,
    declared,
    objects,
    task_page,
    task_supports,
)
from mcp_specgen_runtime.errors import ProtocolError


def test_declared_follows_nested_objects() -> None:
    capabilities = {"tasks": {"requests": {"tools": {"call": {}}}, "list": True}}
    assert declared(capabilities, "tasks", "requests", "tools", "call")
    assert not declared(capabilities, "tasks", "list")  # not an object
    assert not declared(capabilities, "tasks", "cancel")
    assert not declared({"tasks": []}, "tasks", "list")


def test_objects_keeps_the_objects_of_an_array() -> None:
    assert objects([{"a": 1}, 2, None, {"b": 2}]) == [{"a": 1}, {"b": 2}]
    assert objects({"a": 1}) == []


def test_created_in_each_era() -> None:
    task = {"taskId": "t", "status": "working", "ttl": 5}
    state, immediate = created("legacy", {"task": task})
    assert (state.task_id, state.ttl_ms, immediate) == ("t", 5, False)
    flat = {"resultType": "task", "taskId": "u", "status": "working", "ttlMs": 7}
    state, immediate = created("modern", flat)
    assert (state.task_id, state.ttl_ms, immediate) == ("u", 7, False)
    result: dict[str, Any] = {"resultType": "complete", "content": []}
    state, immediate = created("modern", result)
    assert immediate and state.terminal and state.result == result
    with pytest.raises(ProtocolError, match="no CreateTaskResult"):
        created("legacy", result)


def test_task_page_and_supports() -> None:
    page = task_page({"tasks": [{"taskId": "t", "status": "failed"}], "nextCursor": ""})
    assert [t.status for t in page.tasks] == ["failed"] and page.next_cursor is None
    with pytest.raises(ProtocolError):
        task_page({})
    tools = [
        {"name": "a", "execution": {"taskSupport": "required"}},
        {"name": "b"},
        {"name": "c", "execution": "odd"},
    ]
    assert task_supports({"tools": tools}) == {
        "a": "required",
        "b": "forbidden",
        "c": "forbidden",
    }
    assert RawPage({"nextCursor": "n"}).next_cursor == "n"
    assert RawPage({"nextCursor": 3}).next_cursor is UNSET

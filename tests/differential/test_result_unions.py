"""A result union decodes the member its `resultType` names.

`XResultResponse.result` is `XResult | InputRequiredResult`. The specification
says `input_required` means an InputRequiredResult and anything else (or no
`resultType`, from an earlier server) the method's own result.
"""

from __future__ import annotations

import json
from importlib import import_module
from typing import Any

import pytest
from differential_engine import EXAMPLE_REVISIONS, REVISIONS, examples_dir

from mcp_specgen_runtime import decode, encode
from mcp_specgen_runtime.codec.wire import UNSET, ValidationError


def _cases() -> list[Any]:
    return [
        pytest.param(rev, path, id=f"{rev}/{folder.name}/{path.name}")
        for rev in EXAMPLE_REVISIONS
        for folder in sorted(examples_dir(rev).iterdir())
        if folder.name.endswith(("ResultResponse", "Result"))
        for path in sorted(folder.glob("*.json"))
    ]


def _complete_type(name: str) -> str:
    """The method's own result type of an example folder."""
    return name.removesuffix("Response")


@pytest.mark.parametrize(("rev", "path"), _cases())
def test_the_decoded_member_matches_result_type(rev: str, path) -> None:  # type: ignore[no-untyped-def]
    module = import_module(f"mcp_specgen_types.{REVISIONS[rev]}")
    name = path.parent.name
    raw = json.loads(path.read_bytes())
    value = decode(path.read_bytes(), getattr(module, name))
    if name.endswith("Response"):
        value, raw = value.result, raw["result"]
    wanted = (
        "InputRequiredResult"
        if raw.get("resultType") == "input_required"
        else _complete_type(name)
    )
    assert type(value).__name__ == wanted


def _response(module: Any, method_result: str, result: dict[str, Any]) -> Any:
    data = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result})
    return decode(data, getattr(module, f"{method_result}Response")).result


@pytest.mark.parametrize("rev", EXAMPLE_REVISIONS)
def test_input_required_never_decodes_as_the_complete_type(rev: str) -> None:
    module = import_module(f"mcp_specgen_types.{REVISIONS[rev]}")
    # Every key of a complete CallToolResult, and the state of an incomplete one.
    result = {
        "resultType": "input_required",
        "content": [{"type": "text", "text": "partial"}],
        "requestState": "s1",
    }
    value = _response(module, "CallToolResult", result)
    assert isinstance(value, module.InputRequiredResult)
    assert json.loads(encode(value)) == result


@pytest.mark.parametrize("rev", EXAMPLE_REVISIONS)
def test_input_required_that_does_not_fit_is_an_error(rev: str) -> None:
    module = import_module(f"mcp_specgen_types.{REVISIONS[rev]}")
    result = {"resultType": "input_required", "requestState": 7, "content": []}
    with pytest.raises(ValidationError, match="InputRequiredResult"):
        _response(module, "CallToolResult", result)


@pytest.mark.parametrize("rev", EXAMPLE_REVISIONS)
@pytest.mark.parametrize("result_type", [None, "complete", "some_future_kind"])
def test_any_other_result_type_is_the_complete_type(
    rev: str, result_type: str | None
) -> None:
    module = import_module(f"mcp_specgen_types.{REVISIONS[rev]}")
    result: dict[str, Any] = {"requestState": "s1", "content": []}
    if result_type is not None:
        result["resultType"] = result_type
    value = _response(module, "CallToolResult", result)
    assert isinstance(value, module.CallToolResult)
    # A result built or decoded in Python always carries its resultType.
    assert json.loads(encode(value)) == {"resultType": "complete", **result}


@pytest.mark.parametrize("rev", EXAMPLE_REVISIONS)
def test_a_read_result_without_cache_hints_keeps_them_absent(rev: str) -> None:
    # SEP-2549: servers of earlier revisions send no ttlMs/cacheScope.
    module = import_module(f"mcp_specgen_types.{REVISIONS[rev]}")
    result = {"contents": [{"uri": "file:///a", "text": "a"}]}
    value = _response(module, "ReadResourceResult", result)
    assert isinstance(value, module.ReadResourceResult)
    assert value.ttl_ms is UNSET
    assert value.cache_scope is UNSET
    assert json.loads(encode(value)) == {"resultType": "complete", **result}

"""`ToolSpec`: results JSON cannot carry (NaN, ±Infinity) are refused."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.tools import ToolSpec
from mcp_specgen_types import v2025_11_25

from .test_application import client_of

NON_FINITE = [math.nan, math.inf, -math.inf]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Reading(msgspec.Struct):
    sensor: str
    values: list[float]


def ratio() -> float:
    return 0.0


def reading() -> Reading:
    return Reading("s", [])


def anything() -> dict[str, Any]:
    return {}


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_number_is_refused_at_top_level(number: float) -> None:
    spec = ToolSpec.from_function(ratio)
    with pytest.raises(ValueError, match=r"not a finite number.*\$\.result"):
        spec.result(number)


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_non_finite_number_is_refused_deep_inside(number: float) -> None:
    spec = ToolSpec.from_function(reading)
    with pytest.raises(ValueError, match=r"\$\.values\[1\]"):
        spec.result(Reading("s", [1.0, number]))
    untyped = ToolSpec.from_function(anything)
    with pytest.raises(ValueError, match=r"\$\.a\.b\[0\]"):
        untyped.result({"a": {"b": [number]}, "c": None})


def test_nulls_and_finite_numbers_still_pass() -> None:
    untyped = ToolSpec.from_function(anything)
    result = untyped.result({"a": None, "b": [1.5, None], "text": "null"})
    assert result["structuredContent"] == {"a": None, "b": [1.5, None], "text": "null"}
    assert ToolSpec.from_function(ratio).result(2.5)["structuredContent"] == {
        "result": 2.5
    }


@pytest.mark.anyio
async def test_a_tool_returning_nan_is_a_tool_error_and_the_app_serves_on() -> None:
    app = App("numbers")

    @app.tool()
    def divide(a: float, b: float) -> float:
        return a / b if b else math.nan

    async with client_of(app, "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        failed = await typed.call_tool(name="divide", arguments={"a": 1, "b": 0})
        assert failed.is_error is True
        content = failed.content[0]
        assert isinstance(content, v2025_11_25.TextContent)
        text = content.text
        assert text.startswith("Error in tool divide:")
        assert "not a finite number" in text
        fine = await typed.call_tool(name="divide", arguments={"a": 1, "b": 4})
        assert fine.structured_content == {"result": 0.25}

"""An stdio MCP server built with the official Python SDK (PyPI `mcp`), the
kind its README shows: typed tools (one with a structured result), a prompt
and a resource template. `mcp-codegen client` is tested against it.

With MCP_DRIFT=1 in its environment it has drifted: `add` takes a third
argument and a tool `subtract` is new.
"""

import os
from typing import Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

DRIFT = os.environ.get("MCP_DRIFT") == "1"

server = MCPServer("weather-sdk", version="2.1.0")


class Forecast(BaseModel):
    """A city's weather."""

    city: str
    temperature: float = Field(description="Degrees Celsius")
    conditions: Literal["sunny", "rainy", "cloudy"]


if DRIFT:

    @server.tool()
    def add(a: int, b: int = 2, c: int = 0) -> int:
        """Add numbers."""
        return a + b + c

    @server.tool()
    def subtract(a: int, b: int) -> int:
        """Subtract b from a."""
        return a - b

else:

    @server.tool()
    def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b


@server.tool()
def forecast(city: str, days: int = 1) -> Forecast:
    """Tomorrow's weather in a city."""
    return Forecast(city=city, temperature=21.5 + days, conditions="sunny")


@server.tool()
def fail(reason: str) -> str:
    """Always fails, saying why."""
    raise ValueError(reason)


@server.prompt()
def review(code: str, language: str = "python") -> str:
    """Review some code."""
    return f"Review this {language}: {code}"


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for someone."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    server.run("stdio")

"""Our client as the conformance suite runs it: `conformance_client.py URL`.

Connects with `connect_http` at default settings and, when the server has
tools, lists them and calls each once, with an argument of the right JSON type
for each property of its input schema. Elicitation is accepted with empty
content (so the schema's defaults are what the server gets).
`MCP_CONFORMANCE_SCENARIO` names the scenario; this client does the same for
all of them.
"""

from __future__ import annotations

import sys
import typing
from typing import Any

import anyio

from mcp_codegen_runtime.transports.http.client import connect_http
from mcp_codegen_types import v2025_11_25

SAMPLES: dict[str, Any] = {
    "string": "text",
    "number": 1.5,
    "integer": 2,
    "boolean": True,
    "array": [],
    "object": {},
}


class Accepting(v2025_11_25.ClientHandlers):
    """Accepts every elicitation, filling in nothing itself."""

    async def elicitation_create(
        self, params: v2025_11_25.ElicitRequestParams
    ) -> v2025_11_25.ElicitResult:
        return v2025_11_25.ElicitResult(action="accept", content={})


def arguments(tool: v2025_11_25.Tool) -> dict[str, Any]:
    properties: dict[str, Any] = dict(tool.input_schema.properties or {})
    found: dict[str, Any] = {}
    for name, schema in properties.items():
        kind: Any = None
        if isinstance(schema, dict):
            kind = typing.cast("dict[str, Any]", schema).get("type")
        if isinstance(kind, str) and kind in SAMPLES:
            found[name] = SAMPLES[kind]
    return found


async def main(url: str) -> None:
    async with connect_http(
        url, name="mcp-codegen-conformance", version="1", handlers=[Accepting()]
    ) as session:
        if "tools" not in session.server_capabilities:
            return
        client = v2025_11_25.Client(session)
        for tool in (await client.list_tools()).tools:
            await client.call_tool(name=tool.name, arguments=arguments(tool))


if __name__ == "__main__":
    anyio.run(main, sys.argv[-1])

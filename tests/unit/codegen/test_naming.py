from __future__ import annotations

import pytest

from mcp_specgen.naming import (
    field_name,
    inline_type_name,
    method_constant,
    method_name,
    snake_case,
)


@pytest.mark.parametrize(
    ("wire", "python"),
    [
        ("mimeType", "mime_type"),
        ("_meta", "meta"),
        ("$schema", "schema"),
        ("io.modelcontextprotocol/clientCapabilities", "client_capabilities"),
        ("from", "from_"),
        ("type", "type"),
        ("match", "match"),
        ("list", "list_"),
        ("URLElicitation", "url_elicitation"),
        ("ttlMs", "ttl_ms"),
        ("3d", "f_3d"),
    ],
)
def test_field_name(wire: str, python: str) -> None:
    assert field_name(wire) == python


def test_snake_case_splits_acronyms() -> None:
    assert snake_case("JSONRPCMessage") == "jsonrpc_message"


@pytest.mark.parametrize(
    ("method", "python", "constant", "notification"),
    [
        ("tools/call", "tools_call", "METHOD_TOOLS_CALL", False),
        (
            "sampling/createMessage",
            "sampling_create_message",
            "METHOD_SAMPLING_CREATE_MESSAGE",
            False,
        ),
        (
            "notifications/resources/list_changed",
            "notifications_resources_list_changed",
            "NOTIFICATION_RESOURCES_LIST_CHANGED",
            True,
        ),
        ("ping", "ping", "METHOD_PING", False),
    ],
)
def test_method_names(
    method: str, python: str, constant: str, notification: bool
) -> None:
    assert method_name(method) == python
    assert method_constant(method, notification=notification) == constant


def test_inline_type_name() -> None:
    assert (
        inline_type_name("ClientCapabilities", "elicitation")
        == "ClientCapabilitiesElicitation"
    )
    assert inline_type_name("Meta", "io.example/fooBar") == "MetaFooBar"

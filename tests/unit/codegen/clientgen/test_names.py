"""Python names of what a server offers."""

from __future__ import annotations

import pytest

from mcp_specgen.clientgen.inspect import ClientGenError, parse_target
from mcp_specgen.clientgen.names import (
    NameClashWarning,
    Namer,
    class_name,
    identifier,
    parameter,
)


def test_identifiers() -> None:
    assert identifier("get-sum") == "get_sum"
    assert identifier("Dynamic Text Resource") == "dynamic_text_resource"
    assert identifier("resourceId") == "resource_id"
    assert identifier("class") == "class_"
    assert identifier("3d") == "n_3d"
    assert parameter("timeout") == "timeout_"


def test_class_names() -> None:
    assert class_name("mcp-servers/everything") == "EverythingClient"
    assert class_name("weather-sdk") == "WeatherSdkClient"
    assert class_name("") == "ServerClient"


def test_the_later_of_two_things_wanting_one_method_name_gets_a_number() -> None:
    namer = Namer()
    assert namer.claim("client", "tool 'client'") == "client_"
    assert namer.claim("get_sum", "tool 'get-sum'") == "get_sum"
    with pytest.warns(NameClashWarning, match="tool 'get_sum' and tool 'get-sum'"):
        assert namer.claim("get_sum", "tool 'get_sum'") == "get_sum_2"
    with pytest.warns(NameClashWarning):
        assert namer.claim("get_sum", "prompt 'sum'") == "get_sum_3"


def test_targets() -> None:
    assert parse_target("https://x/mcp") == "https://x/mcp"
    assert parse_target("node 'a b.js' stdio") == ["node", "a b.js", "stdio"]
    with pytest.raises(ClientGenError, match="empty"):
        parse_target("  ")

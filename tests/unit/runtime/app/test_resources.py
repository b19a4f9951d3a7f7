"""Resource templates: what a `{var}` may hold once decoded, and how a read
of a URI refused for it is answered."""

from __future__ import annotations

import pytest

from mcp_specgen_runtime.app import App
from mcp_specgen_runtime.app.resources import UriTemplate
from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_types import v2025_11_25

from .test_application import client_of

PROFILE = UriTemplate("users://{user_id}/profile")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("uri", "value"),
    [
        ("users://42/profile", "42"),
        ("users://ada%20lovelace/profile", "ada lovelace"),
        ("users://a.b..c/profile", "a.b..c"),
    ],
)
def test_a_simple_variable_takes_one_decoded_segment(uri: str, value: str) -> None:
    assert PROFILE.match(uri) == {"user_id": value}


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("users://..%2F..%2Fetc%2Fpasswd/profile", "a path separator"),
        ("users://a%2fb/profile", "a path separator"),
        ("users://a%5Cb/profile", "a path separator"),
        ("users://a\\b/profile", "a path separator"),
        ("users://a%00b/profile", "a control character"),
        ("users://a\x00b/profile", "a control character"),
        ("users://a%0Ab/profile", "a control character"),
        ("users://a%7Fb/profile", "a control character"),
        ("users://../profile", "a dot-segment"),
        ("users://%2E%2E/profile", "a dot-segment"),
        ("users://./profile", "a dot-segment"),
    ],
)
def test_a_simple_variable_refuses_separators_controls_and_dot_segments(
    uri: str, why: str
) -> None:
    assert PROFILE.match(uri) is None
    reason = PROFILE.bind(uri)
    assert isinstance(reason, str)
    assert "user_id" in reason and why in reason


def test_a_path_segment_expansion_is_one_segment_too() -> None:
    template = UriTemplate("files://root{/name}")
    assert template.match("files://root/a.txt") == {"name": "a.txt"}
    assert template.match("files://root/..%2Fsecret") is None


def test_a_reserved_expansion_may_span_segments_but_not_hold_controls() -> None:
    template = UriTemplate("files:///{+path}")
    assert template.match("files:///docs/a%20b.txt") == {"path": "docs/a b.txt"}
    assert template.match("files:///docs%2Fa.txt") == {"path": "docs/a.txt"}
    assert template.match("files:///docs/a%00.txt") is None
    fragment = UriTemplate("notes://page{#section}")
    assert fragment.match("notes://page#a/b") == {"section": "a/b"}
    assert fragment.match("notes://page#a%01") is None


def test_query_values_may_not_hold_controls() -> None:
    template = UriTemplate("search://items{?q}")
    assert template.match("search://items?q=a/b") == {"q": "a/b"}
    assert template.match("search://items?q=a%00") is None


def test_a_uri_of_another_shape_is_no_match_and_no_reason() -> None:
    assert PROFILE.bind("users://42/avatar") is None


def make_app() -> App:
    app = App("files", subscriptions=True)

    @app.resource("users://{user_id}/profile", mime_type="text/plain")
    def profile(user_id: str) -> str:
        return f"profile of {user_id}"

    @app.resource("docs://{name}")
    def doc(name: str) -> str:
        return f"doc {name}"

    @app.resource("docs://{+path}")
    def nested(path: str) -> str:
        return f"nested {path}"

    return app


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("version", "code"),
    [
        ("2024-11-05", -32002),
        ("2025-11-25", -32002),
        ("2026-07-28", ErrorCode.INVALID_PARAMS),
    ],
)
async def test_a_refused_uri_is_resource_not_found_saying_why(
    version: str, code: int
) -> None:
    """-32002 before 2026-07-28, -32602 from it (SEP-2164); `data.uri`."""
    uri = "users://..%2F..%2Fetc%2Fpasswd/profile"
    async with client_of(make_app(), version) as client:
        typed = v2025_11_25.Client(client)
        read = await typed.read_resource(uri="users://42/profile")
        assert read.contents[0].text == "profile of 42"  # type: ignore[union-attr]
        with pytest.raises(RpcError) as caught:
            await typed.read_resource(uri=uri)
        assert caught.value.code == code
        assert caught.value.message.startswith("Resource not found")
        assert "path separator" in caught.value.message
        assert caught.value.data == {"uri": uri}
        with pytest.raises(RpcError) as unknown:
            await typed.read_resource(uri="nothing://here")
        assert unknown.value.code == code
        assert unknown.value.message == "Resource not found"


@pytest.mark.anyio
async def test_a_uri_one_template_refuses_another_may_serve() -> None:
    async with client_of(make_app(), "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        read = await typed.read_resource(uri="docs://a%2Fb")
        assert read.contents[0].text == "nested a/b"  # type: ignore[union-attr]
        plain = await typed.read_resource(uri="docs://readme")
        assert plain.contents[0].text == "doc readme"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_refused_uri_cannot_be_subscribed() -> None:
    app = make_app()
    assert not app.has_resource("users://a%2Fb/profile")
    async with client_of(app, "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        with pytest.raises(RpcError, match="Unknown resource"):
            await typed.subscribe(uri="users://a%2Fb/profile")


@pytest.mark.anyio
async def test_subscribing_keeps_no_process_wide_state() -> None:
    # Delivery follows each connection's own subscriptions (`ChangeFeed`); a
    # set on the app would only grow, one entry per URI any client named.
    app = make_app()
    async with client_of(app, "2025-11-25") as client:
        typed = v2025_11_25.Client(client)
        await typed.subscribe(uri="users://42/profile")
    assert "subscribed" not in vars(app)

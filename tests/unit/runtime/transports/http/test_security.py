"""Request guards: Host (DNS rebinding), Origin, Content-Type, Accept, body size,
and the defaults `SecurityPolicy.for_bind` derives from the bound address."""

from __future__ import annotations

import pytest

from mcp_specgen_runtime.transports.http import (
    DEFAULT_MAX_BODY_SIZE,
    LOOPBACK_ORIGINS,
    HttpError,
    HttpHeaders,
    SecurityPolicy,
    accepts,
    check_accept,
    check_body_size,
    check_content_length,
    check_content_type,
    check_host,
    check_origin,
    check_request,
    is_loopback,
)
from mcp_specgen_runtime.transports.http.security import DEFAULT_BODY_TIMEOUT_S

LOCAL = SecurityPolicy.for_bind("127.0.0.1", 8000)
BOTH = "application/json, text/event-stream"
GOOD_POST = {
    "Host": "localhost:8000",
    "Content-Type": "application/json",
    "Accept": BOTH,
}


def status(error: HttpError | None) -> int | None:
    return None if error is None else error.status


# --- the policy -----------------------------------------------------------------


def test_defaults_refuse_every_origin_and_skip_the_host_check() -> None:
    policy = SecurityPolicy()
    assert policy.allowed_hosts is None
    assert policy.allowed_origins == frozenset()
    assert policy.max_body_size == DEFAULT_MAX_BODY_SIZE == 4 * 1024 * 1024


def test_the_body_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_body_size"):
        SecurityPolicy(max_body_size=0)


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "localhost", "LOCALHOST", "::1", "[::1]", "127.0.0.2"]
)
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "192.168.1.2", "example.com", "", "localhost.evil"]
)
def test_other_addresses(host: str) -> None:
    assert not is_loopback(host)


def test_a_loopback_bind_allows_the_local_names_at_its_port() -> None:
    assert LOCAL.allowed_hosts == {
        "localhost:8000",
        "127.0.0.1:8000",
        "[::1]:8000",
    }
    assert LOCAL.allowed_origins == LOOPBACK_ORIGINS
    assert LOCAL.max_body_size == DEFAULT_MAX_BODY_SIZE


def test_another_loopback_address_is_allowed_as_itself() -> None:
    policy = SecurityPolicy.for_bind("127.0.0.2", 9)
    assert policy.allowed_hosts is not None
    assert "127.0.0.2:9" in policy.allowed_hosts
    six = SecurityPolicy.for_bind("::1", 9)
    assert six.allowed_hosts == {"localhost:9", "127.0.0.1:9", "[::1]:9"}


def test_port_zero_allows_any_port_and_port_80_none() -> None:
    ephemeral = SecurityPolicy.for_bind("localhost", 0)
    assert check_host({"Host": "localhost:54321"}, ephemeral) is None
    web = SecurityPolicy.for_bind("127.0.0.1", 80)
    assert check_host({"Host": "localhost"}, web) is None
    assert check_host({"Host": "localhost:80"}, web) is None
    assert status(check_host({"Host": "localhost"}, LOCAL)) == 421


def test_other_binds_keep_the_safe_defaults() -> None:
    for host in ("0.0.0.0", "::", "example.com"):
        assert SecurityPolicy.for_bind(host, 8000) == SecurityPolicy()


# --- Host -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["localhost:8000", "LocalHost:8000", "127.0.0.1:8000", "[::1]:8000"]
)
def test_local_hosts_pass(host: str) -> None:
    assert check_host({"host": host}, LOCAL) is None


@pytest.mark.parametrize(
    "host",
    [
        "evil.com:8000",
        "evil.com",
        "localhost:8001",
        "localhost",
        "127.0.0.1",
        "[::1]",
        "localhost.evil.com:8000",
        "0.0.0.0:8000",
    ],
)
def test_other_hosts_are_misdirected(host: str) -> None:
    error = check_host({"Host": host}, LOCAL)
    assert error is not None
    assert (error.status, error.message) == (
        421,
        "Misdirected Request: Host not allowed",
    )


@pytest.mark.parametrize(
    "host",
    [
        "localhost:",
        "localhost:*",
        "localhost:80a",
        "localhost:\uff18\uff10",  # fullwidth digits
        "[::1",
        "[::1]8000",
        "user@localhost:8000",
        "localhost/x:8000",
        "",
        ":8000",
        "local host:8000",
    ],
)
def test_malformed_hosts_are_bad_requests(host: str) -> None:
    error = check_host({"Host": host}, LOCAL)
    assert error is not None
    assert (error.status, error.message) == (400, "Bad Request: malformed Host header")


def test_a_missing_or_repeated_host_is_a_bad_request() -> None:
    assert check_host({}, LOCAL) == HttpError(400, "Bad Request: missing Host header")
    twice = [("Host", "localhost:8000"), ("host", "localhost:8000")]
    assert check_host(twice, LOCAL) == HttpError(
        400, "Bad Request: repeated Host header"
    )


def test_host_wildcards_and_bare_names() -> None:
    policy = SecurityPolicy(allowed_hosts=frozenset({"api.example.com:*", "bare"}))
    assert check_host({"Host": "api.example.com:443"}, policy) is None
    assert check_host({"Host": "api.example.com"}, policy) is None
    assert check_host({"Host": "bare"}, policy) is None
    assert status(check_host({"Host": "bare:80"}, policy)) == 421


def test_malformed_allow_list_entries_match_nothing() -> None:
    policy = SecurityPolicy(allowed_hosts=frozenset({"[::1", "ok:1"}))
    assert status(check_host({"Host": "[::1]:1"}, policy)) == 421
    assert check_host({"Host": "ok:1"}, policy) is None


def test_no_allow_list_means_no_host_check() -> None:
    assert check_host({}, SecurityPolicy()) is None
    assert check_host({"Host": "anything"}, SecurityPolicy()) is None


# --- Origin ---------------------------------------------------------------------


def test_an_absent_origin_passes() -> None:
    assert check_origin({}, LOCAL) is None
    assert check_origin({}, SecurityPolicy()) is None


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:6274",
        "http://localhost",
        "https://127.0.0.1:3000",
        "http://[::1]:8000",
        "HTTP://LOCALHOST:6274",
    ],
)
def test_local_origins_pass_on_a_loopback_bind(origin: str) -> None:
    assert check_origin({"Origin": origin}, LOCAL) is None


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.com",
        "http://evil.com:8000",
        "http://localhost.evil.com:8000",
        "null",
        "file://",
        "ftp://localhost:21",
        "http://localhost:abc",
        "localhost:8000",
        "",
    ],
)
def test_other_origins_are_forbidden(origin: str) -> None:
    error = check_origin({"Origin": origin}, LOCAL)
    assert error == HttpError(403, "Forbidden: Origin not allowed")


def test_a_repeated_origin_is_forbidden() -> None:
    twice = [("Origin", "http://localhost:1"), ("origin", "http://localhost:1")]
    assert status(check_origin(twice, LOCAL)) == 403


def test_the_default_policy_forbids_any_origin() -> None:
    assert (
        status(check_origin({"Origin": "http://localhost:1"}, SecurityPolicy())) == 403
    )


def test_listed_origins_match_exactly_or_by_port_wildcard() -> None:
    policy = SecurityPolicy(
        allowed_origins=frozenset({"https://App.Example", "null", "http://dev:*"})
    )
    assert check_origin({"Origin": "https://app.example"}, policy) is None
    assert check_origin({"Origin": "null"}, policy) is None
    assert check_origin({"Origin": "http://dev:5173"}, policy) is None
    assert status(check_origin({"Origin": "https://app.example:444"}, policy)) == 403
    assert status(check_origin({"Origin": "https://dev:5173"}, policy)) == 403


def test_no_origin_list_accepts_any_origin() -> None:
    policy = SecurityPolicy(allowed_origins=None)
    assert check_origin({"Origin": "http://evil.com"}, policy) is None


# --- Content-Type ---------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "application/json",
        "Application/JSON",
        "application/json; charset=utf-8",
        "application/json;charset=UTF8",
        'application/json; charset="utf-8"',
        "application/json; foo=bar",
    ],
)
def test_json_content_types_pass(value: str) -> None:
    assert check_content_type({"Content-Type": value}) is None


@pytest.mark.parametrize(
    "value",
    [
        "text/plain",
        "text/plain; a=application/json",
        "application/jsonx",
        "application/json-rpc",
        "application/json; charset=latin-1",
        "application/json, text/plain",
        "",
        "multipart/form-data",
    ],
)
def test_other_content_types_are_unsupported(value: str) -> None:
    error = check_content_type({"Content-Type": value})
    assert status(error) == 415


def test_a_missing_or_repeated_content_type_is_unsupported() -> None:
    assert status(check_content_type({})) == 415
    twice = [("Content-Type", "application/json")] * 2
    assert status(check_content_type(twice)) == 415


# --- Accept ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "wanted", "result"),
    [
        (None, "application/json", False),
        ("", "application/json", False),
        ("application/json", "application/json", True),
        ("APPLICATION/JSON", "application/json", True),
        ("application/*", "application/json", True),
        ("*/*", "text/event-stream", True),
        ("text/*", "text/event-stream", True),
        ("text/*", "application/json", False),
        ("application/json;q=0", "application/json", False),
        ("application/json; q=0.0", "application/json", False),
        ("application/json; q=0.5", "application/json", True),
        ("application/json; q=abc", "application/json", False),
        ("text/html, application/json;q=0.9", "application/json", True),
        ("application/jsonx", "application/json", False),
    ],
)
def test_accepts(accept: str | None, wanted: str, result: bool) -> None:
    assert accepts(accept, wanted) is result


@pytest.mark.parametrize(
    "accept",
    [
        BOTH,
        "text/event-stream, application/json",
        "*/*",
        "application/*, text/*",
        "application/json;q=0.9, text/event-stream;q=0.1",
    ],
)
def test_posts_accepting_both_pass(accept: str) -> None:
    assert check_accept({"Accept": accept}, "POST") is None


def test_accept_lines_are_combined() -> None:
    lines = [("Accept", "application/json"), ("accept", "text/event-stream")]
    assert check_accept(lines, "post") is None


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Accept": "application/json"},
        {"Accept": "text/event-stream"},
        {"Accept": "application/json, text/event-stream;q=0"},
        {"Accept": "text/html"},
    ],
)
def test_posts_not_accepting_both_are_not_acceptable(headers: dict[str, str]) -> None:
    error = check_accept(headers, "POST")
    assert error is not None
    assert error.status == 406
    assert "application/json and text/event-stream" in error.message


def test_gets_must_accept_event_streams() -> None:
    assert check_accept({"Accept": "text/event-stream"}, "GET") is None
    assert check_accept({"Accept": "*/*"}, "get") is None
    error = check_accept({"Accept": "application/json"}, "GET")
    assert error is not None
    assert (error.status, error.message) == (
        406,
        "Not Acceptable: the client must accept text/event-stream",
    )
    assert status(check_accept({}, "GET")) == 406


def test_other_methods_have_no_accept_rule() -> None:
    assert check_accept({}, "DELETE") is None


# --- body size ------------------------------------------------------------------


def test_a_declared_length_within_the_limit_passes() -> None:
    policy = SecurityPolicy(max_body_size=10)
    assert check_content_length({}, policy) is None
    assert check_content_length({"Content-Length": "10"}, policy) is None
    assert check_content_length({"Content-Length": " 0 "}, policy) is None
    same_twice = [("Content-Length", "5"), ("content-length", "5")]
    assert check_content_length(same_twice, policy) is None


def test_a_declared_length_over_the_limit_is_too_large() -> None:
    error = check_content_length(
        {"Content-Length": "11"}, SecurityPolicy(max_body_size=10)
    )
    assert error == HttpError(413, "Content Too Large: the limit is 10 bytes")


@pytest.mark.parametrize("value", ["-1", "1e3", "abc", "", "١٢", "5, 6"])
def test_an_unreadable_length_is_a_bad_request(value: str) -> None:
    error = check_content_length({"Content-Length": value}, LOCAL)
    assert error == HttpError(400, "Bad Request: invalid Content-Length")


def test_conflicting_lengths_are_a_bad_request() -> None:
    lines = [("Content-Length", "5"), ("Content-Length", "6")]
    assert status(check_content_length(lines, LOCAL)) == 400


def test_the_bytes_read_are_checked_against_the_limit() -> None:
    policy = SecurityPolicy(max_body_size=3)
    assert check_body_size(0, policy) is None
    assert check_body_size(3, policy) is None
    assert status(check_body_size(4, policy)) == 413


# --- all together ---------------------------------------------------------------


def test_a_good_post_passes() -> None:
    assert check_request("POST", GOOD_POST, LOCAL) is None
    raw = [(k.lower().encode(), v.encode()) for k, v in GOOD_POST.items()]
    assert check_request("post", HttpHeaders.from_asgi(raw), LOCAL) is None


def test_host_is_checked_first_then_origin() -> None:
    everything_wrong = {"Host": "evil.com", "Origin": "http://evil.com"}
    assert status(check_request("POST", everything_wrong, LOCAL)) == 421
    bad_origin = {**GOOD_POST, "Origin": "http://evil.com", "Content-Type": "x/y"}
    assert status(check_request("POST", bad_origin, LOCAL)) == 403


def test_post_checks_content_type_then_accept_then_length() -> None:
    policy = SecurityPolicy.for_bind("127.0.0.1", 8000)
    assert (
        status(check_request("POST", {**GOOD_POST, "Content-Type": "x/y"}, policy))
        == 415
    )
    assert status(check_request("POST", {**GOOD_POST, "Accept": "x/y"}, policy)) == 406
    too_big = {**GOOD_POST, "Content-Length": str(DEFAULT_MAX_BODY_SIZE + 1)}
    assert status(check_request("POST", too_big, policy)) == 413


def test_get_checks_accept_only() -> None:
    get = {"Host": "localhost:8000", "Accept": "text/event-stream"}
    assert check_request("GET", get, LOCAL) is None
    assert status(check_request("GET", {"Host": "localhost:8000"}, LOCAL)) == 406


def test_delete_checks_host_and_origin_only() -> None:
    assert check_request("DELETE", {"Host": "localhost:8000"}, LOCAL) is None
    assert status(check_request("DELETE", {"Host": "evil.com"}, LOCAL)) == 421
    delete = {"Host": "localhost:8000", "Origin": "http://evil.com"}
    assert status(check_request("DELETE", delete, LOCAL)) == 403


def test_a_body_must_arrive_within_the_timeout_if_any() -> None:
    assert SecurityPolicy().body_timeout_s == DEFAULT_BODY_TIMEOUT_S == 30.0
    assert SecurityPolicy.for_bind("127.0.0.1", 80).body_timeout_s == 30.0
    assert SecurityPolicy(body_timeout_s=None).body_timeout_s is None
    with pytest.raises(ValueError, match="body_timeout_s"):
        SecurityPolicy(body_timeout_s=0)


def test_repeated_headers_keep_their_verdict_and_each_length_is_checked() -> None:
    # The verdict on Host, Origin, Content-Type and Accept is remembered per
    # distinct set of values; the body size is not part of it.
    policy = SecurityPolicy.for_bind("127.0.0.1", 8000)
    small = SecurityPolicy(
        allowed_hosts=policy.allowed_hosts,
        allowed_origins=policy.allowed_origins,
        max_body_size=10,
    )
    for _ in range(2):
        assert (
            check_request("POST", {**GOOD_POST, "Content-Length": "5"}, small) is None
        )
        too_big = {**GOOD_POST, "Content-Length": "11"}
        assert status(check_request("POST", too_big, small)) == 413
        assert (
            status(check_request("POST", {**GOOD_POST, "Accept": "x/y"}, small)) == 406
        )
        stream = {**GOOD_POST, "Accept": "text/event-stream"}
        assert check_request("GET", stream, small) is None
        assert status(check_request("POST", stream, small)) == 406


def test_asgi_headers_are_read_as_the_mapping_is() -> None:
    raw = [
        (b"host", b" localhost:8000\t"),
        (b"x-twice", b"a"),
        (b"X-Twice", b"b"),
        (b"caf\xe9", b"\xe9t\xe9"),
    ]
    headers = HttpHeaders.from_asgi(raw)
    expected = HttpHeaders([(n.decode("latin-1"), v.decode("latin-1")) for n, v in raw])
    assert list(headers) == list(expected)
    assert headers.get("HOST") == "localhost:8000"
    assert headers.get_all("x-twice") == ["a", "b"]
    assert headers.get("café") == "été"

"""HTTP headers: case-insensitive fields, `MCP-Protocol-Version`, the 2026-07-28
standard headers, and `Mcp-Param-*` with its base64 sentinel encoding.

The request examples of the 2026-07-28 specification are read from the shared
schema folder (none of them uses `x-mcp-header`; its examples come from the
transport page's own table).
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_specgen_runtime.errors import ErrorCode, RpcError
from mcp_specgen_runtime.protocol import session
from mcp_specgen_runtime.transports.http import (
    DEFAULT_PROTOCOL_VERSION,
    HEADER_MISMATCH,
    UNSUPPORTED_PROTOCOL_VERSION,
    HttpError,
    HttpHeaders,
    ParamHeader,
    as_headers,
    check_param_headers,
    check_request_headers,
    client_param_headers,
    decode_header_value,
    encode_header_value,
    headers as headers_module,
    media_type,
    param_header_problem,
    param_headers,
    protocol_version,
    render_param_value,
    request_headers,
)
from tests.conftest import SHARED_SCHEMAS

EXAMPLES = SHARED_SCHEMAS / "2026-07-28" / "examples"
MODERN = "2026-07-28"
LEGACY = ("2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_REQUESTS = (
    "CallToolRequest",
    "CompleteRequest",
    "DiscoverRequest",
    "GetPromptRequest",
    "ListPromptsRequest",
    "ListResourceTemplatesRequest",
    "ListResourcesRequest",
    "ListToolsRequest",
    "ReadResourceRequest",
    "SubscriptionsListenRequest",
)


def example_files(*names: str) -> list[Path]:
    files = [path for name in names for path in sorted((EXAMPLES / name).glob("*"))]
    assert files, names
    return files


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def modern_request(method: str, **params: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {"_meta": meta, **params},
    }


def assert_mismatch(error: HttpError | None, *words: str) -> None:
    assert error is not None
    assert (error.status, error.code) == (400, HEADER_MISMATCH)
    assert error.message.startswith("Header mismatch: ")
    for word in words:
        assert word in error.message


# --- HttpHeaders ----------------------------------------------------------------


def test_headers_are_case_insensitive_and_keep_repeated_lines() -> None:
    fields = HttpHeaders([("Accept", "a"), ("ACCEPT", "b"), ("X-One", "1")])
    assert fields.get("accept") == "a, b"
    assert fields.get_all("Accept") == ["a", "b"]
    assert fields.get("x-one") == "1"
    assert fields.get("missing") is None
    assert fields.get_all("missing") == []
    assert "x-ONE" in fields
    assert "missing" not in fields
    assert 42 not in fields
    assert list(fields) == [("accept", "a"), ("accept", "b"), ("x-one", "1")]
    assert "x-one" in repr(fields)


def test_headers_from_a_mapping_and_from_asgi() -> None:
    assert HttpHeaders({"Host": "h"}).get("HOST") == "h"
    raw = [(b"host", b"localhost:1"), (b"x-latin", "caf\xe9".encode("latin-1"))]
    fields = HttpHeaders.from_asgi(raw)
    assert fields.get("Host") == "localhost:1"
    assert fields.get("X-Latin") == "caf\xe9"


def test_as_headers_keeps_an_instance_and_wraps_the_rest() -> None:
    fields = HttpHeaders()
    assert as_headers(fields) is fields
    assert as_headers({"A": "1"}).get("a") == "1"
    assert as_headers([("A", "1")]).get("a") == "1"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        (" ; charset=utf-8", None),
        ("application/json", "application/json"),
        ("Application/JSON; charset=UTF-8", "application/json"),
        (" text/event-stream ", "text/event-stream"),
    ],
)
def test_media_type(value: str | None, expected: str | None) -> None:
    assert media_type(value) == expected


# --- HttpError ------------------------------------------------------------------


def test_http_error_builds_a_json_rpc_error_reply() -> None:
    error = HttpError(400, "nope", -32022, {"supported": ["a"]})
    assert json.loads(error.body()) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32022, "message": "nope", "data": {"supported": ["a"]}},
    }
    assert json.loads(error.body("r1"))["id"] == "r1"
    rpc = error.rpc_error()
    assert isinstance(rpc, RpcError)
    assert (rpc.code, rpc.message, rpc.data) == (-32022, "nope", {"supported": ["a"]})


def test_http_error_defaults_to_invalid_request_without_data() -> None:
    error = HttpError(415, "bad type")
    assert error.code == ErrorCode.INVALID_REQUEST
    assert json.loads(error.body(7)) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32600, "message": "bad type"},
    }


def test_the_error_codes_and_meta_key_agree_with_the_schema_and_session() -> None:
    schema = load(SHARED_SCHEMAS / MODERN / "schema.json")["$defs"]

    def code(name: str) -> int:
        parts = schema[name]["properties"]["error"]["allOf"]
        return next(
            p["properties"]["code"]["const"] for p in parts if "properties" in p
        )

    assert code("HeaderMismatchError") == HEADER_MISMATCH == -32020
    assert code("UnsupportedProtocolVersionError") == UNSUPPORTED_PROTOCOL_VERSION
    assert UNSUPPORTED_PROTOCOL_VERSION == session.UNSUPPORTED_PROTOCOL_VERSION
    assert headers_module.META_PROTOCOL_VERSION == session.META_PROTOCOL_VERSION


def test_a_mismatch_body_has_the_shape_of_the_spec_example() -> None:
    (path,) = example_files("HeaderMismatchError")
    example = load(path)
    error = check_request_headers(
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "foo"},
        modern_request("tools/call", name="bar"),
    )
    assert error is not None
    body = json.loads(error.body(example["id"]))
    assert body == example
    assert sorted(body["error"]) == ["code", "message"]


# --- MCP-Protocol-Version -------------------------------------------------------


def test_a_supported_version_is_the_requests() -> None:
    served = [*LEGACY, MODERN]
    for version in served:
        assert protocol_version({"mcp-protocol-version": version}, served) == version
    fields = HttpHeaders([("MCP-PROTOCOL-VERSION", "2025-06-18")])
    assert protocol_version(fields, iter(served)) == "2025-06-18"
    # RFC 9110: surrounding whitespace is not part of a field value.
    padded = HttpHeaders([("mcp-protocol-version", " 2025-06-18\t")])
    assert protocol_version(padded, served) == "2025-06-18"


@pytest.mark.parametrize("value", ["1900-01-01", "", "DRAFT"])
def test_an_unsupported_version_is_400_with_the_supported_list(value: str) -> None:
    error = protocol_version({"MCP-Protocol-Version": value}, LEGACY)
    assert isinstance(error, HttpError)
    assert (error.status, error.code) == (400, UNSUPPORTED_PROTOCOL_VERSION)
    assert error.data == {"supported": list(LEGACY), "requested": value}
    assert error.message.startswith("Unsupported protocol version")


def test_a_long_unsupported_version_is_shortened_in_the_message() -> None:
    error = protocol_version({"MCP-Protocol-Version": "x" * 500}, LEGACY)
    assert isinstance(error, HttpError)
    assert len(error.message) < 120
    assert error.data["requested"] == "x" * 500


def test_without_the_header_the_negotiated_version_is_assumed() -> None:
    assert protocol_version({}, LEGACY, negotiated="2025-11-25") == "2025-11-25"


def test_without_the_header_or_a_session_2025_03_26_is_assumed() -> None:
    assert DEFAULT_PROTOCOL_VERSION == "2025-03-26"
    assert protocol_version({}, LEGACY) == "2025-03-26"


def test_without_the_header_a_server_not_serving_2025_03_26_refuses() -> None:
    error = protocol_version({}, ["2025-11-25", MODERN])
    assert isinstance(error, HttpError)
    assert_mismatch(error, "MCP-Protocol-Version", "missing")


def test_a_repeated_version_header_is_refused() -> None:
    fields = [("MCP-Protocol-Version", MODERN), ("mcp-protocol-version", MODERN)]
    error = protocol_version(fields, [MODERN])
    assert isinstance(error, HttpError)
    assert_mismatch(error, "more than once")


# --- 2026-07-28 standard request headers ----------------------------------------


@pytest.mark.parametrize(
    "path", example_files(*CLIENT_REQUESTS), ids=lambda p: p.parent.name
)
def test_the_spec_examples_round_trip_their_standard_headers(path: Path) -> None:
    request = load(path)
    sent = request_headers(request)
    assert sent["MCP-Protocol-Version"] == MODERN
    assert sent["Mcp-Method"] == request["method"]
    field = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
    if request["method"] in field:
        assert sent["Mcp-Name"] == request["params"][field[request["method"]]]
    else:
        assert "Mcp-Name" not in sent
    assert check_request_headers(sent, request) is None
    lowered = {name.lower(): value for name, value in sent.items()}
    assert check_request_headers(HttpHeaders(lowered.items()), request) is None
    for name in sent:
        partial = {k: v for k, v in sent.items() if k != name}
        assert_mismatch(check_request_headers(partial, request), name, "missing")
        wrong = {**sent, name: sent[name] + "x"}
        assert_mismatch(check_request_headers(wrong, request), name, "does not match")


def test_the_spec_example_values_are_plain_headers() -> None:
    request = modern_request("resources/read", uri="file:///projects/myapp/config.json")
    assert request_headers(request) == {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "resources/read",
        "Mcp-Name": "file:///projects/myapp/config.json",
    }


def test_a_non_ascii_name_is_sent_and_checked_in_base64() -> None:
    request = modern_request("prompts/get", name="résumé")
    sent = request_headers(request)
    assert sent["Mcp-Name"] == "=?base64?csOpc3Vtw6k=?="
    assert check_request_headers(sent, request) is None
    plain = {**sent, "Mcp-Name": "résumé"}
    assert_mismatch(check_request_headers(plain, request), "malformed")


def test_header_values_are_case_sensitive() -> None:
    request = modern_request("tools/call", name="get_weather")
    sent = request_headers(request)
    assert_mismatch(
        check_request_headers({**sent, "Mcp-Method": "Tools/Call"}, request)
    )
    assert_mismatch(check_request_headers({**sent, "Mcp-Name": "GET_WEATHER"}, request))


def test_mcp_name_is_not_checked_when_the_body_has_no_name() -> None:
    request = modern_request("tools/call")
    sent = request_headers(request)
    assert "Mcp-Name" not in sent
    assert check_request_headers(sent, request) is None
    assert check_request_headers({**sent, "Mcp-Name": "x"}, request) is None


def test_the_body_version_must_match_the_header() -> None:
    request = modern_request("tools/list")
    sent = request_headers(request)
    request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "draft"
    assert_mismatch(
        check_request_headers(sent, request), "'2026-07-28'", "body value 'draft'"
    )
    del request["params"]["_meta"]
    assert_mismatch(check_request_headers(sent, request), "body value None")
    assert_mismatch(check_request_headers(sent, {"method": "tools/list"}))


def test_repeated_standard_headers_are_refused() -> None:
    request = modern_request("tools/call", name="t")
    sent = list(request_headers(request).items())
    for name, value in list(sent):
        error = check_request_headers([*sent, (name.upper(), value)], request)
        assert_mismatch(error, name, "more than once")


def test_request_headers_need_a_method_and_an_envelope_version() -> None:
    with pytest.raises(ValueError, match="_meta protocol version"):
        request_headers({"method": "tools/list", "params": {}})
    with pytest.raises(ValueError, match="_meta protocol version"):
        request_headers({"params": modern_request("x")["params"]})


# --- value encoding -------------------------------------------------------------

# The table of the 2026-07-28 transport page, "Value Encoding".
SPEC_ENCODINGS = [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
]


@pytest.mark.parametrize(("value", "encoded"), SPEC_ENCODINGS)
def test_the_spec_encoding_examples(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize(
    "value",
    [
        "",
        " ",
        "\t",
        "a\tb",
        "tail ",
        " head",
        "inner space",
        "crlf\r\ninjection: yes",
        "nul\0",
        "del\x7f",
        "日本語",
        "emoji 🎉",
        "Ünïcödé",
        "=?base64?",
        "=?base64?=",
        "=?base64??=",
        "?=",
        "!#$%&'*+-.^_`|~",
        "a" * 5000,
    ],
)
def test_every_value_round_trips(value: str) -> None:
    encoded = encode_header_value(value)
    assert all(" " <= c <= "~" for c in encoded)
    assert encoded.strip() == encoded
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize("value", ["plain", "a b", "x=?base64?y", "=?base64?x"])
def test_safe_values_stay_plain(value: str) -> None:
    assert encode_header_value(value) == value


@pytest.mark.parametrize(
    "value",
    ["", " lead", "trail ", "tab\there", "ünï", "=?base64?x?=", "=?base64??="],
)
def test_unsafe_values_are_encoded(value: str) -> None:
    encoded = encode_header_value(value)
    assert encoded.startswith("=?base64?") and encoded.endswith("?=")
    expected = base64.b64encode(value.encode()).decode()
    assert encoded == f"=?base64?{expected}?="


def test_the_empty_string_is_encoded_and_both_forms_decode() -> None:
    assert encode_header_value("") == "=?base64??="
    assert decode_header_value("=?base64??=") == ""
    assert decode_header_value("") == ""


@pytest.mark.parametrize(
    "value",
    [
        "=?base64?not base64?=",
        "=?base64?YQ?=",  # padding missing
        "=?base64?YR==?=",  # non-canonical trailing bits
        "=?base64?YQ==\n?=",
        "=?base64?-_8=?=",  # URL-safe alphabet
        "=?base64?/w==?=",  # not UTF-8
        "caf\xe9",  # obs-text from a latin-1 decoded header
        "new\nline",
        "nul\0",
    ],
)
def test_malformed_values_decode_to_none(value: str) -> None:
    assert decode_header_value(value) is None


def test_markers_are_case_sensitive() -> None:
    assert decode_header_value("=?BASE64?YQ==?=") == "=?BASE64?YQ==?="
    assert encode_header_value("=?BASE64?x?=") == "=?BASE64?x?="


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("s", "s"),
        ("", ""),
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (-7, "-7"),
        (0, "0"),
        (42.0, "42"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (2**53 + 1, "9007199254740993"),
        (None, None),
        (float("nan"), None),
        (float("inf"), None),
        ([1], None),
        ({"a": 1}, None),
    ],
)
def test_render_param_value(value: object, text: str | None) -> None:
    assert render_param_value(value) == text


@pytest.mark.skipif(sys.get_int_max_str_digits() == 0, reason="no digit limit")
def test_an_integer_past_the_digit_limit_renders_nothing() -> None:
    huge = 10 ** (sys.get_int_max_str_digits() + 1)
    assert render_param_value(huge) is None


# --- x-mcp-header: schema validity ----------------------------------------------


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def prop(kind: Any = "string", header: Any = None, **more: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"type": kind, **more}
    if header is not None:
        value["x-mcp-header"] = header
    return value


EXECUTE_SQL = {
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "description": "The region to execute the query in",
            "x-mcp-header": "Region",
        },
        "query": {"type": "string", "description": "The SQL query to execute"},
    },
    "required": ["region", "query"],
}
"""The tool definition of the 2026-07-28 transport page's example."""


def test_the_spec_example_tool_mirrors_its_region() -> None:
    assert param_header_problem(EXECUTE_SQL) is None
    assert param_headers(EXECUTE_SQL) == (
        ParamHeader(("region",), "Region", frozenset({"string"})),
    )
    arguments = {"region": "us-west1", "query": "SELECT * FROM users"}
    sent = client_param_headers(EXECUTE_SQL, arguments)
    assert sent == {"Mcp-Param-Region": "us-west1"}
    assert check_param_headers(EXECUTE_SQL, arguments, sent) is None


@pytest.mark.parametrize("path", example_files("Tool"), ids=lambda p: p.name)
def test_the_spec_example_tools_mirror_nothing(path: Path) -> None:
    tool = load(path)
    assert param_header_problem(tool["inputSchema"]) is None
    assert param_headers(tool["inputSchema"]) == ()
    assert client_param_headers(tool["inputSchema"], {"a": 1}) == {}


def test_nested_properties_and_every_type_are_valid() -> None:
    nested = schema(
        outer=prop(
            "object",
            properties={
                "inner": prop("integer", "Inner"),
                "flag": prop(["boolean", "null"], "Flag"),
            },
        ),
        name=prop(["string"], "Name"),
    )
    assert param_header_problem(nested) is None
    found = {p.name: p for p in param_headers(nested)}
    assert found["Inner"].path == ("outer", "inner")
    assert found["Inner"].header == "Mcp-Param-Inner"
    assert found["Flag"].types == frozenset({"boolean"})
    assert found["Name"].types == frozenset({"string"})


@pytest.mark.parametrize(
    ("input_schema", "problem"),
    [
        ({"type": "object", "x-mcp-header": "Root"}, "schema root"),
        (schema(a=prop("string", "")), "not a header token"),
        (schema(a=prop("string", "Has Space")), "not a header token"),
        (schema(a=prop("string", "Line\nBreak")), "not a header token"),
        (schema(a=prop("string", "Cr\r")), "not a header token"),
        (schema(a=prop("string", "Colon:")), "not a header token"),
        (schema(a=prop("string", "Ünï")), "not a header token"),
        (schema(a=prop("string", 7)), "not a header token"),
        (schema(a=prop("number", "N")), "needs type"),
        (schema(a=prop("object", "O")), "needs type"),
        (schema(a=prop("array", "A")), "needs type"),
        (schema(a=prop("null", "Z")), "needs type"),
        (schema(a=prop(["string", "number"], "S")), "needs type"),
        (schema(a=prop(["string", 1], "S")), "needs type"),
        (schema(a=prop([], "S")), "needs type"),
        (schema(a={"enum": ["x"], "x-mcp-header": "E"}), "needs type"),
        (schema(a=prop("string", "Dup"), b=prop("string", "dUP")), "also used"),
        (
            {
                "type": "object",
                "properties": {"a": prop("array", items=prop("string", "Item"))},
            },
            "non-`properties`",
        ),
        (
            {"type": "object", "anyOf": [schema(a=prop("string", "Any"))]},
            "non-`properties`",
        ),
        (
            {"type": "object", "if": schema(a=prop("string", "If"))},
            "non-`properties`",
        ),
        (
            {"type": "object", "$defs": {"D": prop("string", "Def")}},
            "non-`properties`",
        ),
        (
            {"type": "object", "items": [prop("string", "Tuple")]},
            "non-`properties`",
        ),
        (
            {"type": "object", "patternProperties": {"^a": prop("string", "P")}},
            "non-`properties`",
        ),
    ],
)
def test_invalid_annotations_are_reported(
    input_schema: dict[str, Any], problem: str
) -> None:
    reason = param_header_problem(input_schema)
    assert reason is not None and problem in reason
    with pytest.raises(ValueError, match="x-mcp-header"):
        param_headers(input_schema)
    with pytest.raises(ValueError, match="x-mcp-header"):
        client_param_headers(input_schema, {"a": "x"})


def test_data_keywords_and_property_names_are_not_annotations() -> None:
    data = {
        "type": "object",
        "properties": {"x-mcp-header": prop("string")},
        "default": {"x-mcp-header": "Data"},
        "examples": [{"x-mcp-header": "Data"}],
        "const": {"x-mcp-header": "Data"},
        "dependencies": {"a": ["b"]},
        "not": True,
    }
    assert param_header_problem(data) is None
    assert param_headers(data) == ()


# --- x-mcp-header: client and server --------------------------------------------

TYPED = schema(
    name=prop("string", "Name"),
    count=prop("integer", "Count"),
    flag=prop("boolean", "Flag"),
    maybe=prop(["string", "null"], "Maybe"),
    nested=prop("object", properties={"deep": prop("string", "Deep")}),
    free=prop("string"),
)


def test_the_client_mirrors_each_present_value() -> None:
    arguments = {
        "name": "Hello, 世界",
        "count": 42,
        "flag": False,
        "maybe": None,
        "nested": {"deep": " padded "},
        "free": "not mirrored",
    }
    sent = client_param_headers(TYPED, arguments)
    assert sent == {
        "Mcp-Param-Name": "=?base64?SGVsbG8sIOS4lueVjA==?=",
        "Mcp-Param-Count": "42",
        "Mcp-Param-Flag": "false",
        "Mcp-Param-Deep": "=?base64?IHBhZGRlZCA=?=",
    }
    assert check_param_headers(TYPED, arguments, sent) is None
    lowered = [(name.lower(), value) for name, value in sent.items()]
    assert check_param_headers(TYPED, arguments, lowered) is None


def test_absent_null_and_unreachable_values_are_omitted() -> None:
    for arguments in ({}, None, {"nested": "not an object"}, {"name": None}):
        assert client_param_headers(TYPED, arguments) == {}
        assert check_param_headers(TYPED, arguments, {}) is None
    assert client_param_headers(None, {"a": 1}) == {}
    assert client_param_headers(TYPED, {"count": [1, 2]}) == {}


def test_the_server_refuses_a_missing_header() -> None:
    error = check_param_headers(TYPED, {"count": 3}, {})
    assert_mismatch(error, "Mcp-Param-Count", "missing")


def test_the_server_refuses_a_header_without_a_value() -> None:
    assert_mismatch(
        check_param_headers(TYPED, {}, {"Mcp-Param-Name": "x"}),
        "Mcp-Param-Name",
        "no value",
    )
    assert_mismatch(
        check_param_headers(TYPED, {"name": None}, {"mcp-param-name": "x"}),
        "no value",
    )
    assert_mismatch(
        check_param_headers(TYPED, {"count": [1]}, {"Mcp-Param-Count": "[1]"}),
        "no value",
    )


def test_the_server_refuses_a_different_value() -> None:
    assert_mismatch(
        check_param_headers(TYPED, {"name": "bar"}, {"Mcp-Param-Name": "foo"}),
        "Mcp-Param-Name header value 'foo' does not match body value 'bar'",
    )
    assert_mismatch(
        check_param_headers(TYPED, {"flag": True}, {"Mcp-Param-Flag": "True"})
    )


def test_the_server_refuses_malformed_and_repeated_headers() -> None:
    assert_mismatch(
        check_param_headers(TYPED, {"name": "a"}, {"Mcp-Param-Name": "=?base64?@?="}),
        "malformed",
    )
    repeated = [("Mcp-Param-Name", "a"), ("mcp-param-name", "a")]
    assert_mismatch(
        check_param_headers(TYPED, {"name": "a"}, repeated), "more than once"
    )


@pytest.mark.parametrize(
    ("header", "value", "matches"),
    [
        ("42", 42, True),
        ("42.0", 42, True),
        ("42.000", 42, True),
        ("042", 42, True),
        ("42", 42.0, True),
        ("-7", -7, True),
        ("42.5", 42, False),
        ("4.2e1", 42, False),
        ("+42", 42, False),
        (" 42", 42, True),  # surrounding whitespace is not part of a value
        ("43", 42, False),
        ("9007199254740993", 2**53 + 1, True),
        ("9007199254740992", 2**53 + 1, False),
    ],
)
def test_integers_compare_numerically(header: str, value: int, matches: bool) -> None:
    error = check_param_headers(TYPED, {"count": value}, {"Mcp-Param-Count": header})
    assert (error is None) is matches


def test_strings_compare_exactly_even_when_numeric() -> None:
    error = check_param_headers(TYPED, {"name": "42"}, {"Mcp-Param-Name": "42.0"})
    assert_mismatch(error)
    assert check_param_headers(TYPED, {"name": "42"}, {"Mcp-Param-Name": "42"}) is None


def test_booleans_are_not_numbers_for_an_integer_parameter() -> None:
    error = check_param_headers(TYPED, {"count": True}, {"Mcp-Param-Count": "1"})
    assert_mismatch(error)
    assert (
        check_param_headers(TYPED, {"count": True}, {"Mcp-Param-Count": "true"}) is None
    )


def test_an_invalid_or_absent_schema_checks_nothing() -> None:
    invalid = schema(a=prop("number", "A"))
    assert check_param_headers(invalid, {"a": 1.5}, {}) is None
    assert check_param_headers(None, {"a": 1}, {"Mcp-Param-A": "2"}) is None


def test_undeclared_param_headers_are_ignored() -> None:
    headers = {"Mcp-Param-Other": "x", "Mcp-Param-Name": "a"}
    assert check_param_headers(TYPED, {"name": "a"}, headers) is None


@pytest.mark.parametrize("value", [v for v, _ in SPEC_ENCODINGS] + ["", "\t", "ü"])
def test_client_and_server_agree_on_every_string(value: str) -> None:
    arguments = {"name": value}
    sent = client_param_headers(TYPED, arguments)
    assert check_param_headers(TYPED, arguments, sent) is None


def test_a_schema_object_is_scanned_once_and_a_new_one_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp_specgen_runtime.transports.http import headers as module

    scans: list[object] = []
    real = module._scan

    def counted(input_schema: Any) -> Any:
        scans.append(input_schema)
        return real(input_schema)

    monkeypatch.setattr(module, "_scan", counted)
    first = schema(name=prop("string", "Name"))
    for _ in range(3):
        assert (
            check_param_headers(first, {"name": "a"}, {"Mcp-Param-Name": "a"}) is None
        )
        mismatch = check_param_headers(first, {"name": "a"}, {"Mcp-Param-Name": "b"})
        assert mismatch is not None and mismatch.code == HEADER_MISMATCH
    assert scans == [first]
    renamed = schema(name=prop("string", "Other"))
    assert check_param_headers(renamed, {"name": "a"}, {"Mcp-Param-Other": "a"}) is None
    assert scans == [first, renamed]

"""Seeded malformed JSON-RPC input for the fuzz tests, with what each deserves.

`generate(state, seed, count)` mutates valid messages of a connection state
(before initialize, legacy 2025-11-25, 2025-03-26 with batches, 2026-07-28):
truncation, trailing bytes, deep nesting, invalid UTF-8 in string values,
wrong id/method/params/member types, huge numbers, NUL bytes, a BOM, batches
mixing good and bad items. The expected answer of every case is computed by
`expect` from the bytes alone, with the standard library's `json` (invalid
UTF-8 kept as lone surrogates, so that it shows where it sits) and the rules
of JSON-RPC 2.0 and MCP, not by the runtime under test:

- not JSON: one -32700 with id null;
- nested deeper than any decoder goes: one -32600, with the top-level id;
- a JSON-RPC message that breaks the envelope's rules: -32600 with its id
  when usable (an int or a clean string; never for a response), else null;
- a valid notification or response: silence;
- a valid request: what the server's state makes of it (`semantics`); one
  whose id is in flight (earlier in its batch): -32600 with that id (it can
  be determined, so JSON-RPC answers with it).
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from typing import Any

STATES = ("fresh", "legacy", "batch", "modern")
"""Connection states: before initialize, 2025-11-25, 2025-03-26, 2026-07-28."""
VERSION = {"legacy": "2025-11-25", "batch": "2025-03-26", "modern": "2026-07-28"}
MODERN_KEY = "io.modelcontextprotocol/protocolVersion"
ENVELOPE = {
    MODERN_KEY: "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
DEEP = 2500
"""Nesting of the deep cases: past any recursion limit, never near it."""
TOO_DEEP = 1000
"""Nesting no decoder of the server survives (Python's recursion limit)."""
LINE_LIMIT = 8192
"""The stdio server's `max_line_length` in the fuzz tests."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
UNSUPPORTED_VERSION = -32022

Reply = tuple[Any, int | None]
"""An answer: its id and error code (None: a result)."""


@dataclass(frozen=True)
class Expected:
    """The answer a case deserves: replies (none: silence), and whether they
    come as one batch array."""

    replies: tuple[Reply, ...]
    batch: bool = False


@dataclass(frozen=True)
class Case:
    kind: str
    data: bytes
    expected: Expected
    base_method: str | None = None
    """The method of the message mutated (None for batches)."""


# --- what the server answers --------------------------------------------------------

_MISSING = object()


def _clean(text: object) -> bool:
    """A string that was valid UTF-8 (no lone surrogates from the decode)."""
    return isinstance(text, str) and not any(
        "\ud800" <= char <= "\udfff" for char in text
    )


def _usable(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or _clean(value)


def _sound(value: object) -> bool:
    """Every string clean and every number finite, all the way down."""
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, float):
        return value not in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return all(_clean(k) and _sound(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_sound(item) for item in value)
    return True


def _token_ok(meta: object) -> bool:
    if not isinstance(meta, dict):
        return False
    token = meta.get("progressToken", _MISSING)
    return token is _MISSING or _usable(token)


def _params_fit(method: str, params: object) -> bool:
    """Whether `params` decode into the method's params type (2025-03-26,
    2025-11-25 or 2026-07-28: the same rules for what the fuzz sends)."""
    if params is _MISSING:
        return method == "tools/list"
    if not isinstance(params, dict) or not _sound(params):
        return False
    if "_meta" in params and not _token_ok(params["_meta"]):
        return False
    if method == "tools/list":
        return "cursor" not in params  # no cursor the app did not issue
    arguments = params.get("arguments", _MISSING)
    return (
        params.get("name") == "echo"
        and isinstance(arguments, dict)
        and isinstance(arguments.get("message"), str)
    )


def _modern_version(params: object) -> str | None:
    """The protocol version a modern server reads from `params`, if any."""
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict) or not _sound(meta):
        return None
    for key in ("protocolVersion", "requestState"):
        if key in params and not _sound(params[key]):
            return None
    responses = params.get("inputResponses", {})
    if not isinstance(responses, dict) or not _sound(responses):
        return None
    version = meta.get(MODERN_KEY)
    return version if isinstance(version, str) else None


def semantics(state: str, method: str, params: object) -> int | None:
    """The answer of the app to a valid request in `state` (an error code,
    or None for a result)."""
    version = _modern_version(params) if state == "modern" else None
    if version is not None and version != VERSION["modern"]:
        return UNSUPPORTED_VERSION
    if state == "modern" and version is None:
        return INVALID_PARAMS  # a modern connection needs the envelope
    if method == "ping":
        return METHOD_NOT_FOUND if state == "modern" else None  # none in 2026
    if method.startswith("notifications/"):
        return METHOD_NOT_FOUND  # a notification's name: no request has it
    if state == "fresh":
        return INVALID_REQUEST  # send initialize first
    if method not in ("tools/list", "tools/call"):
        return METHOD_NOT_FOUND
    return None if _params_fit(method, params) else INVALID_PARAMS


def _valid_error(error: object) -> bool:
    if not isinstance(error, dict):
        return False
    code = error.get("code")
    return (
        isinstance(code, int)
        and not isinstance(code, bool)
        and _clean(error.get("message"))
    )


def _message(state: str, obj: object, seen: set[Any]) -> Reply | None:
    """The answer to one message (None: silence); `seen` holds the ids of
    requests accepted earlier in the same batch."""
    if not isinstance(obj, dict):
        return (None, INVALID_REQUEST)
    raw_id = obj.get("id", _MISSING)
    request_id = raw_id if _usable(raw_id) else None
    has_method = "method" in obj
    response = not has_method and ("result" in obj or "error" in obj)
    reply_id = None if response else request_id
    well_typed = (
        obj.get("jsonrpc") == "2.0"
        and (raw_id is _MISSING or raw_id is None or _usable(raw_id))
        and (not has_method or _clean(obj["method"]))
        and ("error" not in obj or _valid_error(obj["error"]))
    )
    if not well_typed:
        return (reply_id, INVALID_REQUEST)
    if has_method:
        if raw_id is None:
            return (None, INVALID_REQUEST)
        if "result" in obj or "error" in obj:
            return (request_id, INVALID_REQUEST)
        params = obj.get("params", _MISSING)
        if params is not _MISSING and not isinstance(params, dict | list):
            return (request_id, INVALID_REQUEST)
        if raw_id is _MISSING:
            return None  # a notification
        if request_id in seen:
            return (request_id, INVALID_REQUEST)  # its id is in flight
        seen.add(request_id)
        return (request_id, semantics(state, obj["method"], params))
    if "result" not in obj and "error" not in obj:
        return (request_id, INVALID_REQUEST)
    if raw_id is _MISSING or ("result" in obj and "error" in obj):
        return (None, INVALID_REQUEST)
    if "result" in obj and raw_id is None:
        return (None, INVALID_REQUEST)
    return None  # a response to no request of the server's


def _depth(text: str) -> int:
    """How deep arrays and objects nest (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def _parse(text: str) -> Any:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * DEEP))
    try:
        return json.loads(text, parse_constant=_reject_constant)
    finally:
        sys.setrecursionlimit(limit)


def expect(state: str, data: bytes) -> Expected:
    """What the server in `state` must answer to `data` (one message)."""
    text = data.decode("utf-8", "surrogateescape")
    try:
        parsed = _parse(text)
    except ValueError:  # JSONDecodeError included
        return Expected(((None, PARSE_ERROR),))
    if _depth(text) > TOO_DEEP:
        found = parsed.get("id") if isinstance(parsed, dict) else None
        return Expected(((found if _usable(found) else None, INVALID_REQUEST),))
    if isinstance(parsed, list):
        if state != "batch" or not parsed:
            return Expected(((None, INVALID_REQUEST),))
        seen: set[Any] = set()
        replies = [_message(state, item, seen) for item in parsed]
        return Expected(tuple(r for r in replies if r is not None), batch=True)
    reply = _message(state, parsed, set())
    return Expected(() if reply is None else (reply,))


# --- the messages mutated -------------------------------------------------------------


def bases(state: str, request_id: Any) -> list[dict[str, Any]]:
    """Valid messages of `state` (keys in the order the Python SDK writes)."""

    def request(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        message["method"] = method
        if params is not None:
            message["params"] = params
        return message

    envelope = {"_meta": dict(ENVELOPE)} if state == "modern" else {}
    echo = {"name": "echo", "arguments": {"message": "hello"}, **envelope}
    listing = {**envelope, "_meta": {**envelope.get("_meta", {}), "progressToken": 7}}
    return [
        request("ping", None),
        request("ping", {"_meta": {"progressToken": "p"}}),
        request("tools/list", envelope or None),
        request("tools/list", listing),
        request("tools/call", echo),
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "id": request_id, "result": {}},
    ]


_ODD_IDS: list[Any] = [True, False, 1.5, [1], {"a": 1}, None, "", -5, 0, 2**63]
_ODD_METHODS: list[Any] = [7, None, True, [], {}, "", "no/such", "tools/lis"]
_ODD_PARAMS: list[Any] = [
    1,
    "s",
    True,
    None,
    [],
    [1, 2],
    {},
    {"x": [[[1]]]},
    {"_meta": 5},
    {"_meta": {"progressToken": 1.5}},
    {"_meta": {"progressToken": True}},
    {"_meta": {"progressToken": {}}},
    {"cursor": 5},
]
_GARBAGE = [b" x", b"}", b"{}", b",", b"\x00", b"]", b'"', b" \t "]
_BAD_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80abc", b"\xf4\x90\x80\x80"]
_PLACEHOLDER = "@@fuzz@@"


def _strings(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to the string values (not keys) in `obj`."""
    if isinstance(obj, str):
        return [path]
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _strings(v, (*path, k))]
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _strings(v, (*path, i))]
    return []


def _values(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to every value in `obj` (the root excluded)."""
    found: list[tuple[Any, ...]] = []
    items: Any = (
        obj.items()
        if isinstance(obj, dict)
        else enumerate(obj) if isinstance(obj, list) else ()
    )
    for key, value in items:
        found.append((*path, key))
        found.extend(_values(value, (*path, key)))
    return found


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(obj))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _splice(obj: Any, path: tuple[Any, ...], raw: bytes) -> bytes:
    """`obj` encoded with the value at `path` written as `raw`."""
    return _dump(_set(obj, path, _PLACEHOLDER)).replace(
        json.dumps(_PLACEHOLDER).encode(), raw, 1
    )


def _mutate(rng: random.Random, state: str, base: dict[str, Any]) -> tuple[str, bytes]:
    kind = rng.choice(
        [
            "valid",
            "truncated",
            "trailing",
            "deep",
            "nested",
            "utf8",
            "id",
            "method",
            "params",
            "members",
            "nul",
            "bom",
            "huge-number",
            "whitespace",
        ]
    )
    data = _dump(base)
    if kind == "valid":
        return kind, data
    if kind == "truncated":
        return kind, data[: rng.randrange(1, len(data))]
    if kind == "trailing":
        return kind, data + rng.choice(_GARBAGE)
    if kind == "whitespace":
        return kind, rng.choice([b" ", b"\t", b"  \t"]) + data + rng.choice([b" ", b""])
    if kind == "bom":
        return kind, b"\xef\xbb\xbf" + data
    if kind == "deep":
        depth = rng.randrange(DEEP, DEEP + 500)
        opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
        nest = opener * depth + b"1" + closer * depth
        if "params" in base and rng.random() < 0.7:
            return kind, _splice(base, ("params",), nest)
        return kind, b"[" * depth + data + b"]" * depth
    if kind == "nested":
        depth = rng.randrange(2, 40)
        nest = b"[" * depth + b"{}" + b"]" * depth
        if isinstance(base.get("params"), dict):
            return kind, _splice(base, ("params", "extra"), nest)
        return kind, _splice(base, ("extra",), nest)
    if kind == "utf8":
        paths = _strings(base)
        path = rng.choice(paths)
        text = json.dumps(_get(base, path))[1:-1].encode()
        cut = rng.randrange(len(text) + 1)
        bad = text[:cut] + rng.choice(_BAD_UTF8) + text[cut:]
        return kind, _splice(base, path, b'"' + bad + b'"')
    if kind == "nul":
        paths = _strings(base)
        path = rng.choice(paths)
        raw = rng.choice([b'"a\x00b"', b'"a\\u0000b"'])
        return kind, _splice(base, path, raw)
    if kind == "huge-number":
        paths = _values(base)
        path = rng.choice(paths)
        return kind, _splice(base, path, rng.choice([b"1e400", b"-1e400", b"1E999"]))
    if kind == "id":
        if rng.random() < 0.2:
            return kind, _dump({k: v for k, v in base.items() if k != "id"})
        return kind, _dump(_set(base, ("id",), rng.choice(_ODD_IDS)))
    if kind == "method":
        if rng.random() < 0.2:
            return kind, _dump({k: v for k, v in base.items() if k != "method"})
        return kind, _dump(_set(base, ("method",), rng.choice(_ODD_METHODS)))
    if kind == "params":
        if rng.random() < 0.2:
            return kind, _dump({k: v for k, v in base.items() if k != "params"})
        return kind, _dump(_set(base, ("params",), rng.choice(_ODD_PARAMS)))
    # members
    choice = rng.randrange(6)
    if choice == 0:
        return kind, _dump({k: v for k, v in base.items() if k != "jsonrpc"})
    if choice == 1:
        return kind, _dump(_set(base, ("jsonrpc",), rng.choice(["1.0", 2.0, None])))
    if choice == 2:
        return kind, _dump({**base, "result": {}})
    if choice == 3:
        error = rng.choice([{"code": 1, "message": "m"}, {"code": "x"}, None, 5])
        return kind, _dump({**base, "error": error})
    if choice == 4:
        return kind, _dump({**base, "extra": {"unknown": True}})
    # a duplicate key: the last one wins
    return kind, data[:-1] + b',"id":' + _dump(rng.choice([3, "dup", 1.5])) + b"}"


def _get(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _batch(rng: random.Random, state: str, first_id: int) -> bytes:
    items: list[bytes] = []
    for n in range(rng.randrange(0, 6)):
        base = rng.choice(bases(state, first_id + n))
        kind, data = _mutate(rng, state, base)
        # Items must leave the array JSON: no truncation or trailing bytes.
        if kind in ("truncated", "trailing", "bom", "deep", "whitespace"):
            data = _dump(base)
        items.append(data)
    if rng.random() < 0.2 and items:
        items.append(items[0])  # a duplicate id
    return b"[" + b",".join(items) + b"]"


def _too_long(rng: random.Random, state: str, request_id: int) -> bytes:
    """A request line over `LINE_LIMIT`, its id first or (as the TypeScript
    SDK writes it) last."""
    filler = "y" * (LINE_LIMIT + rng.randrange(1, 3 * LINE_LIMIT))
    params = {"name": "echo", "arguments": {"message": filler}}
    message: dict[str, Any]
    if rng.random() < 0.5:
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        message["params"] = params
    else:
        message = {"method": "tools/call", "params": params}
        message.update({"jsonrpc": "2.0", "id": request_id})
    return _dump(message)


def generate(state: str, seed: int, count: int, *, stdio: bool = True) -> list[Case]:
    """`count` cases for a server in `state`; ids count up from 1000 and
    differ between cases (the sync pings use ids below 1000)."""
    rng = random.Random(f"{seed}-{state}")
    cases: list[Case] = []
    for n in range(count):
        request_id: Any = 1000 + 10 * n
        if rng.random() < 0.2:
            request_id = f"s{request_id}"
        roll = rng.random()
        if roll < 0.15:
            data = _batch(rng, state, 1000 + 10 * n)
            cases.append(Case("batch", data, expect(state, data)))
            continue
        if stdio and roll < 0.18:
            data = _too_long(rng, state, 1000 + 10 * n)
            reply = (1000 + 10 * n, INVALID_REQUEST)
            cases.append(Case("too-long", data, Expected((reply,)), "tools/call"))
            continue
        base = rng.choice(bases(state, request_id))
        kind, data = _mutate(rng, state, base)
        if stdio and (b"\n" in data or not data.strip(b" \t\r")):
            continue  # not one line: the framing's business, tested apart
        cases.append(Case(kind, data, expect(state, data), base.get("method")))
    return cases

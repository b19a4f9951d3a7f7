"""Decode and encode throughput of MCP messages: ours against mcp-types (pydantic).

Five cases, the same JSON bytes for every contender:

- `tools_call_request`: a `tools/call` request, the whole JSON-RPC message;
- `tools_list_result`: a `tools/list` result with 100 tools (2-3 properties each);
- `call_tool_result`: a `CallToolResult` with 10 text blocks;
- `initialize_request`: an `initialize` request, the whole JSON-RPC message;
- `initialize_result`: an `initialize` result.

For each, operations per second of decode (+ validation) and of encode, for:

- `ours`: the codec, `decode(raw, T)` / `encode(value)`, with the generated
  2025-11-25 types (`CallToolRequest`, `ListToolsResult`, ...);
- `mcp-types (SDK)`: what the official SDK (PyPI `mcp` 2.3.0 on `mcp-types`
  2.3.0, pydantic) does with such a message on the 2025-11-25 protocol, see
  `PEER_PATHS`;
- `mcp-types (model)`: the public pydantic model alone,
  `T.model_validate_json(raw)` / `value.model_dump_json(by_alias=True,
  exclude_none=True)`, one pass and no envelope: the fastest the models go;
- `hand-written msgspec`: minimal msgspec Structs for exactly these shapes
  (defined below), the near-ceiling a typed decoder can reach;
- `msgspec untyped`: `msgspec.json.decode` / `encode` of builtins, the ceiling.

mcp-types is not installed in the project venv: its contenders run in the peer
venv `.cache/peers/venv` (see `peers.py`), in a helper process that times a
given number of iterations on request, so contenders still alternate within each
round. Each sample times enough iterations for about `target_s` (calibrated once
per contender, case and direction); `rounds` samples, the order of contenders
reversed every other round; reported: median ops/s with min-max, and the ratios
of medians ours/mcp-types (target >= 10x) and ours/hand-written (target >= 0.85x,
issue 19).
The garbage collector stays on, as in a server. Every encoder's output is
checked against the input (`roundtrip`).

    python -m benchmarks types [--quick]
"""

from __future__ import annotations

import json
import select
import statistics
import subprocess
import tempfile
import time
from functools import partial
from typing import IO, TYPE_CHECKING, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from mcp_specgen_runtime import decode, encode
from mcp_specgen_types import v2025_11_25 as rev

from ._common import table
from .peers import PYTHON_PEERS, ensure_python_peers

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ._common import Echo

    Body = tuple[Callable[..., Any], tuple[Any, ...]]
    """A function and its arguments: one operation of one contender."""

VERSION = "2025-11-25"
"""The protocol revision of every case (ours: `mcp_specgen_types.v2025_11_25`)."""

ANSWER_TIMEOUT_S = 120.0
"""Seconds the mcp-types helper process may take to answer one line (its
set-up, or one timing), after which it is deemed stuck and killed."""

TARGET_VS_MCP_TYPES = 10.0
"""Ours should be at least this many times as fast as mcp-types (SDK path)."""

TARGET_VS_HAND_WRITTEN = 0.85
"""Ours should reach at least this fraction of the hand-written Structs' speed."""

OURS = "ours"
SDK = "mcp-types (SDK)"
MODEL = "mcp-types (model)"
HAND = "hand-written msgspec"
UNTYPED = "msgspec untyped"
CONTENDERS = (OURS, SDK, MODEL, HAND, UNTYPED)
PEER_CONTENDERS = (SDK, MODEL)
DIRECTIONS = ("decode", "encode")

PEER_PATHS = {
    SDK: {
        "decode (requests)": (
            "the server's receive path (mcp.server.stdio + ServerRunner): "
            "jsonrpc_message_adapter.validate_json(raw, by_name=False); "
            "runner._extract_meta(params); mcp_types.methods.validate_client_request"
            "(method, '2025-11-25', params) (the surface wire model); "
            "<Params>.model_validate(params, by_name=False), the handler's params. "
            "initialize params are validated once here (the SDK does it twice)"
        ),
        "decode (results)": (
            "the client's receive path (ClientSession.send_request): the result "
            "member parsed as the envelope does, TypeAdapter(dict[str, Any])"
            ".validate_json(raw); _clamp_inbound_ttl; methods.validate_server_result"
            "(surface validate + dump); _later_revision_fields filter; "
            "<Result>.model_validate(raw, by_name=False)"
        ),
        "encode (requests)": (
            "the client's send path: request.model_dump(by_alias=True, "
            "mode='json', exclude_none=True); JSONRPCRequest(jsonrpc, id, method, "
            "params).model_dump_json(by_alias=True, exclude_unset=True) as the "
            "transport writes it (the dispatcher's progress/otel bookkeeping left "
            "out)"
        ),
        "encode (results)": (
            "the server's send path (ServerRunner._serialize + dispatcher + "
            "transport): result.model_dump(by_alias=True, mode='json', "
            "exclude_none=True); methods.serialize_server_result (surface sieve); "
            "JSONRPCResponse(jsonrpc, id, result).model_dump_json(by_alias=True, "
            "exclude_unset=True): writes the envelope too (~30 bytes)"
        ),
    },
    MODEL: {
        "decode": "<T>.model_validate_json(raw), T the public mcp_types model "
        "(requests: the envelope's jsonrpc/id are ignored, not validated)",
        "encode": "value.model_dump_json(by_alias=True, exclude_none=True) "
        "(requests: no jsonrpc/id written)",
    },
}
"""What the mcp-types contenders measure; pydantic encoders return str, not bytes."""


# --- the cases -----------------------------------------------------------------


def _tool(index: int) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "query": {"type": "string", "description": f"What tool {index} looks for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    }
    if index % 2:
        properties["verbose"] = {"type": "boolean", "default": False}
    return {
        "name": f"tool_{index:03d}",
        "description": f"Tool number {index}: searches the demo corpus.",
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": ["query"],
        },
    }


_DOCUMENTS: dict[str, Any] = {
    "tools_call_request": {
        "jsonrpc": "2.0",
        "id": 42,
        "method": "tools/call",
        "params": {
            "name": "search",
            "arguments": {"query": "msgspec", "limit": 10, "filters": {"lang": "en"}},
            "_meta": {"progressToken": "tok-42"},
        },
    },
    "tools_list_result": {"tools": [_tool(i) for i in range(100)]},
    "call_tool_result": {
        "content": [
            {"type": "text", "text": f"Result line {i}: " + "lorem ipsum dolor " * 4}
            for i in range(10)
        ],
        "isError": False,
    },
    "initialize_request": {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {
                "roots": {"listChanged": True},
                "sampling": {},
                "elicitation": {"form": {}},
            },
            "clientInfo": {"name": "bench-client", "version": "1.0.0"},
        },
    },
    "initialize_result": {
        "protocolVersion": VERSION,
        "capabilities": {
            "logging": {},
            "prompts": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "tools": {"listChanged": True},
        },
        "serverInfo": {"name": "bench-server", "title": "Bench", "version": "2.3.0"},
        "instructions": "Call tools/list first; every tool takes a query.",
    },
}

CASES: dict[str, bytes] = {
    name: msgspec.json.encode(document) for name, document in _DOCUMENTS.items()
}
"""The JSON bytes every contender decodes (and should encode back)."""

OUR_TYPES: dict[str, Any] = {
    "tools_call_request": rev.CallToolRequest,
    "tools_list_result": rev.ListToolsResult,
    "call_tool_result": rev.CallToolResult,
    "initialize_request": rev.InitializeRequest,
    "initialize_result": rev.InitializeResult,
}


# --- hand-written msgspec Structs for exactly these shapes -----------------------


class _Closed(msgspec.Struct, forbid_unknown_fields=True):
    pass


class HRequestMeta(_Closed, kw_only=True):
    progress_token: int | str | UnsetType = msgspec.field(
        default=UNSET, name="progressToken"
    )


class HCallToolParams(_Closed, kw_only=True):
    name: str
    arguments: dict[str, Any] | UnsetType = UNSET
    meta: HRequestMeta | UnsetType = msgspec.field(default=UNSET, name="_meta")


class HCallToolRequest(_Closed, kw_only=True, tag_field="method", tag="tools/call"):
    jsonrpc: Literal["2.0"]
    id: int | str
    params: HCallToolParams


class HInputSchema(_Closed, kw_only=True):
    type: Literal["object"]
    properties: dict[str, dict[str, Any]] | UnsetType = UNSET
    required: list[str] | UnsetType = UNSET


class HTool(_Closed, kw_only=True):
    name: str
    description: str | UnsetType = UNSET
    input_schema: HInputSchema = msgspec.field(name="inputSchema")


class HListToolsResult(_Closed, kw_only=True):
    tools: list[HTool]
    next_cursor: str | UnsetType = msgspec.field(default=UNSET, name="nextCursor")


class HTextContent(_Closed, kw_only=True, tag_field="type", tag="text"):
    text: str


class HCallToolResult(_Closed, kw_only=True):
    content: list[HTextContent]
    is_error: bool | UnsetType = msgspec.field(default=UNSET, name="isError")


class HImplementation(_Closed, kw_only=True):
    name: str
    version: str
    title: str | UnsetType = UNSET


class HListChanged(_Closed, kw_only=True):
    list_changed: bool | UnsetType = msgspec.field(default=UNSET, name="listChanged")


class HResourcesCapability(_Closed, kw_only=True):
    subscribe: bool | UnsetType = UNSET
    list_changed: bool | UnsetType = msgspec.field(default=UNSET, name="listChanged")


class HClientCapabilities(_Closed, kw_only=True):
    roots: HListChanged | UnsetType = UNSET
    sampling: dict[str, Any] | UnsetType = UNSET
    elicitation: dict[str, Any] | UnsetType = UNSET


class HInitializeParams(_Closed, kw_only=True):
    protocol_version: str = msgspec.field(name="protocolVersion")
    capabilities: HClientCapabilities
    client_info: HImplementation = msgspec.field(name="clientInfo")


class HInitializeRequest(_Closed, kw_only=True, tag_field="method", tag="initialize"):
    jsonrpc: Literal["2.0"]
    id: int | str
    params: HInitializeParams


class HServerCapabilities(_Closed, kw_only=True):
    logging: dict[str, Any] | UnsetType = UNSET
    prompts: HListChanged | UnsetType = UNSET
    resources: HResourcesCapability | UnsetType = UNSET
    tools: HListChanged | UnsetType = UNSET


class HInitializeResult(_Closed, kw_only=True):
    protocol_version: str = msgspec.field(name="protocolVersion")
    capabilities: HServerCapabilities
    server_info: HImplementation = msgspec.field(name="serverInfo")
    instructions: str | UnsetType = UNSET


HAND_TYPES: dict[str, Any] = {
    "tools_call_request": HCallToolRequest,
    "tools_list_result": HListToolsResult,
    "call_tool_result": HCallToolResult,
    "initialize_request": HInitializeRequest,
    "initialize_result": HInitializeResult,
}


# --- the mcp-types side: a helper process in the peer venv -----------------------

PEER_SCRIPT = r"""
import importlib.metadata as md
import json
import sys
import time
from typing import Any

from pydantic import TypeAdapter

import mcp_types as t
from mcp.client.session import _clamp_inbound_ttl, _later_revision_fields
from mcp.server.runner import _extract_meta
from mcp_types import methods
from mcp_types.jsonrpc import JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter

VERSION = "2025-11-25"
RESULT_MEMBER = TypeAdapter(dict[str, Any])
SDK, MODEL = "mcp-types (SDK)", "mcp-types (model)"

REQUESTS = {  # case: (method, handler params type, public request model)
    "tools_call_request": (
        "tools/call", t.CallToolRequestParams, t.CallToolRequest
    ),
    "initialize_request": (
        "initialize", t.InitializeRequestParams, t.InitializeRequest
    ),
}
RESULTS = {  # case: (method, public result model)
    "tools_list_result": ("tools/list", t.ListToolsResult),
    "call_tool_result": ("tools/call", t.CallToolResult),
    "initialize_result": ("initialize", t.InitializeResult),
}


def sdk_decode_request(raw, params_type):
    message = jsonrpc_message_adapter.validate_json(raw, by_name=False)
    params = message.params
    _extract_meta(params)
    methods.validate_client_request(message.method, VERSION, params)
    typed = params_type.model_validate({} if params is None else params, by_name=False)
    return message, typed


def sdk_decode_result(raw, method, result_type):
    data = RESULT_MEMBER.validate_json(raw)
    _clamp_inbound_ttl(data)
    methods.validate_server_result(method, VERSION, data)
    foreign = _later_revision_fields(method, VERSION)
    if not foreign.isdisjoint(data):
        data = {key: value for key, value in data.items() if key not in foreign}
    return result_type.model_validate(data, by_name=False)


def sdk_encode_request(request, request_id):
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    params = data.get("params")
    if params:
        message = JSONRPCRequest(
            jsonrpc="2.0", id=request_id, method=data["method"], params=params
        )
    else:
        message = JSONRPCRequest(jsonrpc="2.0", id=request_id, method=data["method"])
    return message.model_dump_json(by_alias=True, exclude_unset=True)


def sdk_encode_result(value, method):
    dumped = value.model_dump(by_alias=True, mode="json", exclude_none=True)
    dumped = methods.serialize_server_result(method, VERSION, dumped)
    response = JSONRPCResponse(jsonrpc="2.0", id=1, result=dumped)
    return response.model_dump_json(by_alias=True, exclude_unset=True)


def model_encode(value):
    return value.model_dump_json(by_alias=True, exclude_none=True)


def build(cases):
    bodies = {}  # (contender, case, direction) -> (function, arguments)
    outputs = {SDK: {}, MODEL: {}}
    for case, raw in cases.items():
        if case in REQUESTS:
            method, params_type, model = REQUESTS[case]
            sdk_decode = (sdk_decode_request, (raw, params_type))
            envelope, typed = sdk_decode_request(raw, params_type)
            request = model(method=method, params=typed)
            sdk_encode = (sdk_encode_request, (request, envelope.id))
        else:
            method, model = RESULTS[case]
            sdk_decode = (sdk_decode_result, (raw, method, model))
            value = sdk_decode_result(raw, method, model)
            sdk_encode = (sdk_encode_result, (value, method))
        value = model.model_validate_json(raw)
        bodies[(SDK, case, "decode")] = sdk_decode
        bodies[(SDK, case, "encode")] = sdk_encode
        bodies[(MODEL, case, "decode")] = (model.model_validate_json, (raw,))
        bodies[(MODEL, case, "encode")] = (model_encode, (value,))
        for contender, (function, arguments) in (
            (SDK, sdk_encode),
            (MODEL, bodies[(MODEL, case, "encode")]),
        ):
            outputs[contender][case] = function(*arguments)
    return bodies, outputs


def timed(function, arguments, iterations):
    started = time.perf_counter()
    for _ in range(iterations):
        function(*arguments)
    return time.perf_counter() - started


def main():
    setup = json.loads(sys.stdin.readline())
    cases = {name: text.encode() for name, text in setup["cases"].items()}
    bodies, outputs = build(cases)
    names = ("mcp-types", "mcp", "pydantic", "pydantic-core")
    versions = {name: md.version(name) for name in names}
    print(json.dumps({"outputs": outputs, "versions": versions}), flush=True)
    for line in sys.stdin:
        contender, case, direction, iterations = json.loads(line)
        function, arguments = bodies[(contender, case, direction)]
        print(json.dumps(timed(function, arguments, iterations)), flush=True)


main()
"""
"""Run by the peer venv's python: builds the mcp-types contenders, then answers
`[contender, case, direction, iterations]` lines with the seconds they took."""


class PeerProcess:
    """The helper process timing the mcp-types contenders in the peer venv."""

    def __init__(self, python: str) -> None:
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [python, "-I", "-c", PEER_SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        cases = {name: raw.decode() for name, raw in CASES.items()}
        ready = self._ask({"cases": cases})
        self.outputs: dict[str, dict[str, str]] = ready["outputs"]
        self.versions: dict[str, str] = ready["versions"]

    def _ask(self, request: Any) -> Any:
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
            # One line answers each request, so nothing is left in stdout's
            # buffer between two: select on the pipe sees the next answer.
            ready, _, _ = select.select([stdout], [], [], ANSWER_TIMEOUT_S)
            if not ready:
                self._proc.kill()
                raise RuntimeError(
                    "the mcp-types helper process gave no answer within "
                    f"{ANSWER_TIMEOUT_S:g} s (killed)"
                )
            answer = stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:
            self._stderr.seek(0)
            tail = self._stderr.read().decode(errors="replace")[-3000:]
            raise RuntimeError(f"the mcp-types helper process failed:\n{tail}")
        return json.loads(answer)

    def seconds(self, contender: str, case: str, direction: str, n: int) -> float:
        return float(self._ask([contender, case, direction, n]))

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._stderr.close()

    def __enter__(self) -> PeerProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# --- the local contenders -------------------------------------------------------


def _timed(function: Callable[..., Any], arguments: tuple[Any, ...], n: int) -> float:
    """Seconds for `n` calls `function(*arguments)` (the same loop for everyone)."""
    started = time.perf_counter()
    for _ in range(n):
        function(*arguments)
    return time.perf_counter() - started


def local_bodies() -> dict[tuple[str, str, str], Body]:
    """(contender, case, direction) -> (function, arguments) of ours and msgspec."""
    untyped = msgspec.json.Decoder()
    encoder = msgspec.json.Encoder()
    bodies: dict[tuple[str, str, str], Body] = {}
    for case, raw in CASES.items():
        ours_type = OUR_TYPES[case]
        hand = msgspec.json.Decoder(HAND_TYPES[case])
        bodies[(OURS, case, "decode")] = (decode, (raw, ours_type))
        bodies[(OURS, case, "encode")] = (encode, (decode(raw, ours_type),))
        bodies[(HAND, case, "decode")] = (hand.decode, (raw,))
        bodies[(HAND, case, "encode")] = (encoder.encode, (hand.decode(raw),))
        bodies[(UNTYPED, case, "decode")] = (untyped.decode, (raw,))
        bodies[(UNTYPED, case, "encode")] = (encoder.encode, (untyped.decode(raw),))
    return bodies


def _differences(got: Any, want: Any, path: str = "$") -> Iterator[str]:
    """Where `got` differs from `want`: +added, -missing, ~changed JSON paths."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in want.keys() - got.keys():
            yield f"-{path}.{key}"
        for key in got.keys() - want.keys():
            yield f"+{path}.{key}"
        for key in want.keys() & got.keys():
            yield from _differences(got[key], want[key], f"{path}.{key}")
    elif isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for index, (left, right) in enumerate(zip(got, want, strict=True)):
            yield from _differences(left, right, f"{path}[{index}]")
    elif got != want or type(got) is not type(want):
        yield f"~{path}"


def roundtrip(output: bytes | str, case: str, *, envelope: bool = False) -> str:
    """Return "exact" if `output` is the case's JSON (key order aside), else how not."""
    got = json.loads(output)
    if envelope:  # the SDK writes results inside their JSON-RPC response
        got = got.get("result")
    found = sorted(set(_differences(got, _DOCUMENTS[case])))
    if not found:
        return "exact"
    shown = ", ".join(found[:4])
    return shown if len(found) <= 4 else f"{shown} (+{len(found) - 4} more)"


# --- running --------------------------------------------------------------------


def _calibrate(timer: Callable[[int], float], target_s: float) -> int:
    """Iterations for one sample of about `target_s` (also warms the path up)."""
    floor = target_s / 8
    iterations = 1
    while True:
        elapsed = timer(iterations)
        if elapsed >= floor:
            return max(1, round(iterations * target_s / elapsed))
        iterations *= 8 if elapsed < floor / 8 else 2


def _cells() -> Iterator[tuple[str, str, str]]:
    for case in CASES:
        for direction in DIRECTIONS:
            for contender in CONTENDERS:
                yield contender, case, direction


def run(
    *,
    quick: bool = False,
    rounds: int | None = None,
    target_s: float | None = None,
    echo: Echo = print,
) -> dict[str, Any]:
    """Measure, print a table per direction, return the figures (ops/s)."""
    n_rounds = rounds if rounds is not None else (3 if quick else 7)
    sample_s = target_s if target_s is not None else (0.004 if quick else 0.12)
    peer_python = str(ensure_python_peers(echo))
    local = local_bodies()
    with PeerProcess(peer_python) as peer:
        timers: dict[tuple[str, str, str], Callable[[int], float]] = {}
        for cell in _cells():
            contender, case, direction = cell
            if contender in PEER_CONTENDERS:
                timers[cell] = partial(peer.seconds, contender, case, direction)
            else:
                function, arguments = local[cell]
                timers[cell] = partial(_timed, function, arguments)
        iterations = {
            cell: _calibrate(timer, sample_s) for cell, timer in timers.items()
        }
        samples: dict[tuple[str, str, str], list[float]] = {c: [] for c in timers}
        for round_no in range(n_rounds):
            order = CONTENDERS if round_no % 2 == 0 else CONTENDERS[::-1]
            for case in CASES:
                for direction in DIRECTIONS:
                    for contender in order:
                        cell = (contender, case, direction)
                        n = iterations[cell]
                        samples[cell].append(n / timers[cell](n))
        peer_outputs, peer_versions = peer.outputs, peer.versions

    figures = _figures(samples, iterations, n_rounds, sample_s)
    figures["versions"] = {
        **peer_versions,
        "msgspec": msgspec.__version__,
        "pinned": dict(PYTHON_PEERS),
    }
    figures["roundtrip"] = _roundtrips(local, peer_outputs)
    echo(report(figures))
    return figures


def _roundtrips(
    local: dict[tuple[str, str, str], Body],
    peer_outputs: dict[str, dict[str, str]],
) -> dict[str, dict[str, str]]:
    checked: dict[str, dict[str, str]] = {}
    for contender in CONTENDERS:
        checked[contender] = {}
        for case in CASES:
            if contender in PEER_CONTENDERS:
                output: bytes | str = peer_outputs[contender][case]
            else:
                function, arguments = local[(contender, case, "encode")]
                output = function(*arguments)
            wrapped = contender == SDK and case.endswith("_result")
            checked[contender][case] = roundtrip(output, case, envelope=wrapped)
    return checked


def _figures(
    samples: dict[tuple[str, str, str], list[float]],
    iterations: dict[tuple[str, str, str], int],
    rounds: int,
    sample_s: float,
) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "method": (
            f"ops/s per sample of about {sample_s} s; {rounds} rounds, contender "
            "order reversed every other round; median and min-max; ratios of medians"
        ),
        "revision": VERSION,
        "rounds": rounds,
        "target_sample_s": sample_s,
        "paths": PEER_PATHS,
        "cases": {case: {"bytes": len(raw)} for case, raw in CASES.items()},
        "targets": {
            "ours_to_mcp_types": TARGET_VS_MCP_TYPES,
            "ours_to_hand_written": TARGET_VS_HAND_WRITTEN,
        },
    }
    misses: list[str] = []
    misses_vs_model: list[str] = []
    for direction in DIRECTIONS:
        by_case: dict[str, Any] = {}
        for case in CASES:
            entry: dict[str, Any] = {}
            for contender in CONTENDERS:
                values = samples[(contender, case, direction)]
                entry[contender] = {
                    "median_ops": round(statistics.median(values), 1),
                    "min_ops": round(min(values), 1),
                    "max_ops": round(max(values), 1),
                    "iterations": iterations[(contender, case, direction)],
                    "n": len(values),
                    "samples_ops": [round(value, 1) for value in values],
                }
            ours = entry[OURS]["median_ops"]
            ratios = {
                f"ours/{other}": round(ours / entry[other]["median_ops"], 3)
                for other in CONTENDERS[1:]
            }
            checks = {
                "mcp_types": (SDK, TARGET_VS_MCP_TYPES, misses),
                "mcp_types_model": (MODEL, TARGET_VS_MCP_TYPES, misses_vs_model),
                "hand_written": (HAND, TARGET_VS_HAND_WRITTEN, misses),
            }
            meets: dict[str, bool] = {}
            for key, (other, target, missed) in checks.items():
                ratio = ratios[f"ours/{other}"]
                meets[key] = ratio >= target
                if not meets[key]:
                    missed.append(f"{direction} {case}: ours/{other} {ratio:g}x")
            by_case[case] = {"contenders": entry, "ratios": ratios, "meets": meets}
        figures[direction] = by_case
    figures["misses"] = misses
    figures["misses_vs_model"] = misses_vs_model
    figures["meets_targets"] = not misses
    figures["meets_targets_vs_model"] = not misses_vs_model
    return figures


# --- the report -----------------------------------------------------------------


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _cell(entry: dict[str, Any]) -> str:
    """`412k (405-418)`: median with min-max, in the median's unit."""
    median = entry["median_ops"]
    scale, unit = (
        (1e6, "M") if median >= 1e6 else (1e3, "k") if median >= 1e3 else (1, "")
    )
    low, high = entry["min_ops"] / scale, entry["max_ops"] / scale
    return f"{_number(median / scale)}{unit} ({_number(low)}-{_number(high)})"


def report(figures: dict[str, Any]) -> str:
    lines: list[str] = []
    headers = [
        "case",
        "ours",
        "mcp-types SDK",
        "mcp-types model",
        "hand msgspec",
        "untyped",
        "/SDK",
        "/model",
        "/hand",
    ]
    titles = {"decode": "decode + validate", "encode": "encode"}
    for direction in DIRECTIONS:
        rows = []
        for case, result in figures[direction].items():
            entry, ratios = result["contenders"], result["ratios"]
            rows.append(
                [
                    case,
                    *(_cell(entry[contender]) for contender in CONTENDERS),
                    f"{ratios[f'ours/{SDK}']:.1f}x",
                    f"{ratios[f'ours/{MODEL}']:.1f}x",
                    f"{ratios[f'ours/{HAND}']:.2f}x",
                ]
            )
        if lines:
            lines.append("")
        lines.append(
            f"{titles[direction]}, ops/s: median (min-max) of {figures['rounds']} "
            "rounds; /X = ours/X"
        )
        lines.append(table(headers, rows))
    targets = figures["targets"]
    lines.append("")
    lines.append(
        f"targets: ours/mcp-types (SDK) >= {targets['ours_to_mcp_types']:g}x and "
        f"ours/hand-written >= {targets['ours_to_hand_written']:g}x in every cell: "
        + ("met" if figures["meets_targets"] else "missed")
    )
    lines.extend(f"  missed: {miss}" for miss in figures["misses"])
    cells = len(DIRECTIONS) * len(figures["cases"])
    lines.append(
        f"ours/mcp-types (model) >= {targets['ours_to_mcp_types']:g}x in "
        f"{cells - len(figures['misses_vs_model'])} of {cells} cells"
    )
    inexact = [
        f"{contender} {case}: {verdict}"
        for contender, by_case in figures["roundtrip"].items()
        for case, verdict in by_case.items()
        if verdict != "exact"
    ]
    lines.append(
        "round trip (encode output vs input JSON): "
        + ("all exact" if not inexact else "; ".join(inexact))
    )
    lines.append(
        "case bytes: "
        + ", ".join(f"{c} {v['bytes']}" for c, v in figures["cases"].items())
    )
    versions = figures["versions"]
    lines.append(
        "versions: "
        + ", ".join(f"{k} {v}" for k, v in versions.items() if k != "pinned")
    )
    return "\n".join(lines)

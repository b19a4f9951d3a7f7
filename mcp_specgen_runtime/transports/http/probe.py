"""Which era and which transport an HTTP server speaks, told by a client from
the server's answers.

A client speaking both eras goes through up to three steps (2026-07-28
"Backward Compatibility", and 2025-06-18 to 2025-11-25 for the last one):

1. POST a 2026 request (best `server/discover`: a modern server answers it
   with a result or a recognized modern error) and classify the answer with
   `classify_modern` (`classify_modern_reply` for the response read from an
   SSE stream).
2. On `FallbackInitialize`, POST `initialize` and classify that answer with
   `classify_initialize` (`classify_initialize_reply` for a stream).
3. On `FallbackLegacySse`, GET the URL: the deprecated HTTP+SSE transport
   (2024-11-05) opens a stream whose first event, `endpoint`, names the URL
   to POST to (`legacy_endpoint`).

How answers are read:

- A recognized modern error means a modern server, whatever the status:
  -32022 `UnsupportedProtocolVersion` (retry at the newest version both sides
  speak: `RetryWithVersion`), -32020 `HeaderMismatch` and -32021
  `MissingRequiredClientCapability` (`ModernOk`: the request itself failed),
  and -32601 with 404 (modern servers MUST answer an unknown method so).
- 2xx with a JSON-RPC result is `ModernOk`; with another error it is a legacy
  server refusing a request it cannot place (-32601 in 200 included), so
  `FallbackInitialize`. So is a result that does not fit `result_type`, when
  given (say the revision's `DiscoverResult`): a lenient legacy server may
  answer any method with some result, even `{}`. An SSE stream is `ReadStream`.
- 4xx without a recognized modern error: 400 is `FallbackInitialize` (a legacy
  Streamable HTTP server refusing the unknown version or the missing
  session); 404 and 405 are `FallbackLegacySse` (nothing takes POST here).
- After `initialize`: 2xx is `LegacyOk` (any reply: the session judges it),
  except -32022 naming a modern version both speak (a modern-only server
  SHOULD list its versions when refusing `initialize`): `RetryWithVersion`,
  at any status (naming none: `ProbeError` for a 4xx). Otherwise 400, 404 and
  405 are `FallbackLegacySse`, as the 2025-06-18 and later revisions say
  (2025-03-26 said any 4xx; 401 and 403 are left to auth).
- -32022 without a list of versions falls back to `initialize`, as the
  runtime's `ClientSession` and the Python SDK do; a list naming only legacy
  versions the client speaks also does; a list naming none is `ProbeError`.
- Anything else (5xx, 401, 403, 406, 202 to a request, a body that is not a
  JSON-RPC reply) is `ProbeError`: no era can be told from it.

A client that sends whatever its session asks (not a probe of its own) reads
an HTTP error answering one of its POSTs with `client_refusal`: an
`initialize` refused as above with `FallbackLegacySse` means no Streamable
HTTP here (the HTTP client raises `LegacyServerError`), and a 2026 request
refused as a legacy server refuses one says why in its error.

Versions are listed oldest first, as everywhere in the runtime: the newest
common one is the last.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from urllib.parse import urljoin, urlsplit

import msgspec

from mcp_specgen_runtime.codec.wire import convert

from ...errors import ErrorCode
from .headers import HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION, media_type

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from .sse import Event

__all__ = [
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "FallbackInitialize",
    "FallbackLegacySse",
    "InitializeOutcome",
    "LegacyOk",
    "ModernOk",
    "ModernOutcome",
    "ProbeError",
    "ReadStream",
    "Refusal",
    "RetryWithVersion",
    "classify_initialize",
    "classify_initialize_reply",
    "classify_modern",
    "classify_modern_reply",
    "client_refusal",
    "legacy_endpoint",
]

MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
"""2026-07-28 `MissingRequiredClientCapability` (with HTTP 400)."""
_MODERN_REQUEST_ERRORS = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY}
)
_FALLBACK_SSE_STATUSES = frozenset({400, 404, 405})
_JSON = "application/json"
_SSE = "text/event-stream"

Reply: TypeAlias = "Mapping[str, Any]"


@dataclass(frozen=True, slots=True)
class ModernOk:
    """The server speaks a modern revision; `reply` (a result or an error)
    answers the request."""

    reply: Reply


@dataclass(frozen=True, slots=True)
class LegacyOk:
    """The server speaks the legacy Streamable HTTP transport; `reply`
    answers `initialize`."""

    reply: Reply


@dataclass(frozen=True, slots=True)
class ReadStream:
    """The answer is an SSE stream: classify the JSON-RPC response it
    carries with the matching `classify_*_reply`."""


@dataclass(frozen=True, slots=True)
class RetryWithVersion:
    """A modern server refused the version: send the request again at
    `version`, the newest the client shares with `supported`."""

    version: str
    supported: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FallbackInitialize:
    """Not a modern server: POST `initialize` (legacy Streamable HTTP)."""

    reason: str


@dataclass(frozen=True, slots=True)
class FallbackLegacySse:
    """Not a Streamable HTTP server: try the 2024-11-05 HTTP+SSE transport."""

    reason: str


@dataclass(frozen=True, slots=True)
class ProbeError:
    """No way forward can be told from the answer (see `status`, `reply`)."""

    message: str
    status: int | None = None
    reply: Reply | None = None


ModernOutcome: TypeAlias = (
    ModernOk
    | ReadStream
    | RetryWithVersion
    | FallbackInitialize
    | FallbackLegacySse
    | ProbeError
)
InitializeOutcome: TypeAlias = (
    LegacyOk | ReadStream | RetryWithVersion | FallbackLegacySse | ProbeError
)


def _reply(body: bytes) -> Reply | None:
    """The JSON-RPC response in `body`, or None when it holds none."""
    try:
        value: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    if not isinstance(value, dict):
        return None
    reply = typing.cast("dict[str, Any]", value)
    if reply.get("jsonrpc") != "2.0" or ("result" in reply) == ("error" in reply):
        return None
    if "error" in reply and _error_code(reply) is None:
        return None
    return reply


def _error_code(reply: Reply) -> int | None:
    """The code of an error reply; None for a result (or no valid error)."""
    error: Any = reply.get("error")
    if not isinstance(error, dict):
        return None
    code: Any = typing.cast("dict[str, Any]", error).get("code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _supported(reply: Reply) -> list[str] | None:
    error: Any = reply.get("error")
    data: Any = typing.cast("dict[str, Any]", error).get("data")
    if not isinstance(data, dict):
        return None
    listed: Any = typing.cast("Mapping[str, Any]", data).get("supported")
    if not isinstance(listed, list):
        return None
    return [v for v in typing.cast("Iterable[object]", listed) if isinstance(v, str)]


def _version_outcome(
    reply: Reply,
    requested: str | None,
    modern_versions: Sequence[str],
    legacy_versions: Sequence[str],
) -> RetryWithVersion | FallbackInitialize | ProbeError:
    """What to do about a -32022 reply."""
    supported = _supported(reply)
    if supported is None:
        return FallbackInitialize("-32022 without a list of supported versions")
    common = [v for v in modern_versions if v in supported]
    if common and common[-1] != requested:
        return RetryWithVersion(common[-1], tuple(supported))
    if common:
        message = f"the server refused {requested!r}, which it lists as supported"
        return ProbeError(message, reply=reply)
    if any(v in supported for v in legacy_versions):
        return FallbackInitialize(
            f"the server's common versions are legacy: {supported}"
        )
    return ProbeError(
        f"no common protocol version: the server speaks {supported}, the client "
        f"{[*modern_versions, *legacy_versions]}",
        reply=reply,
    )


def classify_modern_reply(
    reply: Reply,
    *,
    requested: str,
    modern_versions: Sequence[str],
    legacy_versions: Sequence[str] = (),
    result_type: Any = None,
) -> ModernOutcome:
    """What a JSON-RPC response to a 2026 request (sent at `requested`) says
    about the server; a result that does not fit `result_type` (when given)
    is a legacy server's."""
    code = _error_code(reply)
    if code is None:
        if result_type is not None:
            try:
                convert(reply["result"], result_type)
            except msgspec.ValidationError as exc:
                name = getattr(result_type, "__name__", repr(result_type))
                return FallbackInitialize(f"the result is no {name}: {exc}")
        return ModernOk(reply)
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        return _version_outcome(reply, requested, modern_versions, legacy_versions)
    if code in _MODERN_REQUEST_ERRORS:
        return ModernOk(reply)
    return FallbackInitialize(f"the server answered error {code}, not a modern one")


def classify_modern(
    status: int,
    content_type: str | None,
    body: bytes,
    *,
    requested: str,
    modern_versions: Sequence[str],
    legacy_versions: Sequence[str] = (),
    result_type: Any = None,
) -> ModernOutcome:
    """What the HTTP answer to a 2026 request (sent at `requested`) says
    about the server.

    Args:
        status: the response's status.
        content_type: its Content-Type, if any.
        body: its body (not read for an SSE stream).
        requested: the protocol version the request named.
        modern_versions: the modern versions the client speaks, oldest first.
        legacy_versions: the legacy versions the client speaks.
        result_type: the type a modern server's result has (say the
            revision's `DiscoverResult`); None takes any result.
    """
    kind = media_type(content_type)
    reply = _reply(body) if kind == _JSON else None
    if 200 <= status < 300:
        answer = _success(status, kind, reply)
        if isinstance(answer, ReadStream | ProbeError):
            return answer
        return classify_modern_reply(
            answer,
            requested=requested,
            modern_versions=modern_versions,
            legacy_versions=legacy_versions,
            result_type=result_type,
        )
    code = None if reply is None else _error_code(reply)
    if reply is not None and 400 <= status < 500:
        if code == UNSUPPORTED_PROTOCOL_VERSION:
            return _version_outcome(reply, requested, modern_versions, legacy_versions)
        if code in _MODERN_REQUEST_ERRORS or (
            status == 404 and code == ErrorCode.METHOD_NOT_FOUND
        ):
            return ModernOk(reply)
    if status == 400:
        return FallbackInitialize("400 without a modern JSON-RPC error")
    if status in (404, 405):
        return FallbackLegacySse(f"{status} without a modern JSON-RPC error")
    return ProbeError(f"HTTP {status}", status, reply)


def _success(
    status: int, kind: str | None, reply: Reply | None
) -> Reply | ReadStream | ProbeError:
    """The JSON-RPC reply of a 2xx answer, or the outcome when it has none."""
    if status == 202:
        return ProbeError("202 Accepted answered a request", status)
    if kind == _SSE:
        return ReadStream()
    if reply is None:
        return ProbeError(
            f"HTTP {status} without a JSON-RPC response (Content-Type {kind})", status
        )
    return reply


def classify_initialize_reply(
    reply: Reply, *, modern_versions: Sequence[str] = ()
) -> InitializeOutcome:
    """What a JSON-RPC response to `initialize` says about the server."""
    if _error_code(reply) == UNSUPPORTED_PROTOCOL_VERSION:
        outcome = _version_outcome(reply, None, modern_versions, ())
        if isinstance(outcome, RetryWithVersion):
            return outcome
    return LegacyOk(reply)


def classify_initialize(
    status: int,
    content_type: str | None,
    body: bytes,
    *,
    modern_versions: Sequence[str] = (),
) -> InitializeOutcome:
    """What the HTTP answer to `initialize` says about the server.

    Args:
        status: the response's status.
        content_type: its Content-Type, if any.
        body: its body (not read for an SSE stream).
        modern_versions: the modern versions the client speaks, oldest first
            (a modern-only server's -32022 may name one).
    """
    kind = media_type(content_type)
    reply = _reply(body) if kind == _JSON else None
    if 200 <= status < 300:
        answer = _success(status, kind, reply)
        if isinstance(answer, ReadStream | ProbeError):
            return answer
        return classify_initialize_reply(answer, modern_versions=modern_versions)
    if reply is not None and _error_code(reply) == UNSUPPORTED_PROTOCOL_VERSION:
        outcome = _version_outcome(reply, None, modern_versions, ())
        if isinstance(outcome, RetryWithVersion):
            return outcome
        return ProbeError(f"HTTP {status}: no common protocol version", status, reply)
    if status in _FALLBACK_SSE_STATUSES:
        return FallbackLegacySse(f"{status} to initialize")
    return ProbeError(f"HTTP {status}", status, reply)


@dataclass(frozen=True, slots=True)
class Refusal:
    """What an HTTP error answering one of a client's POSTs says about the
    server.

    Attributes:
        legacy_sse: why the server is no Streamable HTTP endpoint (an
            `initialize` refused with `FallbackLegacySse`), else None.
        era: why a 2026 request looks refused by a legacy server (the reason
            of `classify_modern`'s fallback), else None.
    """

    legacy_sse: str | None = None
    era: str | None = None


def client_refusal(
    status: int,
    content_type: str | None,
    body: bytes,
    *,
    method: str | None,
    version: str | None,
) -> Refusal:
    """What the HTTP error answering a POST (of `method`, at the 2026
    `version` when it names one) says about the server.

    Args:
        status: the response's status (not 2xx).
        content_type: its Content-Type, if any.
        body: its body, or as much of it as was read.
        method: the method of the request POSTed (None: not one request).
        version: the protocol version a 2026 request named (None: legacy).
    """
    legacy_sse: str | None = None
    if method == "initialize":
        outcome = classify_initialize(status, content_type, body)
        if isinstance(outcome, FallbackLegacySse):
            legacy_sse = outcome.reason
    era: str | None = None
    if version is not None:
        modern = classify_modern(
            status, content_type, body, requested=version, modern_versions=()
        )
        if isinstance(modern, FallbackInitialize | FallbackLegacySse):
            era = modern.reason
    return Refusal(legacy_sse, era)


def legacy_endpoint(event: Event, sse_url: str) -> str | None:
    """The URL to POST messages to, from the first event of an HTTP+SSE
    stream opened at `sse_url`; None when it is not an `endpoint` event.

    Raises:
        ValueError: the endpoint is not on the stream's origin (scheme, host
            and port), or is not text.
    """
    if event.event != "endpoint":
        return None
    try:
        target = event.data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError("the endpoint event's data is not UTF-8") from None
    url = urljoin(sse_url, target)
    here, there = urlsplit(sse_url), urlsplit(url)
    if (here.scheme, here.netloc) != (there.scheme, there.netloc):
        raise ValueError(f"the endpoint {url!r} is not on the origin of {sse_url!r}")
    return url

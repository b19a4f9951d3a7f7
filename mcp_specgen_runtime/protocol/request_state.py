"""Sealed `requestState` tokens for the multi round-trip pattern of 2026-07-28.

A modern server that needs input from the client answers `InputRequiredResult`
with an opaque `requestState`; the client sends it back, unchanged, with its
`inputResponses`. The state holds what the server learnt in earlier rounds, so
the server keeps no memory between rounds. The client must neither read nor
forge it, so it is sealed with AES-256-GCM (an AEAD: encrypted and
authenticated) under a key only the server holds, bound to the request it
belongs to (its method and params, as associated data) and to the caller it
was issued to (a digest of the principal, inside), and given an expiry.

Within its lifetime a token is not single-use: the caller it was issued to
may send it again, with the same or other answers to the questions pending.
Refusing a second use would need server-side memory of spent tokens, which
this stateless design does not keep.

AES-GCM comes from `cryptography` and the digest from `hashlib`, both imported
on first use: a server that never asks its client for input never loads them.
"""

from __future__ import annotations

import base64
import os
import time
import typing
from typing import Any

import msgspec

from mcp_specgen_runtime.errors import InvalidParamsError

__all__ = [
    "RequestStateSealer",
    "principal_binding",
    "principal_digest",
    "request_binding",
]

_NONCE_BYTES = 12
_VERSION = b"\x02"
_ENVELOPE_KEYS = frozenset({"_meta", "inputResponses", "requestState"})


class _Sealed(msgspec.Struct, array_like=True):
    expires: int
    caller: bytes
    payload: msgspec.Raw


def request_binding(method: str, params: bytes | None) -> bytes:
    """A digest of a request that stays the same across its retries.

    It covers the method and the params, minus the members a retry changes
    (`_meta`, `inputResponses`, `requestState`); keys are sorted, so a client
    that re-encodes the params in another key order still matches.
    """
    obj: Any = msgspec.json.decode(params) if params else {}
    if isinstance(obj, dict):
        members = typing.cast("dict[str, Any]", obj)
        obj = {k: v for k, v in members.items() if k not in _ENVELOPE_KEYS}
    canonical = msgspec.json.encode([method, obj], order="sorted")
    import hashlib  # here: OpenSSL's hashes cost start-up time most servers never use

    return hashlib.sha256(canonical).digest()


def principal_binding(principal: object) -> object:
    """What binds sessions and request state to a caller: the principal's
    `binding` attribute when it has one, else the principal itself.

    An OAuth principal names its caller (issuer, subject, client) there, so a
    refreshed or stepped-up token, with a new expiry and more scopes, keeps
    the caller's sessions and pending request state.
    """
    return getattr(principal, "binding", principal)


def principal_digest(principal: object) -> bytes:
    """A digest naming the caller, stable across requests, processes and
    instances; empty for None (anonymous).

    `principal` is what the transport authenticated (the HTTP `authenticate`
    hook's return value). It is encoded with msgspec, keys and fields sorted
    (a string, a dict of claims, a dataclass, a `msgspec.Struct`...); an
    object msgspec cannot encode is named by its `repr`, which must then be
    its own class's: the default one shows a memory address, not a caller.

    Raises:
        TypeError: `principal` is neither encodable nor has a `repr` of its own.
    """
    principal = principal_binding(principal)
    if principal is None:
        return b""
    try:
        text = b"json:" + msgspec.json.encode(principal, order="sorted")
    except TypeError:
        if type(principal).__repr__ is object.__repr__:
            raise TypeError(
                f"a principal of type {type(principal).__name__} cannot be bound "
                "to request state: make it encodable with msgspec (a str, a "
                "dict, a dataclass, a msgspec.Struct) or give it a stable __repr__"
            ) from None
        text = b"repr:" + repr(principal).encode()
    import hashlib

    return hashlib.sha256(text).digest()


class RequestStateSealer:
    """Seals and opens `requestState` tokens with one server-held key.

    Args:
        key: 32 bytes; share it between the instances of a server behind a load
            balancer. A random key is made when None (tokens then die with the
            process).
        ttl_s: how long a token stays valid.
    """

    def __init__(self, key: bytes | None = None, *, ttl_s: float = 600.0) -> None:
        if key is not None and len(key) != 32:
            raise ValueError("the request-state key must be 32 bytes")
        self._key = key if key is not None else os.urandom(32)
        self.ttl_s = ttl_s
        self._aead: Any = None

    def _cipher(self) -> Any:
        if self._aead is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            self._aead = AESGCM(self._key)
        return self._aead

    def seal(self, payload: Any, binding: bytes, principal: object = None) -> str:
        """An opaque token holding `payload` (any JSON value) for one request
        of one caller (`principal`, None for anonymous).

        Raises:
            TypeError: as `principal_digest`.
        """
        expires = int(time.time() + self.ttl_s)
        caller = principal_digest(principal)
        plain = msgspec.json.encode(
            _Sealed(expires, caller, msgspec.Raw(msgspec.json.encode(payload)))
        )
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._cipher().encrypt(nonce, plain, _VERSION + binding)
        return base64.urlsafe_b64encode(_VERSION + nonce + sealed).decode("ascii")

    def open(
        self, token: str, binding: bytes, method: str, principal: object = None
    ) -> Any:
        """The payload of a token sealed for this request and this caller.

        Raises:
            InvalidParamsError: the token is malformed, forged, altered, meant
                for another request or caller, or expired.
            TypeError: as `principal_digest`.
        """
        from cryptography.exceptions import InvalidTag

        try:
            raw = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True)
        except (ValueError, UnicodeEncodeError):
            raise _bad(method, "it is not a token this server issued") from None
        if raw[:1] != _VERSION or len(raw) < 1 + _NONCE_BYTES + 16:
            raise _bad(method, "it is not a token this server issued")
        nonce, sealed = raw[1 : 1 + _NONCE_BYTES], raw[1 + _NONCE_BYTES :]
        try:
            plain = self._cipher().decrypt(nonce, sealed, _VERSION + binding)
        except InvalidTag:
            raise _bad(
                method, "it was altered, or issued for another request or server"
            ) from None
        state = msgspec.json.decode(plain, type=_Sealed)
        import hmac

        if not hmac.compare_digest(state.caller, principal_digest(principal)):
            raise _bad(method, "it was issued to another caller")
        if state.expires < time.time():
            raise _bad(method, "it has expired; send the request again without it")
        return msgspec.json.decode(state.payload)


def _bad(method: str, reason: str) -> InvalidParamsError:
    return InvalidParamsError(method, f"requestState is not valid: {reason}")

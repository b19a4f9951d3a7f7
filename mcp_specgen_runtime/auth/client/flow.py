"""The OAuth client as an `httpx.Auth`: a sans-I/O state machine and its driver.

`OAuthFlow.flow(request)` is a generator of effects: an `httpx.Request` to
send (answered with its response), an `AuthorizationRequest` for the user
(answered with the `AuthorizationResponse`), a store operation (`LoadTokens`,
`SaveTokens`, `LoadClient`, `SaveClient`), or `Hold`/`Release` of the lock
that keeps concurrent requests from authorizing twice. It adds the bearer
token to the request, refreshes a token about to expire, and on a 401 (or a
403 `insufficient_scope`, at most `max_step_ups` times) discovers the
authorization server again, tries the refresh token, else `acquire`s new
tokens, and sends the request again. `async_auth_flow` carries the effects
out. Subclasses give `acquire`: the authorization-code flow
(`OAuthClientAuth`) or client credentials (`ClientCredentialsAuth`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import anyio
import httpx
import msgspec

from .authorization import AuthorizationRequest
from .challenge import BearerChallenge, parse_challenge
from .discovery import Discovery, discover
from .documents import ClientInformation, TokenSet
from .errors import AuthorizationError, TokenError
from .storage import MemoryTokenStore
from .tokens import read_token_response, refresh_request

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Generator

    from .assertion import PrivateKeyJwt
    from .dpop import DPoPKey
    from .interaction import AuthorizationResponse, CallbackReceiver, RedirectHandler
    from .storage import TokenStore

__all__ = [
    "Effect",
    "Hold",
    "LoadClient",
    "LoadTokens",
    "OAuthFlow",
    "Release",
    "SaveClient",
    "SaveTokens",
    "select_scope",
]


class LoadTokens(msgspec.Struct, frozen=True):
    """Effect: read the stored tokens of this server."""


class SaveTokens(msgspec.Struct, frozen=True):
    """Effect: store the tokens of this server (None forgets them)."""

    tokens: TokenSet | None


class LoadClient(msgspec.Struct, frozen=True):
    """Effect: read the stored registration at `issuer`."""

    issuer: str


class SaveClient(msgspec.Struct, frozen=True):
    """Effect: store a new registration at `issuer`."""

    issuer: str
    client: ClientInformation


class Hold(msgspec.Struct, frozen=True):
    """Effect: take the flow's lock."""


class Release(msgspec.Struct, frozen=True):
    """Effect: give the lock back."""


Effect: TypeAlias = (
    httpx.Request
    | AuthorizationRequest
    | LoadTokens
    | SaveTokens
    | LoadClient
    | SaveClient
    | Hold
    | Release
)


def select_scope(
    challenge: BearerChallenge | None,
    discovery: Discovery,
    *,
    previous: str | None = None,
    offline_access: bool = False,
) -> str | None:
    """The scope to ask for: the challenge's, else every scope the resource
    metadata lists, else none; joined with the scope asked before (a step-up
    keeps what was granted) and `offline_access` when wanted and the
    authorization server lists it."""
    metadata = discovery.resource_metadata
    if challenge is not None and challenge.scope:
        wanted = challenge.scope.split()
    elif metadata is not None and metadata.scopes_supported:
        wanted = list(metadata.scopes_supported)
    else:
        wanted = []
    if previous:
        wanted = [*previous.split(), *wanted]
    offered = discovery.server.scopes_supported or []
    if wanted and offline_access and "offline_access" in offered:
        wanted.append("offline_access")
    return " ".join(dict.fromkeys(wanted)) or None


class OAuthFlow(httpx.Auth):
    """The state machine and driver shared by the OAuth flows.

    Async only (`httpx.AsyncClient`): the user's part and the stores are
    coroutines.
    """

    def __init__(
        self,
        server_url: str,
        *,
        store: TokenStore | None = None,
        private_key: PrivateKeyJwt | None = None,
        max_step_ups: int = 2,
        redirect_handler: RedirectHandler | None = None,
        callback: CallbackReceiver | None = None,
        dpop: DPoPKey | None = None,
    ) -> None:
        self.server_url = server_url
        self.dpop = dpop
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.private_key = private_key
        self.max_step_ups = max_step_ups
        self.redirect_handler = redirect_handler
        self.callback = callback
        self.discovery: Discovery | None = None
        self.client: ClientInformation | None = None
        self.scope: str | None = None
        """The scope last asked for (a step-up asks for it again, plus more)."""
        self.tokens: TokenSet | None = None
        self._loaded = False
        self._lock = anyio.Lock()

    # -- the machine ---------------------------------------------------------

    def acquire(
        self, challenge: BearerChallenge | None, discovery: Discovery, *, step_up: bool
    ) -> Generator[Effect, Any, TokenSet]:
        """New tokens from the server `discovery` found."""
        raise NotImplementedError

    def identify(
        self, discovery: Discovery
    ) -> Generator[Effect, Any, ClientInformation | None]:
        """The client identity already known for the server `discovery`
        found (None: `acquire` finds one)."""
        return self.client
        yield  # a generator, like the overrides that read the store

    def flow(self, request: httpx.Request) -> Generator[Effect, Any, None]:
        """Send `request` authorized, renewing the token as needed."""
        if not self._loaded:
            self.tokens = yield LoadTokens()
            self._loaded = True
        sent = self.tokens
        if sent is not None and sent.expired() and sent.refresh_token:
            yield Hold()
            if self.tokens is sent and self.discovery is not None:
                yield from self._refresh_or_forget(sent)
            yield Release()
        sent = self._authorize(request)
        response = yield request
        renewed = False
        step_ups = 0
        nonce_retried = False
        while True:
            values = response.headers.get_list("WWW-Authenticate")
            if self._new_nonce(request, response) and not nonce_retried:
                proof = parse_challenge(values, "dpop")
                if proof is not None and proof.error == "use_dpop_nonce":
                    # RFC 9449 §9: the same request, with the server's nonce.
                    nonce_retried = True
                    sent = self._authorize(request)
                    response = yield request
                    continue
            challenge = parse_challenge(values, "bearer") or parse_challenge(
                values, "dpop"
            )
            step_up = (
                response.status_code == 403
                and challenge is not None
                and challenge.error == "insufficient_scope"
            )
            if step_up:
                if step_ups >= self.max_step_ups:
                    return
                step_ups += 1
            elif response.status_code != 401 or renewed:
                return
            yield Hold()
            # Renewed while this request waited (another request's refresh or
            # step-up): try that token before asking the user again.
            if self.tokens is None or self.tokens is sent:
                tokens = yield from self._renew(challenge, step_up=step_up)
                self.tokens = tokens
                yield SaveTokens(tokens)
                renewed = True
            yield Release()
            sent = self._authorize(request)
            response = yield request

    def _authorize(self, request: httpx.Request) -> TokenSet | None:
        tokens = self.tokens
        if tokens is None:
            return None
        token = tokens.access_token
        if self.dpop is not None and tokens.token_type.lower() == "dpop":
            request.headers["Authorization"] = f"DPoP {token}"
            request.headers["DPoP"] = self.dpop.proof(
                request.method, str(request.url), access_token=token
            )
        else:
            request.headers["Authorization"] = f"Bearer {token}"
        return tokens

    def _new_nonce(self, request: httpx.Request, response: httpx.Response) -> bool:
        if self.dpop is None:
            return False
        nonce = response.headers.get("DPoP-Nonce")
        return self.dpop.remember_nonce(str(request.url), nonce)

    def _proving(self) -> bool:
        """Whether token requests carry DPoP proofs: the client has a key
        and the authorization server takes ES256 proofs."""
        algorithms = (
            self.discovery.server.dpop_signing_alg_values_supported
            if self.discovery is not None
            else None
        )
        return self.dpop is not None and "ES256" in (algorithms or [])

    def exchange(
        self, request: httpx.Request
    ) -> Generator[Effect, Any, httpx.Response]:
        """Send a token request (with a DPoP proof where used), and once more
        with the server's nonce when it asks for one (RFC 9449 §8)."""
        response: httpx.Response = yield self._prove(request)
        if self._asks_for_nonce(request, response):
            response = yield self._prove(request)
        return response

    def _prove(self, request: httpx.Request) -> httpx.Request:
        if self.dpop is not None and self._proving():
            request.headers["DPoP"] = self.dpop.proof("POST", str(request.url))
        return request

    def _asks_for_nonce(self, request: httpx.Request, response: httpx.Response) -> bool:
        if not self._new_nonce(request, response) or response.status_code != 400:
            return False
        try:
            answer = msgspec.json.decode(response.content, type=dict[str, Any])
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False
        return answer.get("error") == "use_dpop_nonce"

    def read_tokens(
        self,
        response: httpx.Response,
        discovery: Discovery,
        previous: TokenSet | None = None,
    ) -> TokenSet:
        """The tokens of a token response from the server `discovery` found."""
        return read_token_response(
            response,
            issuer=discovery.server.issuer,
            resource=discovery.resource,
            previous=previous,
            token_types=("bearer", "dpop") if self._proving() else ("bearer",),
        )

    def _renew(
        self, challenge: BearerChallenge | None, *, step_up: bool
    ) -> Generator[Effect, Any, TokenSet]:
        previous = self.discovery
        discovery = yield from discover(self.server_url, challenge)
        if previous is not None and previous.server.issuer != discovery.server.issuer:
            # Another authorization server: nothing from the old one is valid.
            self.client = None
            self.scope = None
            self.tokens = None
        self.discovery = discovery
        tokens = self.tokens
        if not step_up and tokens is not None and tokens.refresh_token:
            if self.client is None:  # e.g. tokens from the store, a new process
                self.client = yield from self.identify(discovery)
            try:
                return (yield from self.refresh(tokens))
            except TokenError:
                pass
        return (yield from self.acquire(challenge, discovery, step_up=step_up))

    def _refresh_or_forget(self, tokens: TokenSet) -> Generator[Effect, Any, None]:
        try:
            renewed: TokenSet | None = yield from self.refresh(tokens)
        except TokenError:
            renewed = None
        self.tokens = renewed
        yield SaveTokens(renewed)

    def refresh(self, tokens: TokenSet) -> Generator[Effect, Any, TokenSet]:
        """Use `tokens`' refresh token at the server that issued them.

        Raises:
            TokenError: refused, or nothing to refresh with.
        """
        discovery, client = self.discovery, self.client
        if discovery is None or client is None or tokens.refresh_token is None:
            raise TokenError("invalid_grant", "nothing to refresh with")
        if tokens.issuer not in (None, discovery.server.issuer):
            raise TokenError("invalid_grant", "the tokens come from another server")
        request = refresh_request(
            discovery.server,
            client,
            refresh_token=tokens.refresh_token,
            resource=discovery.resource,
            key=self.private_key,
        )
        response = yield from self.exchange(request)
        return self.read_tokens(response, discovery, previous=tokens)

    # -- the driver ----------------------------------------------------------

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError(f"{type(self).__name__} needs an httpx.AsyncClient")

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        machine = self.flow(request)
        held = False
        reply: Any = None
        try:
            while True:
                try:
                    effect = machine.send(reply)
                except StopIteration:
                    return
                reply = None
                if isinstance(effect, httpx.Request):
                    response = yield effect
                    if effect is not request:
                        # Only our own small documents: the MCP response may
                        # be a stream its reader consumes.
                        await response.aread()
                    reply = response
                elif isinstance(effect, AuthorizationRequest):
                    reply = await self._interact(effect)
                elif isinstance(effect, Hold):
                    await self._lock.acquire()
                    held = True
                elif isinstance(effect, Release):
                    held = False
                    self._lock.release()
                elif isinstance(effect, LoadTokens):
                    reply = await self.store.get_tokens(self.server_url)
                elif isinstance(effect, SaveTokens):
                    await self.store.set_tokens(self.server_url, effect.tokens)
                elif isinstance(effect, LoadClient):
                    reply = await self.store.get_client(self.server_url, effect.issuer)
                else:
                    await self.store.set_client(
                        self.server_url, effect.issuer, effect.client
                    )
        finally:
            machine.close()
            if held:
                self._lock.release()

    async def _interact(self, request: AuthorizationRequest) -> AuthorizationResponse:
        if self.redirect_handler is None or self.callback is None:
            raise AuthorizationError(
                "authorization needs the user: give a redirect_handler and a callback"
            )
        await self.redirect_handler(request.url)
        return await self.callback(request.state)

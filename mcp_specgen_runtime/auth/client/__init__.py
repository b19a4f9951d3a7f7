"""The OAuth 2.1 client of an MCP server: an `httpx.Auth` for `connect_http`.

Discovery, registration, the authorization request, tokens and storage are
separate modules; `flow` is the sans-I/O state machine that joins them.
"""

from __future__ import annotations

from .assertion import PrivateKeyJwt
from .challenge import BearerChallenge, parse_bearer_challenge
from .credentials import ClientCredentialsAuth
from .discovery import Discovery
from .documents import ClientInformation, ClientMetadata, TokenSet
from .dpop import DPoPKey
from .errors import AuthorizationError, TokenError
from .interaction import AuthorizationResponse, CallbackReceiver, RedirectHandler
from .jwt_bearer import EnterpriseAuth, JwtBearerAuth
from .loopback import LoopbackCallback
from .oauth import OAuthClientAuth
from .storage import FileTokenStore, MemoryTokenStore, TokenStore

__all__ = [
    "AuthorizationError",
    "AuthorizationResponse",
    "BearerChallenge",
    "CallbackReceiver",
    "ClientCredentialsAuth",
    "ClientInformation",
    "ClientMetadata",
    "DPoPKey",
    "Discovery",
    "EnterpriseAuth",
    "FileTokenStore",
    "JwtBearerAuth",
    "LoopbackCallback",
    "MemoryTokenStore",
    "OAuthClientAuth",
    "PrivateKeyJwt",
    "RedirectHandler",
    "TokenError",
    "TokenSet",
    "TokenStore",
    "parse_bearer_challenge",
]

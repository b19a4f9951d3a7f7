"""The client's identity: pre-registered, stored, a metadata document, or
Dynamic Client Registration, in that order."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from mcp_specgen_runtime.auth import AuthorizationServerMetadata
from mcp_specgen_runtime.auth.client.documents import (
    ClientInformation,
    ClientMetadata,
)
from mcp_specgen_runtime.auth.client.errors import AuthorizationError
from mcp_specgen_runtime.auth.client.registration import obtain_client, usable

from .support import drive, json_response

ISSUER = "https://auth.example.com"
METADATA = ClientMetadata(client_name="app", redirect_uris=["http://127.0.0.1/cb"])
CIMD = "https://app.example.com/client.json"


def server(**extra: object) -> AuthorizationServerMetadata:
    fields: dict[str, object] = {
        "issuer": ISSUER,
        "token_endpoint": f"{ISSUER}/token",
        "registration_endpoint": f"{ISSUER}/register",
        **extra,
    }
    return AuthorizationServerMetadata(**fields)  # type: ignore[arg-type]


def refuse(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"unexpected {request.method} {request.url}")


def test_preregistered_credentials_come_first() -> None:
    mine = ClientInformation(client_id="pre", client_secret="s")
    got = drive(
        obtain_client(
            server(client_id_metadata_document_supported=True),
            preregistered=mine,
            stored=ClientInformation(client_id="old", issuer=ISSUER),
            metadata=METADATA,
            metadata_url=CIMD,
        ),
        refuse,
    )
    assert got == (mine, False)


def test_a_stored_registration_at_this_issuer_is_reused() -> None:
    stored = ClientInformation(client_id="old", issuer=ISSUER)
    got = drive(
        obtain_client(
            server(),
            preregistered=None,
            stored=stored,
            metadata=METADATA,
            metadata_url=None,
        ),
        refuse,
    )
    assert got == (stored, False)


def test_a_metadata_document_where_supported() -> None:
    client, new = drive(
        obtain_client(
            server(client_id_metadata_document_supported=True),
            preregistered=None,
            stored=None,
            metadata=METADATA,
            metadata_url=CIMD,
        ),
        refuse,
    )
    assert (client.client_id, client.token_endpoint_auth_method, new) == (
        CIMD,
        "none",
        False,
    )


def test_dynamic_registration_otherwise() -> None:
    sent: list[dict[str, object]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == f"{ISSUER}/register"
        sent.append(json.loads(request.content))
        return json_response(201, {"client_id": "new-id", "client_secret": "shh"})

    client, new = drive(
        obtain_client(
            server(token_endpoint_auth_methods_supported=["client_secret_post"]),
            preregistered=None,
            stored=None,
            metadata=METADATA,
            metadata_url=CIMD,  # not supported by this server: not used
        ),
        respond,
    )
    assert new
    assert client == ClientInformation(
        client_id="new-id",
        client_secret="shh",
        token_endpoint_auth_method="client_secret_post",
        issuer=ISSUER,
    )
    assert sent == [
        {
            "redirect_uris": ["http://127.0.0.1/cb"],
            "client_name": "app",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_post",
            "application_type": "native",
        }
    ]


def test_registration_keeps_the_method_the_server_assigns() -> None:
    client, _ = drive(
        obtain_client(
            server(),
            preregistered=None,
            stored=None,
            metadata=METADATA,
            metadata_url=None,
        ),
        lambda request: json_response(
            201,
            {
                "client_id": "id",
                "client_secret": "s",
                "token_endpoint_auth_method": "client_secret_basic",
            },
        ),
    )
    assert client.token_endpoint_auth_method == "client_secret_basic"


def test_a_refused_registration_is_an_error() -> None:
    with pytest.raises(AuthorizationError, match="HTTP 400"):
        drive(
            obtain_client(
                server(),
                preregistered=None,
                stored=None,
                metadata=METADATA,
                metadata_url=None,
            ),
            lambda request: json_response(400, {"error": "invalid_client_metadata"}),
        )


def test_no_identity_possible() -> None:
    with pytest.raises(AuthorizationError, match="no client identity"):
        drive(
            obtain_client(
                server(registration_endpoint=None),
                preregistered=None,
                stored=None,
                metadata=METADATA,
                metadata_url=CIMD,
            ),
            refuse,
        )


def test_usable_only_at_the_issuing_server_and_before_expiry() -> None:
    bound = ClientInformation(client_id="x", issuer=ISSUER)
    assert usable(bound, ISSUER)
    assert not usable(bound, "https://other.example.com")
    assert usable(ClientInformation(client_id="x"), "https://other.example.com")
    expired = ClientInformation(
        client_id="x", client_secret_expires_at=int(time.time()) - 1
    )
    assert not usable(expired, ISSUER)
    assert not usable(None, ISSUER)

"""The lock file: who the package was generated from and a sha256 of each
tool's, prompt's and template's canonical definition; and what drifted.

The hashed definition is everything the generated code depends on (names,
descriptions, schemas, arguments, URI templates), as canonical JSON (sorted
keys, no spaces), so a change that would change the package changes a hash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .inspect import ClientGenError

if TYPE_CHECKING:
    from .inspect import Listing

LOCK_NAME = "mcp-client.lock"
"""The lock file's name, inside the generated package."""

KINDS = ("tools", "prompts", "templates")

_HASHED: dict[str, tuple[str, ...]] = {
    "tools": ("name", "description", "inputSchema", "outputSchema"),
    "prompts": ("name", "description", "arguments"),
    "templates": ("name", "description", "uriTemplate", "mimeType"),
}
"""The keys of each kind that the generated code depends on."""


def canonical(value: Any) -> bytes:
    """The canonical JSON of a value (sorted keys, no spaces, UTF-8)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()


def sha256(value: Any) -> str:
    """The sha256 of a value's canonical JSON."""
    return hashlib.sha256(canonical(value)).hexdigest()


def _entries(kind: str, items: list[dict[str, Any]]) -> dict[str, str]:
    keys = _HASHED[kind]
    return {
        str(item.get("name", "")): sha256({k: item[k] for k in keys if k in item})
        for item in items
    }


@dataclass(frozen=True)
class Lock:
    """What a package was generated from."""

    server: dict[str, str]
    entries: dict[str, dict[str, str]]
    """Kind -> name -> sha256."""

    @property
    def hash(self) -> str:
        """One sha256 over the server identity and every entry."""
        return sha256({"server": self.server, **self.entries})

    def to_json(self) -> str:
        """The lock file's text."""
        body = {
            "server": self.server,
            **{kind: self.entries.get(kind, {}) for kind in KINDS},
            "sha256": self.hash,
        }
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def lock_of(listing: Listing) -> Lock:
    """The lock of what a server offers now."""
    return Lock(
        server={
            "name": listing.server_name,
            "version": listing.server_version,
            "protocolVersion": listing.revision,
        },
        entries={
            "tools": _entries("tools", listing.tools),
            "prompts": _entries("prompts", listing.prompts),
            "templates": _entries("templates", listing.templates),
        },
    )


def parse_lock(text: str, origin: str) -> Lock:
    """Read a lock file's text.

    Raises:
        ClientGenError: the text is not a lock file.
    """
    try:
        body = json.loads(text)
        server = {str(k): str(v) for k, v in body["server"].items()}
        entries = {
            kind: {str(k): str(v) for k, v in body.get(kind, {}).items()}
            for kind in KINDS
        }
    except (ValueError, KeyError, AttributeError, TypeError) as exc:
        raise ClientGenError(f"{origin} is not a client lock file: {exc}") from exc
    return Lock(server=server, entries=entries)


_SINGULAR = {"tools": "tool", "prompts": "prompt", "templates": "resource template"}


def drift(locked: Lock, live: Lock) -> list[str]:
    """What differs from the lock to the live server, one line each."""
    lines: list[str] = []
    for key in sorted(set(locked.server) | set(live.server)):
        was, now = locked.server.get(key, ""), live.server.get(key, "")
        if was != now:
            lines.append(f"server {key} changed: {was!r} -> {now!r}")
    for kind in KINDS:
        was_items = locked.entries.get(kind, {})
        now_items = live.entries.get(kind, {})
        noun = _SINGULAR[kind]
        for name in sorted(set(was_items) | set(now_items)):
            if name not in was_items:
                lines.append(f"{noun} {name!r} added")
            elif name not in now_items:
                lines.append(f"{noun} {name!r} removed")
            elif was_items[name] != now_items[name]:
                lines.append(f"{noun} {name!r} changed")
    return lines

"""Small Struct types the wire codec tests share: tagged, closed and open ones."""

from __future__ import annotations

from typing import Any

import msgspec

from mcp_specgen_runtime import UNSET, ClosedStruct, OpenStruct, UnsetType


class Text(OpenStruct, kw_only=True, tag_field="type", tag="text"):
    text: str
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class Image(OpenStruct, kw_only=True, tag_field="type", tag="image"):
    data: str


class Strict(ClosedStruct, kw_only=True):
    a: int


class TextContents(OpenStruct, kw_only=True):
    uri: str
    text: str


class BlobContents(OpenStruct, kw_only=True):
    uri: str
    blob: str

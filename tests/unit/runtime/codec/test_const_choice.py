"""A structural union decodes the member a distinct const property names."""

from __future__ import annotations

import json
import typing
from typing import Any, Literal

import pytest

from mcp_specgen_runtime.codec.wire import (
    OpenStruct,
    ValidationError,
    decode,
    structural_union,
)


class Done(OpenStruct, kw_only=True):
    content: list[str]
    state: str = "complete"


class Pending(OpenStruct, kw_only=True):
    state: Literal["pending"]
    token: str | None = None


class Other(OpenStruct, kw_only=True):
    state: Literal["pending"]
    other: int


if typing.TYPE_CHECKING:
    Outcome = Done | Pending
    Shared = Pending | Other | Done
else:
    Outcome = structural_union("Outcome", __name__, "Done", "Pending")
    Shared = structural_union("Shared", __name__, "Pending", "Other", "Done")


def test_a_value_carrying_the_const_is_that_member_though_another_fits() -> None:
    # `Done` is tried first and would accept it with `token` as an unknown key.
    value = decode(b'{"state": "pending", "content": [], "token": "t"}', Outcome)
    assert isinstance(value, Pending)


def test_a_value_carrying_the_const_that_does_not_fit_is_an_error() -> None:
    with pytest.raises(ValidationError, match=r"accepts the value \(Pending: "):
        decode(b'{"state": "pending", "content": [], "token": 7}', Outcome)


@pytest.mark.parametrize("state", [None, "complete", "later"])
def test_any_other_value_is_chosen_by_shape(state: str | None) -> None:
    message: dict[str, Any] = {"content": ["x"]}
    if state is not None:
        message["state"] = state
    value = decode(json.dumps(message), Outcome)
    assert isinstance(value, Done)


def test_a_const_two_members_share_names_neither() -> None:
    value = decode(b'{"state": "pending", "other": 1}', Shared)
    assert isinstance(value, Other)

"""The block reader the docs tests rely on finds exactly what the convention says."""

from __future__ import annotations

import pytest

from tests.docs.blocks import blocks

PAGE = """# A page

```python
x = 1
```

Some text.

<!-- docs: serve -->
```python
print("server")
```

```console
$ mcp-codegen --help
```

1. A list item:
   ```python
   y = x + 1
   ```

````markdown
```python
not a block of its own
```
````
"""


def test_every_fence_is_found_in_order_with_its_language_and_line() -> None:
    found = blocks(PAGE)
    assert [(b.language, b.line) for b in found] == [
        ("python", 3),
        ("python", 10),
        ("console", 14),
        ("python", 19),
        ("markdown", 23),
    ]


def test_only_the_block_right_after_the_marker_is_a_server() -> None:
    assert [b.serve for b in blocks(PAGE)] == [False, True, False, False, False]


def test_an_indented_block_is_dedented() -> None:
    assert blocks(PAGE)[3].code == "y = x + 1\n"


def test_a_longer_fence_holds_shorter_ones() -> None:
    assert "```python" in blocks(PAGE)[4].code


def test_an_unclosed_fence_is_an_error_naming_its_line() -> None:
    with pytest.raises(ValueError, match="line 2"):
        blocks("text\n```python\nx = 1\n")

"""The error saying Streamable HTTP needs the `http` extra, for the places
that import uvicorn or httpx when first asked to serve or connect."""

from __future__ import annotations

__all__ = ["HTTP_EXTRA", "missing_http_extra"]

HTTP_EXTRA = "pip install 'mcp-specgen-runtime[http]'"
"""What installs uvicorn, httptools, uvloop and httpx."""


def missing_http_extra(error: ImportError) -> ImportError:
    """An `ImportError` naming the missing module and how to install it, to
    raise from `error` (that of `import uvicorn` or `import httpx`)."""
    missing = error.name or "a module of the http extra"
    return ImportError(
        f"HTTP needs {missing}, which is not installed: {HTTP_EXTRA}", name=missing
    )

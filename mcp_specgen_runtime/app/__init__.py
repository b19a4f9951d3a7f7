"""The high-level server, `App`: tools, resources and prompts from plain Python
functions. Stands on protocol (ServerSession) and transports (stdio, HTTP).
Middleware (`Call`, `RequestLogger`, `RateLimit`, `ResultCache`) runs
around every message it serves (see `middleware`).

    from mcp_specgen_runtime.app import App, Context

    app = App("demo", version="1.0.0")

    @app.tool()
    def echo(message: str) -> str:
        \"\"\"Return the message unchanged.\"\"\"
        return message

    if __name__ == "__main__":
        app.run()
"""

from .application import App
from .context import Context
from .http_info import Headers, HttpInfo
from .injection import Depends, Lifespan
from .lifespan import LifespanError
from .middleware import Call, CallNext, Middleware, Result
from .rate_limit import RateLimit
from .request_log import RequestLogger
from .result_cache import ResultCache

__all__ = [
    "App",
    "Call",
    "CallNext",
    "Context",
    "Depends",
    "Headers",
    "HttpInfo",
    "Lifespan",
    "LifespanError",
    "Middleware",
    "RateLimit",
    "RequestLogger",
    "Result",
    "ResultCache",
]

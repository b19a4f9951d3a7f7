"""The high-level server, `App`: tools, resources and prompts from plain Python
functions. Stands on protocol (ServerSession) and transports (stdio, HTTP).

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

__all__ = [
    "App",
    "Context",
    "Depends",
    "Headers",
    "HttpInfo",
    "Lifespan",
    "LifespanError",
]

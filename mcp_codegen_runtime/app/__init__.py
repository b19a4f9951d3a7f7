"""The high-level server API: `App`, with tools, resources and prompts from
plain Python functions, served in every protocol revision over stdio or HTTP.

    from mcp_codegen_runtime.app import App, Context

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

__all__ = ["App", "Context"]

"""The version of mcp-specgen and mcp-specgen-runtime, released together.

The one place the version is written: both distributions' builds read it, and
the generator (`mcp_specgen.__version__`) re-exports it.
"""

__version__ = "0.1.0"

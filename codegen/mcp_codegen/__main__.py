"""`python -m mcp_codegen` runs the command line."""

from .cli import main

main()

"""`python -m mcp_specgen` runs the command line."""

from .cli import main

main()

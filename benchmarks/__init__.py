"""Benchmarks of mcp-codegen against its peers.

Run ``python -m benchmarks [yardstick|import|generation|all] [--quick] [--json PATH]``
from the repository root with the project's virtualenv. Each benchmark module has a
``run(...)`` function that prints a table and returns a dict of figures:

- ``benchmarks.yardstick``: the specification's examples of revision 2026-07-28,
  decoded and re-encoded by datamodel-code-generator's msgspec output and by ours.
- ``benchmarks.import_time``: import time of one revision of ours against the
  ``mcp-types`` package, each in a fresh interpreter.
- ``benchmarks.generation``: time to generate every revision in memory, and the size
  of what is generated.

``benchmarks.peers`` installs the peer packages into ``.cache/peers/venv``.
"""

"""Differential tests: the generated types against the JSON Schemas they come from.

The helpers live beside the tests (`differential_engine`, `leniencies`); this
makes them importable whatever pytest's import mode.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

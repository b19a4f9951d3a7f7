"""Writes its arguments to stderr, one per line, then reports its working
directory and environment as one JSON message on stdout, and waits for stdin
to end."""

from __future__ import annotations

import json
import os
import sys

for line in sys.argv[1:]:
    sys.stderr.write(line + "\n")
sys.stderr.flush()
report = {"cwd": os.getcwd(), "env": dict(os.environ)}
sys.stdout.write(json.dumps(report) + "\n")
sys.stdout.flush()
sys.stdin.buffer.read()

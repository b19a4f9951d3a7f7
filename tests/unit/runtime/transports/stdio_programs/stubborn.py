"""A server that will not go: it ignores the end of stdin, and with argument
"term" SIGTERM too. Says {"ready": true} once its signal handling is set."""

from __future__ import annotations

import signal
import sys

if sys.argv[1:] == ["term"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdout.write('{"ready": true}\n')
sys.stdout.flush()
sys.stdin.buffer.read()
while True:
    signal.pause()

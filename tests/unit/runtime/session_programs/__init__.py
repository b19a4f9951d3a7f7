"""Server programs and handlers of the `ServerSession` tests."""

"""Server programs the benchmarks spawn (run as scripts, not imported)."""

"""The benchmarks, run from the repository root as ``python -m bench COMMAND ...`` (``python -m bench`` lists them)."""

"""sudokupool: a read-only HTTP API over an in-memory pool of Sudoku puzzles."""

from __future__ import annotations

#: The one version of the package (pyproject.toml reads it from here): what ``sudokupool --version`` says and
#: what every record a build makes carries in its ``source`` (``sudokupool-build/<version>``). Raised when the
#: grading changes, so that records from different graders can be told apart. The API's own version, which
#: the OpenAPI document reports, is ``api.openapi.API_VERSION``.
__version__ = "2.6.0"

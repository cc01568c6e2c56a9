"""Validate real responses with the pydantic models datamodel-code-generator made from the live document.

Run in the generators' throwaway venv by tests/api/test_openapi_clients.py with argv: the models module's
directory and a JSON file of ``[[schema name, response body], ...]``. Prints, for each pair, the schema
name and the error (null when the body validated).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError


def main(models_dir: str, cases_file: str) -> list[tuple[str, str | None]]:
    sys.path.insert(0, models_dir)
    models = importlib.import_module("models")
    cases: list[tuple[str, Any]] = json.loads(Path(cases_file).read_text())
    out: list[tuple[str, str | None]] = []
    for name, body in cases:
        model: type[BaseModel] = getattr(models, name)
        try:
            model.model_validate(body)
        except ValidationError as exc:
            out.append((name, str(exc)))
        else:
            out.append((name, None))
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))

"""``sudokupool serve``: run the API with uvicorn."""

from __future__ import annotations

import argparse
import os

from sudokupool.config import Settings, SettingsError
from sudokupool.logs import log_config


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="serve the API (default: the demo pool in snapshots/)")
    parser.add_argument("--host", help="address to bind (default: SUDOKUPOOL_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to bind (default: PORT, SUDOKUPOOL_PORT or 8000)")
    parser.add_argument("--exports", help="export source (overrides SUDOKUPOOL_EXPORTS)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    try:
        settings = Settings.from_environ(os.environ)
    except SettingsError as exc:
        print(f"sudokupool: {exc}")
        return 2
    if args.exports:
        # The factory reads the environment, so the override travels the same way.
        os.environ["SUDOKUPOOL_EXPORTS"] = args.exports
    host = args.host or settings.host
    port = args.port if args.port is not None else int(os.environ.get("PORT") or settings.port)
    # Our code interprets X-Forwarded-For (SUDOKUPOOL_TRUSTED_PROXY_HOPS), so uvicorn must not.
    uvicorn.run(
        "sudokupool.app:create_app",
        factory=True,
        host=host,
        port=port,
        proxy_headers=False,
        log_level=settings.log_level,
        log_config=log_config(settings.log_level),
        server_header=False,
    )
    return 0

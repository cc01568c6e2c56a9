"""``sudokupool serve``: run the API with uvicorn."""

from __future__ import annotations

import argparse
import os

from sudokupool.config import Settings, listen_port, parse_port
from sudokupool.keys import Keyring
from sudokupool.logs import log_config


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="serve the API (default: the demo pool in snapshots/)")
    parser.add_argument("--host", help="address to bind (default: SUDOKUPOOL_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=_port, help="port to bind (default: PORT, SUDOKUPOOL_PORT or 8000)")
    parser.add_argument("--exports", help="export source (overrides SUDOKUPOOL_EXPORTS)")
    parser.set_defaults(func=run)


def _port(text: str) -> int:
    try:
        return parse_port(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} {exc}") from None


def run(args: argparse.Namespace) -> int:
    import uvicorn

    # A bad setting raises SettingsError, which the CLI reports as one line (exit status 2). Key entries
    # too, before any server starts: the factory checks them again, but a server may run it in a worker
    # process whose exit it reports in its own words.
    settings = Settings.from_environ(os.environ)
    Keyring.from_settings(settings)
    if args.exports:
        # The factory reads the environment, so the override travels the same way.
        os.environ["SUDOKUPOOL_EXPORTS"] = args.exports
    host = args.host or settings.host
    port = args.port if args.port is not None else listen_port(os.environ, settings)
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

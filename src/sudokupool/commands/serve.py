"""``sudokupool serve``: run the API on the configured server (what the Procfile runs; see sudokupool.server)."""

from __future__ import annotations

import argparse
import os

from sudokupool.config import Settings, listen_port, parse_port
from sudokupool.keys import Keyring
from sudokupool.server import APP, launch, serve


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="serve the API (default: the demo pool in snapshots/)")
    parser.add_argument("--host", help="address to bind (default: SUDOKUPOOL_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=_port, help="port to bind (default: PORT, SUDOKUPOOL_PORT or 8000)")
    parser.add_argument("--exports", help="export source (overrides SUDOKUPOOL_EXPORTS)")
    # The app factory to serve: tests and benchmarks serve their variants exactly as the service is served.
    parser.add_argument("--app", default=APP, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def _port(text: str) -> int:
    try:
        return parse_port(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} {exc}") from None


def run(args: argparse.Namespace) -> int:
    # A bad setting raises SettingsError, which the CLI reports as one line (exit status 2). Key entries
    # too, before any server starts: the factory checks them again, but a server may run it in a worker
    # process whose exit it reports in its own words.
    settings = Settings.from_environ(os.environ)
    Keyring.from_settings(settings)
    if args.exports:
        # The factory reads the environment, so the override travels the same way.
        os.environ["SUDOKUPOOL_EXPORTS"] = args.exports
    port = args.port if args.port is not None else listen_port(os.environ, settings)
    return serve(launch(settings, os.environ, host=args.host, port=port, app=args.app))

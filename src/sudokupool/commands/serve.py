"""``sudokupool serve``: run the API on the configured server (what the Procfile runs; see sudokupool.server)."""

from __future__ import annotations

import argparse
import os

from sudokupool.config import Settings, SettingsError
from sudokupool.server import APP, launch, serve


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="serve the API (default: the demo pool in snapshots/)")
    parser.add_argument("--host", help="address to bind (default: SUDOKUPOOL_HOST or 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to bind (default: PORT, SUDOKUPOOL_PORT or 8000)")
    parser.add_argument("--exports", help="export source (overrides SUDOKUPOOL_EXPORTS)")
    # The app factory to serve: tests and benchmarks serve their variants exactly as the service is served.
    parser.add_argument("--app", default=APP, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = Settings.from_environ(os.environ)
    except SettingsError as exc:
        print(f"sudokupool: {exc}")
        return 2
    if args.exports:
        # The factory reads the environment, so the override travels the same way.
        os.environ["SUDOKUPOOL_EXPORTS"] = args.exports
    return serve(launch(settings, os.environ, host=args.host, port=args.port, app=args.app))

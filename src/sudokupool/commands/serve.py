"""``sudokupool serve``: run the API on the configured server (what the Procfile runs; see
:mod:`sudokupool.serving.launcher`)."""

from __future__ import annotations

import argparse
import logging
import os

from sudokupool.config import describe_unknown, listen_port, parse_port, unknown_variables
from sudokupool.logs import configure_service_logging
from sudokupool.serving.launcher import APP, checked_settings, launch, serve

logger = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the API (default: the demo pool in snapshots/)",
        description=(
            "Serve the API, the web page and the player: check the settings (SUDOKUPOOL_*, PORT, WEB_CONCURRENCY) "
            "and the keys, then run the server (SUDOKUPOOL_SERVER) with its workers over the pool of the newest "
            "export in SUDOKUPOOL_EXPORTS (default: the demo pool in snapshots/). This is what the Procfile runs; "
            "see docs/operations.md."
        ),
    )
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
    settings = checked_settings(os.environ)
    unknown = unknown_variables(os.environ)
    if unknown:
        configure_service_logging(settings.log_level)
        names = ", ".join(describe_unknown(name, closest) for name, closest in unknown)
        logger.warning("unknown SUDOKUPOOL_* variables, ignored: %s", names)
    if args.exports:
        # The factory reads the environment, so the override travels the same way.
        os.environ["SUDOKUPOOL_EXPORTS"] = args.exports
    port = args.port if args.port is not None else listen_port(os.environ, settings)
    return serve(launch(settings, os.environ, host=args.host, port=port, app=args.app))

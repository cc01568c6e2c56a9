"""The real peer: the pool published with Datasette from SQLite, as a user who just wanted an API would.

    python bench/datasette_peer.py bench/pools/100k     # build bench.db beside the export, then serve it

The database is made with ``sqlite-utils insert --nl --pk canonical_id`` from the export (nested fields
become JSON text columns), served read-only (``datasette -i``, as ``datasette publish`` does) with one
canned query for a random row. By id: ``/bench/puzzles/{id}.json?_shape=array``; random:
``/bench/random.json?_shape=array``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from servers import Server

RANDOM_SQL = "select * from puzzles where rowid = abs(random()) % (select max(rowid) from puzzles) + 1"
BY_ID = "/bench/puzzles/{id}.json?_shape=array"
RANDOM = "/bench/random.json?_shape=array"


def build_db(export: Path) -> Path:
    """``bench.db`` beside ``export`` (rebuilt when older than the export), and the canned-query metadata."""
    db = export.parent / "bench.db"
    metadata = export.parent / "datasette-metadata.json"
    metadata.write_text(json.dumps({"databases": {"bench": {"queries": {"random": {"sql": RANDOM_SQL}}}}}))
    if db.exists() and db.stat().st_mtime > export.stat().st_mtime:
        return db
    tmp = db.with_name("bench.db.part")
    tmp.unlink(missing_ok=True)
    started = time.perf_counter()
    sqlite_utils = shutil.which("sqlite-utils") or "sqlite-utils"
    unzip = subprocess.Popen(["gzip", "-dc", str(export)], stdout=subprocess.PIPE)
    subprocess.run(
        [sqlite_utils, "insert", str(tmp), "puzzles", "-", "--nl", "--pk", "canonical_id"],
        stdin=unzip.stdout,
        check=True,
    )
    if unzip.wait() != 0:
        raise RuntimeError(f"gzip -dc {export} failed")
    tmp.rename(db)
    print(f"datasette: built {db} ({db.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.0f} s")
    return db


def datasette_server(export: Path, log: Path) -> Server:
    """A Datasette server (not started) over the pool of ``export``."""
    db = build_db(export)
    datasette = shutil.which("datasette") or "datasette"
    argv = [datasette, "serve", "-i", str(db), "--metadata", str(export.parent / "datasette-metadata.json")]
    return Server("datasette", [*argv, "--host", "127.0.0.1", "--port", "{port}"], probe="/bench.json", log=log)


if __name__ == "__main__":
    directory = Path(sys.argv[1])
    exports = sorted(directory.glob("pool-*.ndjson.gz"))
    server = datasette_server(exports[-1], directory / "datasette.log").start()
    print(f"serving {server.base}{RANDOM}  (Ctrl-C stops)")
    try:
        assert server.process is not None
        server.process.wait()
    except KeyboardInterrupt:
        server.stop()

"""Build and run the service's image with podman, as the tests (tests/deploy) and ``python -m bench image``
(bench/image.py) do.

How containers run on these machines, in one place:
- no image registry is reachable, so the image is built on a base made from Debian's packages (``mmdebstrap``,
  then ``podman import``) passed as the Containerfile's ``BASE``; the base is cached under
  ``~/.cache/sudokupool-test-images/``, keyed by its package list and options, and stays in podman's storage
  (remove both to take in Debian's updates);
- the runtime is ``runc`` (``crun`` refuses the sandbox's cgroup layout), a container's network the host's (the
  compose fleet's own bridge network, with its names, works too);
- ``--ulimit`` values are no higher than this process's own (the sandbox cannot raise a limit, and runc sets
  every one it is given: podman's defaults are higher), and the process count is capped lower still
  (runc here refuses to set ``nproc`` much above a few thousand);
- pip in the build reaches its index only with this machine's pip settings and CA bundle, passed as build
  secrets (``pipconf``, ``pipcert``), never written into a layer;
- a tmpfs inside a container comes out root-owned, so a read-only run binds an empty directory that the
  image's user owns where Kubernetes would mount an ``emptyDir``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sudokupool-test-images"

#: The base: Debian's Python and its venv module, nothing recommended, no docs (what the slim image has).
SUITE = "bookworm"
PACKAGES = ("python3", "python3-venv", "usr-is-merged")
MMDEBSTRAP_OPTIONS = (
    "--variant=essential",
    "--aptopt=APT::Install-Recommends false",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    # mmdebstrap's merged-/usr setup brings usrmerge and with it perl (35 MB), which nothing here needs.
    '--customize-hook=chroot "$1" dpkg --purge usrmerge libfile-find-rule-perl libnumber-compare-perl '
    "libtext-glob-perl perl perl-modules-5.36 libperl5.36 libgdbm-compat4",
)
#: The image's user (the Containerfile's USER) and the one directory it writes.
USER_ID = 10001
WRITABLE = "/var/lib/sudokupool"
#: What the image build's context holds: the Containerfile copies no more (.dockerignore).
CONTEXT = ("Containerfile", ".dockerignore", "pyproject.toml", "constraints.txt", "README.md", "src", "snapshots")


def missing_tools() -> list[str]:
    return [tool for tool in ("podman", "runc", "mmdebstrap") if shutil.which(tool) is None]


def ulimits() -> list[str]:
    """``--ulimit`` options no higher than this process's own limits (see the module's docstring)."""

    def capped(kind: int, cap: int) -> str:
        soft, hard = (cap if value == resource.RLIM_INFINITY else min(value, cap) for value in resource.getrlimit(kind))
        return f"{min(soft, hard)}:{hard}"

    return [
        "--ulimit",
        f"nofile={capped(resource.RLIMIT_NOFILE, 65536)}",
        "--ulimit",
        f"nproc={capped(resource.RLIMIT_NPROC, 4096)}",
    ]


def run_options() -> list[str]:
    """The options every ``podman run`` here takes (see the module's docstring)."""
    return ["--runtime", "runc", "--network", "host", *ulimits()]


def podman(*args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout, check=check)


def image_exists(tag: str) -> bool:
    return podman("image", "exists", tag, check=False).returncode == 0


@contextlib.contextmanager
def locked(name: str) -> Iterator[None]:
    """One builder at a time on this machine (pytest-xdist's workers, other checkouts)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "ab") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield


def base_key() -> str:
    return hashlib.sha256(json.dumps([SUITE, PACKAGES, MMDEBSTRAP_OPTIONS]).encode()).hexdigest()[:16]


def apt_sources() -> list[str]:
    """This machine's own Debian sources, for mmdebstrap (none: its default mirror)."""
    found = sorted(str(path) for path in Path("/etc/apt/sources.list.d").glob("*.sources"))
    plain = Path("/etc/apt/sources.list")
    return [*found, str(plain)] if plain.is_file() and plain.stat().st_size else found


def base_image() -> str:
    """The Debian base's tag: in podman's storage already, imported from the cached tarball, or made."""
    key = base_key()
    tag = f"localhost/sudokupool-test-base:{key}"
    with locked("base"):
        if image_exists(tag):
            return tag
        tarball = CACHE / f"base-{key}.tar"
        if not tarball.is_file():
            partial = tarball.with_name(tarball.name + ".partial")
            command = [
                "mmdebstrap",
                "--quiet",
                "--format=tar",
                *MMDEBSTRAP_OPTIONS,
                f"--include={','.join(PACKAGES)}",
                SUITE,
            ]
            subprocess.run([*command, str(partial), *apt_sources()], check=True, timeout=1200, capture_output=True)
            partial.replace(tarball)
        podman("import", "--quiet", str(tarball), tag)
    return tag


def context_key(base: str) -> str:
    """A digest of everything the image is built from: the same sources give the same tag, built once."""
    digest = hashlib.sha256(base.encode())
    for name in CONTEXT:
        path = ROOT / name
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for file in files:
            if "__pycache__" in file.parts or file.suffix in (".pyc", ".pack"):
                continue
            digest.update(str(file.relative_to(ROOT)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def pip_secrets(scratch: Path) -> list[str]:
    """This machine's pip index settings and CA bundle as build secrets: the index URLs pip is configured with
    (``pip config list``; local ``file:`` indexes and paths do not exist inside the build) and the bundle it
    trusts. Nothing is written into the image."""
    listed = subprocess.run(
        ["python", "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    ).stdout.splitlines()
    settings: dict[str, str] = {}
    for line in listed:
        name, _, value = line.partition("=")
        settings[name.split(".", 1)[-1]] = value.strip().strip("'\"")
    conf = ["[global]"]
    for name in ("index-url", "extra-index-url", "trusted-host", "timeout", "retries"):
        values = [v for v in settings.get(name, "").split() if not v.startswith("file:")]
        if values:
            conf.append(f"{name} = {' '.join(values)}")
    secrets = []
    if len(conf) > 1:
        (scratch / "pip.conf").write_text("\n".join(conf) + "\n")
        secrets += ["--secret", f"id=pipconf,src={scratch / 'pip.conf'}"]
    cert = os.environ.get("PIP_CERT") or settings.get("cert") or os.environ.get("SSL_CERT_FILE")
    if cert and Path(cert).is_file():
        secrets += ["--secret", f"id=pipcert,src={cert}"]
    return secrets


def build_image() -> str:
    """The service's image built from this checkout on the Debian base (once per content: see context_key)."""
    base = base_image()
    tag = f"localhost/sudokupool-test:{context_key(base)}"
    with locked("image"):
        if image_exists(tag):
            return tag
        with tempfile.TemporaryDirectory(prefix="sudokupool-image-") as scratch:
            build = [
                "build",
                "--format",
                "docker",  # podman keeps HEALTHCHECK only in the docker format
                *run_options(),
                "--build-arg",
                f"BASE={base}",
                *pip_secrets(Path(scratch)),
                "--tag",
                tag,
                "--file",
                str(ROOT / "Containerfile"),
                str(ROOT),
            ]
            result = podman(*build, timeout=1200, check=False)
            if result.returncode != 0:
                raise AssertionError(f"podman build failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
        prune_old_images()
    return tag


#: Images of other sources this machine keeps (other checkouts' or earlier commits'), the newest first.
KEEP_IMAGES = 3


def prune_old_images() -> None:
    """Remove all but the newest KEEP_IMAGES test images; one a container still uses stays (no --force)."""
    listed = podman("images", "--format", "{{.Repository}}:{{.Tag}}", "localhost/sudokupool-test", check=False)
    for old in listed.stdout.split()[KEEP_IMAGES:]:  # podman lists the newest first
        podman("rmi", old, check=False)


def wait_healthy(url: str, container: str, timeout: float = 60.0) -> float:
    """Seconds until ``url`` answers 200; AssertionError with the container's log if it exits or times out."""
    import httpx

    started = time.monotonic()
    while time.monotonic() - started < timeout:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return time.monotonic() - started
        state = podman("inspect", "--format", "{{.State.Running}}", container, check=False).stdout.strip()
        if state == "false":
            break
        time.sleep(0.05)
    logs = podman("logs", container, check=False)
    raise AssertionError(f"{url} did not answer 200 within {timeout} s:\n{logs.stdout}\n{logs.stderr}")


def run_detached(
    image: str, name: str, env: dict[str, str], extra: Sequence[str] = (), args: Sequence[str] = ()
) -> str:
    """Start a container of ``image`` in the background, named ``name``; returns its name."""
    environment = [item for key, value in env.items() for item in ("--env", f"{key}={value}")]
    podman("run", "--detach", "--name", name, *run_options(), *environment, *extra, image, *args)
    return name


def remove(name: str) -> None:
    podman("rm", "--force", "--time", "0", name, check=False)


def container_pids(name: str) -> list[int]:
    """The host pids of the container's processes (the launcher, its workers, multiprocessing's tracker)."""
    lines = podman("top", name, "hpid").stdout.split()[1:]
    return [int(pid) for pid in lines if pid.isdigit()]

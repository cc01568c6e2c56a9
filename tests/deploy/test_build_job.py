"""deploy/kubernetes/build-job.yaml as far as this machine allows: its shard pods' command with the Job's
environment (each pod's JOB_COMPLETION_INDEX), then its merge pod's, against a real S3 server."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sudokupool.exporting.orders import puzzle_seed
from sudokupool.pool.export import parse_record
from support.containers import ROOT
from tests.seaweed import SeaweedS3

pytestmark = pytest.mark.slow

JOB = ROOT / "deploy" / "kubernetes" / "build-job.yaml"
SHARDS = 3


def jobs() -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in yaml.safe_load_all(JOB.read_text())}


def container(job: dict[str, Any], name: str) -> dict[str, Any]:
    spec = job["spec"]["template"]["spec"]
    found: dict[str, Any] = next(c for c in spec.get("initContainers", []) + spec["containers"] if c["name"] == name)
    return found


def pod_environment(spec: dict[str, Any], seaweed: SeaweedS3, tmpdir: Path, **overrides: str) -> dict[str, str]:
    """What the pod's shell would see: the Job's own variables (a CPU limit's reference: 1 core), the
    ConfigMap's and Secret's storage settings (pointed at ``seaweed``), the image's TMPDIR, ``overrides``."""
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        **seaweed.environ(),
        "SUDOKUPOOL_S3_ENDPOINT_URL": seaweed.endpoint_url,
        "SUDOKUPOOL_S3_ADDRESSING_STYLE": "path",
        "TMPDIR": str(tmpdir),
    }
    for variable in spec.get("env", []):
        env[variable["name"]] = variable.get("value", "1")
    env.update(overrides)
    return env


def run_pod(spec: dict[str, Any], env: dict[str, str]) -> subprocess.Popen[bytes]:
    assert spec["command"] == ["sh", "-c"]
    return subprocess.Popen(["sh", "-c", spec["args"][0]], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def download(seaweed: SeaweedS3, bucket: str, prefix: str, into: Path) -> list[Path]:
    """The exports under ``prefix``, as the merge pod's init container copies them (key paths kept)."""
    client = seaweed.client()
    keys = [item["Key"] for item in client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])]
    got = []
    for key in keys:
        if key.endswith(".ndjson.gz"):
            path = into / key[len(prefix) :]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(client.get_object(Bucket=bucket, Key=key)["Body"].read())
            got.append(path)
    return got


def records(path: Path) -> list[Any]:
    return [parse_record(line) for line in gzip.decompress(path.read_bytes()).splitlines()]


def test_shards_with_the_jobs_environment_merge_into_one_export_of_all_their_puzzles(
    seaweed: SeaweedS3, tmp_path: Path
) -> None:
    build, merge = jobs()["sudokupool-build"], jobs()["sudokupool-merge"]
    assert build["spec"]["completionMode"] == "Indexed"
    shard_spec = container(build, "shard")
    job_env = {v["name"]: v.get("value") for v in shard_spec["env"]}
    assert job_env["SHARDS"] == str(build["spec"]["completions"])
    bucket = seaweed.new_bucket()
    small = {
        "SHARDS": str(SHARDS),
        "PER_DIFFICULTY": "3",
        "DIFFICULTY": "easy",
        "SHARDS_PREFIX": f"s3://{bucket}/shards/",
    }
    pods = [
        run_pod(
            shard_spec,
            pod_environment(shard_spec, seaweed, _dir(tmp_path / f"pod{i}"), JOB_COMPLETION_INDEX=str(i), **small),
        )
        for i in range(SHARDS)
    ]
    for pod in pods:
        output = pod.communicate(timeout=300)[0].decode()
        assert pod.returncode == 0, output
    shards = {int(path.parent.name): records(path) for path in download(seaweed, bucket, "shards/", tmp_path / "s")}
    assert sorted(shards) == list(range(SHARDS)) and all(len(r) == 3 for r in shards.values())
    # Shard I holds the build's puzzles I, I+SHARDS, ...: no seed in two shards.
    seed = int(job_env["BUILD_SEED"] or 0)
    for index, shard in shards.items():
        mine = {puzzle_seed(seed, k * SHARDS + index) for k in range(200)}
        assert {r.seed for r in shard} <= mine
    # The merge pod: its init container's copy (download above, as shards/I/...), then its own command.
    merge_dir = _dir(tmp_path / "merge")
    download(seaweed, bucket, "shards/", merge_dir / "shards")
    merge_spec = container(merge, "merge")
    env = pod_environment(merge_spec, seaweed, merge_dir, SUDOKUPOOL_PUBLISH_TO=f"s3://{bucket}/pool/")
    pod = run_pod(merge_spec, env)
    output = pod.communicate(timeout=300)[0].decode()
    assert pod.returncode == 0, output
    (published,) = download(seaweed, bucket, "pool/", tmp_path / "pool")
    merged = records(published)
    every = [r for shard in shards.values() for r in shard]
    assert len({r.canonical_id for r in every}) == len(every) == 3 * SHARDS
    assert sorted(r.canonical_id for r in merged) == sorted(r.canonical_id for r in every)
    # A pod run again (a retry) builds the same shard from its index.
    again = run_pod(
        shard_spec,
        pod_environment(
            shard_spec,
            seaweed,
            _dir(tmp_path / "again"),
            JOB_COMPLETION_INDEX="1",
            **{**small, "SHARDS_PREFIX": f"s3://{bucket}/again/"},
        ),
    )
    assert again.wait(300) == 0
    (rebuilt,) = download(seaweed, bucket, "again/", tmp_path / "again-s3")
    assert [r.puzzle for r in records(rebuilt)] == [r.puzzle for r in shards[1]]


def _dir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path

"""deploy/kubernetes/: every manifest valid against the Kubernetes schemas (kubernetes-validate, offline), and
the Deployment sized and wired as docs/operations.md says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from sudokupool.config import SETTINGS, Settings
from support.containers import ROOT, USER_ID, WRITABLE

KUBERNETES = ROOT / "deploy" / "kubernetes"
#: The newest schemas kubernetes-validate ships, and an older release still in support.
VERSIONS = (kubernetes_validate.latest_version(), "1.32.0")


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def manifests() -> list[Path]:
    return sorted(path for path in KUBERNETES.glob("*.yaml") if path.name != "kustomization.yaml")


def resource(kind: str) -> dict[str, Any]:
    (found,) = [doc for path in manifests() for doc in documents(path) if doc["kind"] == kind]
    return found


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", manifests(), ids=lambda path: path.name)
def test_every_manifest_validates_strictly(path: Path, version: str) -> None:
    for document in documents(path):
        kubernetes_validate.validate(document, version, strict=True)


def test_a_misspelt_field_is_refused() -> None:
    deployment = resource("Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSIONS[0], strict=True)


def test_kustomization_lists_every_manifest_of_the_service() -> None:
    listed = documents(KUBERNETES / "kustomization.yaml")[0]["resources"]
    assert sorted(listed) == sorted(path.name for path in manifests() if path.name != "build-job.yaml")


def container() -> dict[str, Any]:
    found: dict[str, Any] = resource("Deployment")["spec"]["template"]["spec"]["containers"][0]
    return found


def test_web_concurrency_is_the_cpu_limit() -> None:
    (variable,) = [v for v in container()["env"] if v["name"] == "WEB_CONCURRENCY"]
    reference = variable["valueFrom"]["resourceFieldRef"]
    assert reference == {"containerName": container()["name"], "resource": "limits.cpu", "divisor": "1"}
    assert int(container()["resources"]["limits"]["cpu"]) >= 1


def test_probes_pre_stop_and_grace_period_let_requests_drain() -> None:
    spec = resource("Deployment")["spec"]["template"]["spec"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container()[probe]["httpGet"] == {"path": "/api/v1/health", "port": "http"}
    pause = int(container()["lifecycle"]["preStop"]["exec"]["command"][-1])
    shutdown = int(resource("ConfigMap")["data"]["SUDOKUPOOL_SHUTDOWN_TIMEOUT"])
    assert spec["terminationGracePeriodSeconds"] > pause + shutdown


def test_the_root_is_read_only_and_the_pack_cache_on_an_empty_dir() -> None:
    spec = resource("Deployment")["spec"]["template"]["spec"]
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] == USER_ID
    assert container()["securityContext"]["readOnlyRootFilesystem"] is True
    (mount,) = container()["volumeMounts"]
    assert mount["mountPath"] == WRITABLE
    (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]]
    assert "emptyDir" in volume


def test_the_settings_are_settings_the_service_accepts() -> None:
    names = {setting.env for setting in SETTINGS}
    environ = {**resource("ConfigMap")["data"], **resource("Secret")["stringData"]}
    unknown = {name for name in environ if name.startswith("SUDOKUPOOL_")} - names
    assert not unknown
    Settings.from_environ(environ)  # raises on a bad value

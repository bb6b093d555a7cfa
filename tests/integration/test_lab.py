"""The lab is real: real API servers, real schemas, real Keystone, real K-ORC."""

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import api_reads
from conftest import REPO, kubectl, read_json, run_playbook, run_tasks, task_results
from regionlab import build, config, flux, keystone, processes

pytestmark = [pytest.mark.lab_only, pytest.mark.beside_default]  # conftest.LAB_ONLY, conftest.BESIDE_DEFAULT_MARK

PLAYBOOKS = Path(__file__).parent / "playbooks"


def test_every_cluster_reports_the_built_kubernetes_version(lab, kubeconfigs):
    assert len(kubeconfigs) >= 8
    for name, path in kubeconfigs.items():
        out = json.loads(kubectl(path, "version", "-o", "json").stdout)
        assert out["serverVersion"]["gitVersion"] == config.KUBERNETES_VERSION, name
        assert out["serverVersion"]["minor"] == config.KUBERNETES_VERSION.split(".")[1]


def test_the_tests_reads_answer_as_kubectl_get_does(lab, kubeconfigs):
    """api_reads (read_json's kept-alive reads) prints what `kubectl get -o json` prints, or leaves the form to it."""
    path = kubeconfigs["management-cluster"]
    forms = [("namespaces",), ("namespace", "kube-system"), ("-n", "kube-system", "leases"), ("crd",),
             ("customresourcedefinitions.apiextensions.k8s.io", "helmreleases.helm.toolkit.fluxcd.io"),
             ("configmaps", "-A", "--field-selector", "metadata.name=kube-root-ca.crt"),
             ("namespaces", "-l", "kubernetes.io/metadata.name=flux-system"),
             ("helmrepositories.source.toolkit.fluxcd.io", "-A"), ("deployments", "-n", "flux-system")]
    for args in forms:
        proc = kubectl(path, "get", *args, "-o", "json")
        direct = api_reads.reader("management-cluster").get(args)
        # Leases and the like are renewed between the two reads: compare all but resourceVersions.
        assert _without_versions(direct) == _without_versions(json.loads(proc.stdout)), args
    assert api_reads.reader("management-cluster").get(("namespace", "no-such-namespace")) is api_reads.NOT_FOUND
    for unsupported in (("pods,services",), ("namespace/kube-system",), ("pods", "-o", "name"), ("no-such-kind",)):
        with pytest.raises(api_reads.Unsupported):
            api_reads.reader("management-cluster").get(unsupported)
    assert read_json(path, "namespace", "no-such-namespace") is None


def _without_versions(value):
    if isinstance(value, dict):
        return dict((k, _without_versions(v)) for k, v in value.items() if k not in ("resourceVersion", "renewTime"))
    if isinstance(value, list):
        return [_without_versions(v) for v in value]
    return value


def test_kubeconfigs_and_secrets_are_private(lab, kubeconfigs):
    private = list(kubeconfigs.values()) + [str(keystone.CLOUDS), str(keystone.PASSWORD)]
    private += [str(config.bmc_password_file(name)) for name in config.BMC_CREDENTIALS]
    for path in private:
        assert Path(path).stat().st_mode & 0o077 == 0, path


def test_the_inventory_reads_the_bmc_password_the_lab_set(lab, tmp_path):
    """The lab sets the rack's BMC password; the inventory's password lookup only reads it."""
    path = config.bmc_password_file("lab-rack-1")
    password = path.read_text().strip()
    assert len(password) == config.BMC_PASSWORD_LENGTH and password.isalnum()
    stamp = path.stat().st_mtime_ns
    rc, results = run_tasks([{"name": "bmc", "ansible.builtin.set_fact": {
        "bmc_password_matches": "{{ cobaltcore_bmc_credentials['lab-rack-1'].password | hash('sha256') == '%s' }}"
        % hashlib.sha256(password.encode()).hexdigest()}}],
        tmp_path, hosts="baremetal", check=True)
    assert rc == 0 and results["bmc"]["baremetal"]["ansible_facts"]["bmc_password_matches"] is True
    assert path.stat().st_mtime_ns == stamp


def test_clusters_are_separate(lab, kubeconfigs):
    """Each API server has its own etcd prefix: a namespace on one is absent on another."""
    first, second = kubeconfigs["management-cluster"], kubeconfigs["st-pool-a"]
    name = "separation-%d" % int(time.time())
    kubectl(first, "create", "namespace", name)
    try:
        assert read_json(second, "namespace", name) is None
    finally:
        kubectl(first, "delete", "namespace", name, "--wait=false")


def test_rbac_refuses_an_unprivileged_identity(lab, kubeconfigs):
    out = kubectl(kubeconfigs["management-cluster"], "auth", "can-i", "list", "secrets",
                  "--as", "system:serviceaccount:default:nobody", check=False)
    assert out.stdout.strip() == "no"


def test_upstream_crd_and_resource_via_kubernetes_core_on_two_clusters(lab, kubeconfigs):
    crd = [f for f in flux.crd_files() if f.name.endswith("_helmrepositories.yaml")][0]
    args = ["-e", "target_clusters=management-cluster,st-pool-a", "-e", "crd_file=%s" % crd,
            "-e", "helm_repository_url=https://charts.example.invalid"]
    try:
        _crd_and_resource_on_two_clusters(args)
    finally:
        # Left behind, source-controller would retry the unresolvable URL for every later test.
        for host in ("management-cluster", "st-pool-a"):
            kubectl(kubeconfigs[host], "delete", "helmrepository", "-n", "default", "integration-%s" % host,
                    "--ignore-not-found", "--wait=false", check=False)


def _crd_and_resource_on_two_clusters(args):
    rc, out = run_playbook(PLAYBOOKS / "crd_on_two_clusters.yml", *args)
    assert rc == 0, json.dumps(out["stats"])
    reads = task_results(out, "Read the custom resource back")
    assert set(reads) == {"management-cluster", "st-pool-a"}
    for host, result in reads.items():
        (item,) = result["resources"]
        assert item["metadata"]["name"] == "integration-%s" % host
        assert item["spec"]["url"] == "https://charts.example.invalid"
    # Applying the same again changes nothing.
    rc, out = run_playbook(PLAYBOOKS / "crd_on_two_clusters.yml", *args)
    assert rc == 0
    assert all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]


def test_schema_invalid_custom_resource_is_rejected(lab):
    rc, out = run_playbook(PLAYBOOKS / "invalid_custom_resource.yml", "-e", "target_clusters=management-cluster")
    assert rc != 0
    (result,) = task_results(out, "Apply a HelmRepository whose type is not in the schema's enum").values()
    assert result["failed"]
    assert "spec.type" in result["msg"] or "spec.type" in json.dumps(result.get("error", ""))
    assert "Unsupported value" in json.dumps(result)


def test_keystone_issues_a_token_via_openstack_cloud(lab):
    rc, out = run_playbook(PLAYBOOKS / "keystone_token.yml", "-e", "clouds_yaml=%s" % keystone.CLOUDS,
                           "-e", "keystone_url=%s" % keystone.URL, inventory="localhost,")
    assert rc == 0, json.dumps(out["stats"])
    (result,) = task_results(out, "Report what the token is scoped to, never the token").values()
    assert result["msg"]["status"] == 200
    assert result["msg"]["user"] == "admin" and result["msg"]["project"] == "admin"
    assert "admin" in result["msg"]["roles"]
    # The password never reaches the output.
    assert keystone.admin_password() not in json.dumps(out)


def test_lab_up_again_changes_nothing(lab):
    import regionlab

    pids = {name: processes.pid_of(name) for name in processes.running()}
    started = time.monotonic()
    info = regionlab.up()
    assert time.monotonic() - started < 30
    assert {name: processes.pid_of(name) for name in processes.running()} == pids
    assert info["build_seconds"] == {module: 0.0 for module in build.MODULES}


def test_lab_status_cli(lab):
    out = subprocess.run([sys.executable, "-m", "regionlab", "status", "--json"], cwd=REPO / "lab",
                         capture_output=True, text=True, check=True)
    info = json.loads(out.stdout)
    assert info["keystone"]["ready"] and info["korc"]["ready"]
    assert all(c["ready"] for c in info["clusters"].values())

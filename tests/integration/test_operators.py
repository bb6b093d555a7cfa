"""Phase 3 on the lab: the real Flux controllers install the operators from real upstream charts.

The session's `region` fixture built the region with site.yml (phase 3 included) and re-ran it; these
tests judge those runs and then drive playbooks/operators.yml on single clusters, restoring what they
change.
"""

import json
import time

import pytest
import yaml

from conftest import REPO, failures, kubectl, lab_kubectl, run_playbook, task_results
from regionlab import config, keystone, korc, processes

OPERATORS = REPO / "playbooks" / "operators.yml"
TASK = "Install the cluster's operators with Flux and wait for every release"
DEFAULTS = yaml.safe_load((REPO / "roles" / "infra_operators" / "defaults" / "main.yml").read_text())
TABLE = DEFAULTS["infra_operators_table"]
FLUX_GROUPS = {"management", "control_plane", "hypervisor_pools", "storage_pools"}
FLUX_CLUSTERS = [c for c in config.clusters() if set(c.groups) & FLUX_GROUPS]
# CRDs the later phases need, by cluster: they come from the charts now, not from the lab.
NEEDED_CRDS = {
    "lab-control-plane": ["mariadbs.k8s.mariadb.com", "rabbitmqclusters.rabbitmq.com", "valkeys.cache.cs.sap.com",
                          "controlplanes.c5c3.io", "keystones.keystone.openstack.c5c3.io",
                          "domains.openstack.k-orc.cloud", "externalsecrets.external-secrets.io",
                          "certificates.cert-manager.io", "ovnclusters.ovn.c5c3.io"],
    "st-pool-a": ["cephclusters.ceph.rook.io", "cephblockpools.ceph.rook.io", "cephclients.ceph.rook.io"],
    "st-pool-b": ["cephclusters.ceph.rook.io"],
    "hv-pool-a": ["hypervisors.kvm.cloud.sap"],
    "management-cluster": ["externalsecrets.external-secrets.io", "helmreleases.helm.toolkit.fluxcd.io"],
}
PROBE_HOST = "st-pool-b"
PROBE_RELEASE = "prysm"


def expected_releases(cluster):
    return sorted(e["name"] for e in TABLE if set(e["groups"]) & set(cluster.groups))


def everything(cluster, resource, *args):
    return json.loads(lab_kubectl(cluster, "get", resource, "-A", "-o", "json", *args).stdout)["items"]


def helm_records(cluster):
    """{(namespace, release): [revision, ...]} of Helm's own release records in the cluster."""
    found = {}
    for secret in everything(cluster, "secrets", "--field-selector", "type=helm.sh/release.v1"):
        labels = secret["metadata"]["labels"]
        found.setdefault((secret["metadata"]["namespace"], labels["name"]), []).append(int(labels["version"]))
    return dict((key, sorted(revisions)) for key, revisions in found.items())


def ready(release):
    status = release.get("status") or {}
    return (status.get("observedGeneration") == release["metadata"]["generation"]
            and any(c["type"] == "Ready" and c["status"] == "True"
                    and c.get("observedGeneration") == release["metadata"]["generation"]
                    for c in status.get("conditions") or []))


def play(*args):
    started = time.monotonic()
    rc, out = run_playbook(OPERATORS, *args, COBALTCORE_LAB_DIR=str(config.STATE))
    return rc, out, time.monotonic() - started


def with_probe(**fields):
    """Extra vars: the lab's overrides with the probe release changed."""
    change = json.dumps({PROBE_RELEASE: fields})
    return json.dumps({"infra_operators_overrides":
                       "{{ cobaltcore_operator_overrides | default({}) | combine(%s, recursive=true) }}" % change})


@pytest.mark.parametrize("cluster", FLUX_CLUSTERS, ids=lambda c: c.name)
def test_phase_3_installed_every_release_with_the_real_helm_controller(region, cluster):
    assert region.first.rc == 0, region.first.failures()
    releases = dict((r["metadata"]["name"], r) for r in everything(cluster.name, "helmreleases.helm.toolkit.fluxcd.io"))
    assert sorted(releases) == expected_releases(cluster)
    records = helm_records(cluster.name)
    for name, release in releases.items():
        assert ready(release), (name, release.get("status"))
        pinned = release["spec"]["chart"]["spec"]["version"]
        assert release["status"]["history"][0]["chartVersion"] == pinned.lstrip("v") or \
            release["status"]["history"][0]["chartVersion"] == pinned
        # Helm's own record of the release, written by helm-controller into the target cluster.
        assert records.get((release["metadata"]["namespace"], name)), name
    crds = set(c["metadata"]["name"] for c in everything(cluster.name, "customresourcedefinitions"))
    missing = [crd for crd in NEEDED_CRDS.get(cluster.name, []) if crd not in crds]
    assert not missing, missing
    # The first build installed them all (the region was empty), the re-run left them alone.
    first = task_results(region.first.out, TASK)[cluster.name]
    assert sorted(r["name"] for r in first["releases"] if r["result"] == "created") == expected_releases(cluster)
    second = task_results(region.second.out, TASK)[cluster.name]
    assert not second["changed"] and {r["result"] for r in second["releases"]} == {"unchanged"}


def test_korc_runs_with_the_scope_cache_the_collection_sets(region):
    """The chart's Deployment carries the collection's K-ORC args, and the manager runs with them (the lab
    starts it from the Deployment, as its pod would start)."""
    deployment, = everything("lab-control-plane", "deployments.apps", "-l", korc.CHART_SELECTOR)
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args == ["--scope-cache-max-size=256"]
    assert processes.argv_of(korc.NAME)[-1:] == args


def test_check_mode_on_a_fresh_region_plans_the_management_releases_and_writes_nothing(region):
    planned = task_results(region.check.out, TASK)["management-cluster"]
    assert planned["changed"]
    assert region.check.seen["writes_after"] == region.check.seen["writes_before"]


def test_a_chart_version_that_does_not_exist_fails_fast_and_a_fixed_pin_converges(region):
    before = helm_records(PROBE_HOST)
    rc, out, seconds = play("--limit", PROBE_HOST, "-e", with_probe(version="9.9.9"))
    assert rc != 0
    (task, host, msg), = failures(out)
    assert host == PROBE_HOST and seconds < 60, (seconds, msg)
    assert msg.startswith("st-pool-b: HelmRelease prysm/prysm (chart prysm 9.9.9) failed: HelmChart flux-system/prysm-prysm: ")
    assert "9.9.9" in msg.split("HelmChart", 1)[1]
    rc, out, seconds = play("--limit", PROBE_HOST)
    assert rc == 0, failures(out)
    assert helm_records(PROBE_HOST) == before  # nothing was installed or upgraded on the way


def test_a_version_bump_is_shown_first_and_upgrades_exactly_that_release(region):
    before = helm_records(PROBE_HOST)
    # A table that allows the move only from 0.1.1 on: refused before any write, naming both versions.
    rc, out, _seconds = play("--limit", PROBE_HOST, "-e", with_probe(version="0.1.1", upgrade_from=">=0.1.1"))
    assert rc != 0
    (_task, host, msg), = failures(out)
    assert host == PROBE_HOST and "chart prysm 0.1.0 cannot move to 0.1.1 in one step (upgrade_from >=0.1.1)" in msg
    assert helm_records(PROBE_HOST) == before
    bump = with_probe(version="0.1.1", upgrade_from="0.1.x")
    rc, out, _seconds = play("--limit", PROBE_HOST, "--check", "--diff", "-e", bump)
    assert rc == 0, failures(out)
    planned = task_results(out, TASK)[PROBE_HOST]
    assert planned["version_changes"] == [{"name": "prysm", "namespace": "prysm", "chart": "prysm", "from": "0.1.0",
                                           "to": "0.1.1", "installed": "0.1.0"}]
    assert any("0.1.1" in json.dumps(d.get("after")) for d in planned["diff"])
    assert helm_records(PROBE_HOST) == before
    try:
        rc, out, _seconds = play("--limit", PROBE_HOST, "-e", bump)
        assert rc == 0, failures(out)
        after = helm_records(PROBE_HOST)
        key = ("prysm", "prysm")
        assert after[key][-1] == before[key][-1] + 1
        assert dict((k, v[-1]) for k, v in after.items() if k != key) == \
            dict((k, v[-1]) for k, v in before.items() if k != key)
        reported = task_results(out, "Report the releases whose chart version changes")[PROBE_HOST]
        assert "chart prysm 0.1.0 -> 0.1.1" in json.dumps(reported)
    finally:
        rc, out, _seconds = play("--limit", PROBE_HOST)
        assert rc == 0, failures(out)


def with_overrides(overrides):
    """Extra vars: the lab's overrides with these releases changed."""
    return json.dumps({"infra_operators_overrides": "{{ cobaltcore_operator_overrides | default({}) | combine(%s, "
                                                    "recursive=true) }}" % json.dumps(overrides)})


def test_a_release_dropped_from_the_table_is_shown_uninstalled_and_one_whose_objects_are_left_is_refused(region):
    before = helm_records(PROBE_HOST)

    def releases():
        return sorted(r["metadata"]["name"] for r in everything(PROBE_HOST, "helmreleases.helm.toolkit.fluxcd.io"))
    # Rook and the arbiter operator dropped: the CephCluster, pools and clients of rook-ceph's kinds are left.
    rc, out, _seconds = play("--limit", PROBE_HOST, "-e", with_overrides(
        {"rook-ceph": {"enabled": False}, "external-arbiter-operator": {"enabled": False}}))
    assert rc != 0
    (_task, host, msg), = failures(out)
    assert host == PROBE_HOST and msg.startswith("invalid input, nothing was changed: ") and \
        "st-pool-b: HelmRelease rook-ceph/rook-ceph is no longer in the operator table, but objects of its kinds are " \
        "left (delete them first): " in msg and "CephCluster rook-ceph/" in msg, msg
    assert "external-arbiter-operator is no longer" not in msg  # its own kinds have no object
    assert helm_records(PROBE_HOST) == before and "rook-ceph" in releases()
    drop = with_probe(enabled=False)
    rc, out, _seconds = play("--limit", PROBE_HOST, "--check", "-e", drop)
    assert rc == 0 and task_results(out, TASK)[PROBE_HOST]["pruned"] == ["prysm/prysm"], failures(out)
    assert helm_records(PROBE_HOST) == before and "prysm" in releases()
    try:
        rc, out, _seconds = play("--limit", PROBE_HOST, "-e", drop)
        assert rc == 0 and task_results(out, TASK)[PROBE_HOST]["pruned"] == ["prysm/prysm"], failures(out)
        assert "prysm" not in releases() and ("prysm", "prysm") not in helm_records(PROBE_HOST)
        rc, out, _seconds = play("--limit", PROBE_HOST, "-e", drop)
        assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    finally:
        rc, out, _seconds = play("--limit", PROBE_HOST)
        assert rc == 0, failures(out)
    assert "prysm" in releases() and ("prysm", "prysm") in helm_records(PROBE_HOST)


def pods(cluster, namespace):
    return everything(cluster, "pods", "-n", namespace)


def test_phase_3_waits_for_pods_the_scheduler_placed_and_kwok_made_ready(region):
    """Helm's wait is on in the lab: every release's Deployments have their pods bound to a Node and Ready."""
    for cluster in FLUX_CLUSTERS:
        for deployment in everything(cluster.name, "deployments.apps"):
            status = deployment["status"]
            assert status.get("availableReplicas") == deployment["spec"]["replicas"], (cluster.name, status)
    nodes = everything("hv-pool-a", "nodes")
    daemon_sets = everything("hv-pool-a", "daemonsets.apps", "-n", "ovn-system")
    assert sorted(d["metadata"]["name"] for d in daemon_sets) == ["ovn-controller", "ovs-vswitchd"]
    for daemon_set in daemon_sets:  # a pod Ready on every Node of the pool, as the kubelets would run them
        status = daemon_set["status"]
        assert status["desiredNumberScheduled"] == status["numberReady"] == len(nodes), status
    for pod in pods("hv-pool-a", "ovn-system"):
        assert pod["spec"]["nodeName"] in [n["metadata"]["name"] for n in nodes]
        assert [c["status"] for c in pod["status"]["conditions"] if c["type"] == "Ready"] == ["True"], pod["status"]


def test_a_release_whose_pods_cannot_be_scheduled_fails_phase_3_naming_it(region):
    """A Deployment no Node can take never becomes Ready: Helm's wait fails the release, and phase 3 with it."""
    unschedulable = with_probe(timeout="15s", values={"nodeSelector": {"lab.c5c3.io/no-such-node": "true"}})
    try:
        rc, out, seconds = play("--limit", PROBE_HOST, "-e", unschedulable)
        assert rc != 0
        (task, host, msg), = failures(out)
        assert host == PROBE_HOST and msg.startswith("st-pool-b: HelmRelease prysm/prysm (chart prysm 0.1.0) failed"), msg
        pending = [p for p in pods(PROBE_HOST, "prysm") if p["status"]["phase"] == "Pending"]
        assert pending and not pending[0]["spec"].get("nodeName")
        assert any(c["type"] == "PodScheduled" and c["reason"] == "Unschedulable"
                   for c in pending[0]["status"]["conditions"])
    finally:
        rc, out, _seconds = play("--limit", PROBE_HOST)
        assert rc == 0, failures(out)
    assert all(p["status"]["phase"] == "Running" for p in pods(PROBE_HOST, "prysm"))


def test_an_operator_runs_only_while_its_deployment_is_available(region):
    """K-ORC's manager stops when its Deployment is scaled to zero and starts again with a Ready replica, as the
    Deployment's pod would (every stand-in is gated the same way, regionlab/standins/deployments.py)."""
    deployment = "deployment/openstack-resource-controller"
    assert processes.pid_of(korc.NAME)
    lab_kubectl("lab-control-plane", "scale", "-n", "orc-system", deployment, "--replicas=0")
    try:
        processes.wait_until(lambda: not processes.pid_of(korc.NAME), 30, "K-ORC manager stopped")
        assert not korc.installed(config.cluster("lab-control-plane"))
    finally:
        lab_kubectl("lab-control-plane", "scale", "-n", "orc-system", deployment, "--replicas=1")
    processes.wait_until(korc.ready, 60, "K-ORC manager started again")


def test_a_cluster_without_flux_is_reported_before_any_write(region):
    rc, out, seconds = play("--limit", "management-cluster", "-e", "infra_operators_flux_namespace=flux-absent")
    assert rc != 0
    (task, host, msg), = failures(out)
    assert msg.startswith("management-cluster: Flux does not run: Lease flux-absent/source-controller-leader-election "
                          "does not exist (the controller does not run)")
    assert seconds < 30


def test_korc_imports_the_default_domain(lab, kubeconfigs, region):  # K-ORC runs once phase 3 installed it
    control_plane = kubeconfigs["lab-control-plane"]
    namespace = "korc-import-%d" % int(time.time())
    clouds = keystone.CLOUDS.read_text()
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "lab-clouds-yaml", "namespace": namespace},
              "stringData": {"clouds.yaml": clouds}}
    domain = {"apiVersion": "openstack.k-orc.cloud/v1alpha1", "kind": "Domain",
              "metadata": {"name": "default", "namespace": namespace},
              "spec": {"cloudCredentialsRef": {"secretName": "lab-clouds-yaml", "cloudName": keystone.CLOUD_NAME},
                       "managementPolicy": "unmanaged", "import": {"filter": {"name": "Default"}}}}
    kubectl(control_plane, "create", "namespace", namespace)
    try:
        kubectl(control_plane, "apply", "-f", "-", stdin=yaml.safe_dump_all([secret, domain]))
        kubectl(control_plane, "wait", "-n", namespace, "domain/default", "--for=condition=Available",
                "--timeout=90s")
        got = json.loads(kubectl(control_plane, "get", "-n", namespace, "domain/default", "-o", "json").stdout)
        assert got["status"]["id"] == "default"
        assert got["status"]["resource"]["name"] == "Default"
        available = [c for c in got["status"]["conditions"] if c["type"] == "Available"][0]
        assert available["status"] == "True"
    finally:
        kubectl(control_plane, "delete", "namespace", namespace, "--wait=false")

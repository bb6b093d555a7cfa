"""playbooks/drift.yml on the lab region: objects changed behind the collection's back (a HelmRelease's values by
another manager, a declared CephBlockPool field, a ControlPlane's replicas, a hypervisor Node's label, an object
nothing declares) each in the report, drift_fail failing on them, nothing written; the phases that declare them
(site.yml's tenants and hypervisor pools) putting the declared fields back; the region report's drift section; and
nothing to report once the rest is removed."""

import json

from conftest import REPO, _play, failures, kubectl, task_result, writes
from regionlab import config

DRIFT = REPO / "playbooks" / "drift.yml"
REPORT = REPO / "playbooks" / "report.yml"
# The phases that declare what the test changes (the HelmRelease's foreign value is no phase's to take back).
PHASES = [REPO / "playbooks" / "tenants.yml", REPO / "playbooks" / "hypervisors.yml"]
MANAGER = "drift-probe"
TENANT_NAMESPACE = "openstack-lab-tenant-a"


def kubeconfig(cluster):
    return config.STATE / "kubeconfig" / ("%s.yaml" % cluster)


def drift(region, directory, *args):
    rc, out, unused = _play(DRIFT, "--check", "-e", "cobaltcore_report_dir=%s" % directory,
                            "-e", "cobaltcore_tenants_dir=%s" % region.tenants_dir, *args)
    return rc, out


def report(directory):
    return json.loads((directory / "lab-drift.json").read_text())


def findings(data):
    """{(cluster, object): lines} of every object that drifted, and the objects no longer declared."""
    found = dict(((c["name"], o["object"]), o) for c in data["clusters"] for o in c["objects"])
    undeclared = sorted((c["name"], o["object"]) for c in data["clusters"] for o in c["undeclared"])
    return found, undeclared


def patch(cluster, *args):
    kubectl(kubeconfig(cluster), *args)


def test_drift_refuses_to_run_without_check_mode(region, tmp_path):
    before = writes()
    rc, out, unused = _play(DRIFT, "-e", "cobaltcore_report_dir=%s" % tmp_path)
    assert rc != 0
    assert task_result(out, "Refuse to run without check mode")["msg"].startswith("drift.yml only reads")
    assert writes() == before and not list(tmp_path.iterdir())


def _node():
    found = json.loads(kubectl(kubeconfig("hv-pool-b"), "get", "nodes", "-o", "json").stdout)["items"]
    return sorted(n["metadata"]["name"] for n in found)[0]


def test_changes_behind_the_collections_back_are_reported_and_the_phases_put_the_declared_ones_back(region, tmp_path):
    node = _node()
    changes = [
        ("st-pool-a", "patch", "helmrelease", "-n", "rook-ceph", "rook-ceph", "--type", "merge",
         "-p", json.dumps({"spec": {"values": {"driftProbe": {"enabled": True}}}}), "--field-manager", MANAGER),
        ("st-pool-a", "patch", "cephblockpool", "-n", "rook-ceph", "lab-tenant-a-images", "--type", "merge",
         "-p", json.dumps({"spec": {"replicated": {"size": 2}}}), "--field-manager", MANAGER),
        ("lab-control-plane", "patch", "controlplane", "-n", TENANT_NAMESPACE, "lab-tenant-a", "--type", "merge",
         "-p", json.dumps({"spec": {"openstack": {"glance": {"replicas": 5}}}}), "--field-manager", MANAGER),
        ("hv-pool-b", "label", "node", node, "nova.openstack.cloud.sap/virt-driver=qemu", "--overwrite",
         "--field-manager", MANAGER),
    ]
    stray = {"apiVersion": "v1", "kind": "Secret", "stringData": {"note": "nobody declares this"},
             "metadata": {"name": "drift-probe-stray", "namespace": TENANT_NAMESPACE,
                          "labels": {"app.kubernetes.io/managed-by": "c5c3.cobaltcore"}}}
    restored = False
    try:
        for cluster, *args in changes:
            patch(cluster, *args)
        kubectl(kubeconfig("lab-control-plane"), "apply", "-f", "-", stdin=json.dumps(stray))
        before = writes()
        rc, out = drift(region, tmp_path, "-e", "drift_fail=true")
        assert rc != 0
        assert task_result(out, "Fail on drift when asked")["msg"].startswith("the region drifted from its inventory")
        assert writes() == before
        found, undeclared = findings(report(tmp_path))
        release = found[("st-pool-a", "HelmRelease rook-ceph/rook-ceph")]
        assert release["foreign"] == [{"field": "spec.values.driftProbe", "managers": [MANAGER],
                                       "live": {"enabled": True}}] and release["fields"] == []
        assert found[("st-pool-a", "CephBlockPool rook-ceph/lab-tenant-a-images")]["fields"] == [
            {"field": "spec.replicated.size", "declared": 3, "live": 2}]
        assert found[("lab-control-plane", "ControlPlane %s/lab-tenant-a" % TENANT_NAMESPACE)]["fields"] == [
            {"field": "spec.openstack.glance.replicas", "declared": 2, "live": 5}]
        assert found[("hv-pool-b", "Node %s" % node)]["fields"] == [
            {"field": "metadata.labels[nova.openstack.cloud.sap/virt-driver]", "declared": "kvm", "live": "qemu"}]
        assert len(found) == 4, sorted(found)
        # Secrets are among the kinds the run declares on the control-plane cluster; nothing declares this one.
        assert undeclared == [("lab-control-plane", "Secret %s/drift-probe-stray" % TENANT_NAMESPACE)]
        markdown = (tmp_path / "lab-drift.md").read_text()
        assert "spec.replicated.size: declared 3, live 2" in markdown
        rc, out, unused = _play(REPORT, "-e", "cobaltcore_report_dir=%s" % tmp_path,
                                "-e", "cobaltcore_tenants_dir=%s" % region.tenants_dir)
        assert rc == 0, failures(out)
        page = (tmp_path / "lab.html").read_text()
        section = page[page.index('<section id="drift">'):]
        assert "spec.values.driftProbe: set by drift-probe" in section and "drift-probe-stray" in section

        restore(region)
        restored = True
        # Another manager's field and an object nobody declares are the operator's: the phases leave them (the
        # declared fields are back: the drift run at the end finds nothing once these two are gone).
        release = json.loads(kubectl(kubeconfig("st-pool-a"), "get", "helmrelease", "-n", "rook-ceph", "rook-ceph",
                                     "-o", "json").stdout)
        assert release["spec"]["values"]["driftProbe"] == {"enabled": True}
        assert kubectl(kubeconfig("lab-control-plane"), "get", "secret", "-n", TENANT_NAMESPACE, "drift-probe-stray",
                       "-o", "name").stdout.strip() == "secret/drift-probe-stray"
    finally:
        kubectl(kubeconfig("st-pool-a"), "patch", "helmrelease", "-n", "rook-ceph", "rook-ceph", "--type", "json",
                "-p", json.dumps([{"op": "remove", "path": "/spec/values/driftProbe"}]), check=False)
        kubectl(kubeconfig("lab-control-plane"), "delete", "secret", "-n", TENANT_NAMESPACE, "drift-probe-stray",
                "--ignore-not-found")
        if not restored:
            restore(region)
    # What is left is the region as its inventory declares it (the changed fields put back by the phases): no drift,
    # and nothing written but the report.
    before = writes()
    rc, out = drift(region, tmp_path, "-e", "drift_fail=true")
    assert rc == 0, failures(out)
    data = report(tmp_path)
    assert data["drift"] is False and data["clusters"] == [], data
    assert writes() == before
    changed = set(t["task"]["name"] for p in out["plays"] for t in p["tasks"] for r in t["hosts"].values()
                  if r.get("changed"))
    assert changed <= {"Write the drift report as Markdown and JSON"}, changed


def restore(region):
    for phase in PHASES:
        rc, out, unused = _play(phase, "-e", "cobaltcore_tenants_dir=%s" % region.tenants_dir)
        assert rc == 0, failures(out)

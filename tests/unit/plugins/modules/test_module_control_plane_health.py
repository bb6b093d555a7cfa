# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""control_plane_health: one LIST per kind, the report by phase, the wait and its failure messages."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import region_control_plane
from ansible_collections.c5c3.cobaltcore.plugins.modules import control_plane_health

from module_harness import run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

CP_API = "c5c3.io/v1alpha1"
KORC = "openstack.k-orc.cloud/v1alpha1"
INFRA = ("mariadb", "rabbitmq", "valkey", "memcached")


def plural(kind):
    return kind.lower() + "s"


@pytest.fixture
def cluster(kube):
    kube.kinds[(CP_API, "ControlPlane")] = ("controlplanes", True)
    for api_version, kind in health.kinds_for():
        kube.kinds[(api_version, kind)] = (plural(kind), True)
    return kube


def add_control_plane(kube, name="lab", namespace="openstack", uid="uid-lab", **spec):
    cp = region_control_plane({"name": name}, ["keystone", "glance", "placement", "nova", "neutron", "cinder"])
    cp["metadata"].update(namespace=namespace, uid=uid)
    cp["spec"].update(spec)
    return kube.add(cp)


def ready_status(kind):
    if kind == "RabbitmqCluster":
        return {"observedGeneration": 1, "conditions": [{"type": "AllReplicasReady", "status": "True"},
                                                        {"type": "ClusterAvailable", "status": "True"}]}
    if kind == "Valkey":
        return {"observedGeneration": 1, "state": "Ready"}
    if kind == "Memcached":
        return {"observedGeneration": 1, "conditions": [{"type": "Available", "status": "True"},
                                                        {"type": "Progressing", "status": "False"},
                                                        {"type": "Degraded", "status": "False"}]}
    return {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]}


def add_owned(kube, component, status=None, namespace="openstack", uid="uid-lab", cp="lab", name=None):
    api_version, kind = health.COMPONENT_KINDS[component][0]
    return kube.add({"apiVersion": api_version, "kind": kind, "metadata": {
        "name": name or component, "namespace": namespace, "generation": 1, "ownerReferences": [
            {"apiVersion": CP_API, "kind": "ControlPlane", "name": cp, "uid": uid, "controller": True}]},
        "status": ready_status(kind) if status is None else status})


def add_korc(kube, kind, name, status=None, namespace="openstack"):
    return kube.add({"apiVersion": KORC, "kind": kind, "metadata": {"name": name, "namespace": namespace,
                                                                    "generation": 1},
                     "status": status or {"conditions": [
                         {"type": "Available", "status": "True", "observedGeneration": 1},
                         {"type": "Progressing", "status": "False", "observedGeneration": 1}]}})


def test_a_report_with_one_list_per_kind_in_the_namespace(cluster):
    add_control_plane(cluster)
    for component in INFRA:
        add_owned(cluster, component)
    add_owned(cluster, "keystone", status={"conditions": [
        {"type": "Ready", "status": "False", "reason": "BootstrapPending", "message": "no bootstrap settings"}]})
    result, _text = run_module(control_plane_health.main, {"name": "lab"}, check_mode=True)
    assert not result.get("failed") and not result["changed"]
    assert result["ready"] is False
    assert [(p["name"], p["state"]) for p in result["phases"]] == [
        ("infrastructure", "ready"), ("identity", "blocked"), ("service-catalog", "blocked"), ("core", "blocked"),
        ("compute", "blocked"), ("scheduler", "not-enabled"), ("testing", "not-enabled")]
    report = result["control_planes"][0]
    assert report["first_not_ready"] == "identity" and report["blocking"]["kind"] == "Keystone"
    assert report["waiting"] == ["service-catalog", "core", "compute"]
    assert result["table"] == report["table"] and len(result["table"]) == 9
    assert result["summary"] == [
        "phase 2 identity is not ready: Keystone openstack/keystone (keystone): condition Ready is False "
        "(reason BootstrapPending: no bootstrap settings); waiting behind it: service-catalog, core, compute"]
    gets = [call for call in cluster.calls if call[0] == "GET"]
    # The ControlPlane, then one LIST per kind of the enabled components (12), all in its namespace.
    assert gets[0] == ("GET", "ControlPlane", "lab", "openstack", False)
    listed = [call[1] for call in gets[1:]]
    assert len(listed) == len(set(listed)) == 4 + 1 + 7 + 2 + 3
    assert all(call[3] == "openstack" for call in gets)
    assert "Cortex" not in listed and "Tempest" not in listed
    assert result["requests"] == {"GET": len(gets)}


def test_through_infrastructure_is_ready_with_the_infrastructure(cluster):
    add_control_plane(cluster)
    for component in INFRA:
        add_owned(cluster, component)
    result, _text = run_module(control_plane_health.main, {"name": "lab", "through": "infrastructure", "wait": True,
                                                           "timeout": 5, "sleep": 0})
    assert not result.get("failed") and result["ready"] is True
    assert result["table"][2].endswith("(not waited for)")


def test_the_wait_times_out_naming_the_blocking_cr_and_the_phases_behind_it(cluster):
    add_control_plane(cluster)
    for component in ("mariadb", "rabbitmq", "memcached"):
        add_owned(cluster, component)
    add_owned(cluster, "valkey", status={"observedGeneration": 1, "state": "Processing", "conditions": [
        {"type": "Ready", "status": "False", "reason": "Progressing", "message": "waiting for sentinel pods"}]})
    result, _text = run_module(control_plane_health.main, {"name": "lab", "through": "identity", "wait": True,
                                                           "timeout": 0, "sleep": 0})
    assert result["failed"] and result["ready"] is False
    assert result["msg"] == (
        "ControlPlane openstack/lab, after 0s: phase 1 infrastructure is not ready: Valkey openstack/valkey (valkey): "
        "status.state is Processing, want Ready; condition Ready is False (reason Progressing: waiting for sentinel "
        "pods); waiting behind it: identity, service-catalog, core, compute")
    # The report comes with the failure.
    assert result["phases"][0]["state"] == "blocked" and result["table"][1].startswith("1 infrastructure")


def test_a_terminal_verdict_fails_the_wait_at_once(cluster):
    add_control_plane(cluster)
    for component in INFRA + ("keystone",):
        add_owned(cluster, component)
    add_korc(cluster, "Domain", "default")
    add_korc(cluster, "Service", "glance", status={"conditions": [
        {"type": "Available", "status": "False", "reason": "InvalidConfiguration", "observedGeneration": 1,
         "message": "service type is not valid"},
        {"type": "Progressing", "status": "False", "reason": "InvalidConfiguration", "observedGeneration": 1,
         "message": "service type is not valid"}]})
    result, _text = run_module(control_plane_health.main, {"name": "lab", "wait": True, "timeout": 600, "sleep": 0})
    assert result["failed"]
    assert result["msg"].startswith("ControlPlane openstack/lab: phase 3 service-catalog failed: Service "
                                    "openstack/glance (k-orc): ")
    assert "service type is not valid" in result["msg"] and result["msg"].endswith("waiting behind it: core, compute")
    assert result["control_planes"][0]["failed"]


def test_the_wait_passes_once_everything_is_ready(cluster, monkeypatch):
    add_control_plane(cluster)
    for component in INFRA + ("keystone", "glance", "placement", "nova", "neutron", "cinder"):
        add_owned(cluster, component)
    add_korc(cluster, "Domain", "default")
    result, _text = run_module(control_plane_health.main, {"name": "lab", "wait": True, "timeout": 5, "sleep": 0})
    assert not result.get("failed") and result["ready"] is True and result["summary"] == []
    assert [p["state"] for p in result["phases"]] == ["ready"] * 5 + ["not-enabled"] * 2


def test_a_missing_control_plane(cluster):
    result, _text = run_module(control_plane_health.main, {"name": "lab"})
    assert not result.get("failed") and result["ready"] is False
    assert result["table"] == ["ControlPlane openstack/lab: does not exist"]
    result, _text = run_module(control_plane_health.main, {"name": "lab", "wait": True, "timeout": 0})
    assert result["failed"] and result["msg"] == "ControlPlane openstack/lab does not exist after 0s"
    result, _text = run_module(control_plane_health.main, {"namespace": "empty"})
    assert result["ready"] is False and result["table"] == ["no ControlPlane in namespace empty"]
    result, _text = run_module(control_plane_health.main, {"namespace": "empty", "wait": True, "timeout": 0})
    assert result["failed"] and result["msg"] == "no ControlPlane in namespace empty after 0s"


def test_all_namespaces_judges_every_control_plane_with_one_list_per_kind(cluster):
    add_control_plane(cluster)
    add_control_plane(cluster, name="tenant-a", namespace="openstack-tenant-a", uid="uid-a")
    for component in INFRA:
        add_owned(cluster, component)
        add_owned(cluster, component, namespace="openstack-tenant-a", uid="uid-a", cp="tenant-a")
    add_owned(cluster, "mariadb", namespace="openstack-tenant-a", uid="uid-other", cp="other", name="other",
              status={"conditions": [{"type": "Ready", "status": "False"}]})
    result, _text = run_module(control_plane_health.main, {"all_namespaces": True, "through": "infrastructure"})
    assert [(r["namespace"], r["name"], r["ready"]) for r in result["control_planes"]] == [
        ("openstack", "lab", True), ("openstack-tenant-a", "tenant-a", True)]
    assert result["ready"] is True
    headers = [line for line in result["table"] if line.startswith("ControlPlane ")]
    assert headers == ["ControlPlane openstack/lab: ready through infrastructure",
                       "ControlPlane openstack-tenant-a/tenant-a: ready through infrastructure"]
    gets = [call for call in cluster.calls if call[0] == "GET"]
    assert gets[0] == ("GET", "ControlPlane", None, None, False)
    assert all(call[3] is None for call in gets) and len(gets) == 1 + 17


def test_kinds_that_are_not_served(kube):
    add_control_plane(kube)
    result, _text = run_module(control_plane_health.main, {"name": "lab"})
    assert not result.get("failed")
    mariadb = result["phases"][0]["components"][0]["objects"][0]
    assert mariadb["missing"] == ["k8s.mariadb.com/v1alpha1 MariaDB is not served (its CRD is not installed)"]


def test_without_the_control_plane_kind_the_module_fails_clearly(kube):
    kube.kinds.pop((CP_API, "ControlPlane"), None)
    result, _text = run_module(control_plane_health.main, {"name": "lab"})
    assert result["failed"] and "does not serve kind ControlPlane in c5c3.io/v1alpha1" in result["msg"]


def test_name_and_all_namespaces_exclude_each_other(kube):
    result, _text = run_module(control_plane_health.main, {"name": "lab", "all_namespaces": True})
    assert result["failed"] and "mutually exclusive" in result["msg"]

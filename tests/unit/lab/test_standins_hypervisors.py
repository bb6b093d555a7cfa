# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gardenlet stand-in's worker Nodes and its hypervisor-operator stand-in: their pure parts.

The lab tests (tests/integration/test_hypervisors.py) drive both against real API servers.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import os
import sys
import uuid

import pytest

from conftest import REPO, merge_patch as merge

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import hypervisor_operator as hvop, nodes, settings  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate  # noqa: E402


def claim(name, server, pool="hv-pool-a", phase="Bound"):
    return {"metadata": {"name": name, "labels": {nodes.POOL_LABEL: pool}},
            "spec": {"serverRef": {"name": server}}, "status": {"phase": phase}}


def test_addresses_start_at_the_tenth_host_and_never_move():
    assert nodes.assign_addresses("10.250.3.0/24", ["a", "b"], {}) == {"a": "10.250.3.10", "b": "10.250.3.11"}
    # An existing Node keeps its address; a new one takes the first free address.
    assert nodes.assign_addresses("10.250.3.0/24", ["a", "b", "c"], {"b": "10.250.3.10"}) == {
        "b": "10.250.3.10", "a": "10.250.3.11", "c": "10.250.3.12"}
    # Outside the (new) CIDR: renumbered into it.
    assert nodes.assign_addresses("10.1.0.0/28", ["a"], {"a": "10.250.3.10"}) == {"a": "10.1.0.10"}
    with pytest.raises(ValueError, match="no free address"):
        nodes.assign_addresses("10.1.0.0/29", ["a"], {})


def test_the_lab_range_without_networking_nodes():
    assert nodes.node_cidr({"spec": {}}, 4) == "10.250.4.0/24"
    assert nodes.node_cidr({"spec": {"networking": {"nodes": "10.10.0.0/24"}}}, 4) == "10.10.0.0/24"


def test_servers_of_bound_claims_of_the_pool_up_to_the_maximum_existing_first():
    claims = [claim("c-2", "srv-2"), claim("c-1", "srv-1"), claim("c-3", "srv-3"),
              claim("c-4", "srv-4", phase="Unbound"), claim("c-5", "srv-5", pool="hv-pool-b")]
    assert nodes.wanted_servers(claims, "hv-pool-a", 2, {}) == ["srv-1", "srv-2"]
    assert nodes.wanted_servers(claims, "hv-pool-a", 2, {"srv-3": {}}) == ["srv-3", "srv-1"]
    assert nodes.wanted_servers(claims, "hv-pool-a", 0, {}) == []


def test_node_labels_and_status():
    worker = {"name": "worker", "labels": {"tier": "standard"},
              "machine": {"type": "lab-kvm", "architecture": "amd64", "image": {"version": "1877.3.0"}}}
    labels = nodes.node_labels(worker, "srv-1")
    assert labels["worker.gardener.cloud/pool"] == "worker" and labels["tier"] == "standard"
    assert labels["kubernetes.io/hostname"] == "srv-1" and labels["node.kubernetes.io/instance-type"] == "lab-kvm"
    status = nodes.node_status("srv-1", "10.250.3.10", worker, "2026-01-01T00:00:00Z")
    assert status["addresses"] == [{"type": "InternalIP", "address": "10.250.3.10"},
                                   {"type": "Hostname", "address": "srv-1"}]
    ready = [c for c in status["conditions"] if c["type"] == "Ready"][0]
    assert (ready["status"], ready["reason"], ready["message"]) == ("True", "KubeletReady", "kubelet is posting ready status")


def test_a_node_carries_its_servers_zone_and_region_as_the_ccm_sets_them():
    worker = {"name": "worker", "zones": ["lab-1a"], "machine": {"type": "lab-kvm"}}
    server = {"metadata": {"labels": {"topology.kubernetes.io/zone": "lab-1b", "topology.kubernetes.io/region": "lab",
                                      "c5c3.io/machine-class": "lab-kvm"}}}
    labels = nodes.node_labels(worker, "srv-1", server)
    # cloud-provider-metal: the claimed Server's zone, not the worker's; its other labels are not topology.
    assert labels["topology.kubernetes.io/zone"] == "lab-1b" and labels["topology.kubernetes.io/region"] == "lab"
    assert "c5c3.io/machine-class" not in labels
    # A Server without topology labels: a Node without them (the hypervisor operator cannot onboard it).
    assert "topology.kubernetes.io/zone" not in nodes.node_labels(worker, "srv-1", {"metadata": {"labels": {}}})
    assert "topology.kubernetes.io/zone" not in nodes.node_labels(worker, "srv-1")


def node(labels, annotations=None):
    return {"metadata": {"name": "srv-1", "uid": "u-1", "labels": labels, "annotations": annotations or {}}}


def test_the_hypervisor_of_a_node():
    found = hvop.desired_hypervisor(node(
        {hvop.VIRT_DRIVER: "kvm", hvop.LIFECYCLE: "skip-tests", "worker.gardener.cloud/pool": "worker", "tier": "x"},
        {hvop.AGGREGATES: "az-1, tenant_filter_tests", hvop.CUSTOM_TRAITS: "CUSTOM_A"}))
    assert found["metadata"]["name"] == "srv-1"
    assert found["metadata"]["labels"] == {"worker.gardener.cloud/pool": "worker"}
    assert found["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "srv-1", "uid": "u-1",
                                                     "blockOwnerDeletion": True}]
    spec = found["spec"]
    assert spec["lifecycleEnabled"] and spec["skipTests"] and spec["highAvailability"] and spec["installCertificate"]
    assert spec["aggregates"] == ["az-1", "tenant_filter_tests"] and spec["customTraits"] == ["CUSTOM_A"]
    assert not hvop.desired_hypervisor(node({hvop.VIRT_DRIVER: "kvm"}))["spec"]["lifecycleEnabled"]
    # With the annotation, the zone joins the aggregates (an aggregate per zone, named as the zone).
    zoned = hvop.desired_hypervisor(node({hvop.VIRT_DRIVER: "kvm", hvop.ZONE: "lab-1a"}, {hvop.AGGREGATES: "az-1"}))
    assert zoned["spec"]["aggregates"] == ["az-1", "lab-1a"] and zoned["metadata"]["labels"] == {hvop.ZONE: "lab-1a"}
    assert "aggregates" not in hvop.desired_hypervisor(node({hvop.VIRT_DRIVER: "kvm", hvop.ZONE: "lab-1a"}))["spec"]


def test_the_node_is_synced_to_an_existing_hypervisor_added_or_changed_never_removed():
    found = hvop.desired_hypervisor(node({hvop.VIRT_DRIVER: "kvm", "worker.gardener.cloud/pool": "worker"}))
    assert hvop.sync_patch(found, node({hvop.VIRT_DRIVER: "kvm", "worker.gardener.cloud/pool": "worker"})) == {}
    later = node({hvop.VIRT_DRIVER: "kvm", hvop.ZONE: "lab-1a", hvop.LIFECYCLE: "skip-tests", "tier": "x"},
                 {hvop.AGGREGATES: "az-1", hvop.CUSTOM_TRAITS: "CUSTOM_A, CUSTOM_B"})
    # The pool label the Node lost stays; lifecycle, aggregates (with the zone) and traits follow the Node.
    assert hvop.sync_patch(found, later) == {
        "metadata": {"labels": {hvop.ZONE: "lab-1a"}},
        "spec": {"lifecycleEnabled": True, "skipTests": True, "aggregates": ["az-1", "lab-1a"],
                 "customTraits": ["CUSTOM_A", "CUSTOM_B"]}}
    # A Node without the lifecycle label leaves lifecycleEnabled as it is (upstream never sets it false).
    enabled = dict(found, spec=dict(found["spec"], lifecycleEnabled=True))
    assert hvop.sync_patch(enabled, node({hvop.VIRT_DRIVER: "kvm", "worker.gardener.cloud/pool": "worker"})) == {}


def zoned_hv(reason, zone="lab-1a", **conditions):
    conds = [{"type": "Onboarding", "status": "True" if reason != "Succeeded" else "False", "reason": reason}]
    conds += [{"type": t, "status": s} for t, s in conditions.items()]
    return {"metadata": {"name": "srv-1", "labels": {hvop.ZONE: zone} if zone else {}},
            "spec": {"aggregates": ["az-1"]}, "status": {"conditions": conds}}


def test_the_aggregates_upstream_wants_at_each_step():
    test = ["lab-1a", hvop.TEST_AGGREGATE]
    assert hvop.wanted_aggregates(zoned_hv("Initial")) == (test, (
        "False", "TestAggregates", "Test aggregate applied during onboarding instead of spec aggregates"))
    assert hvop.wanted_aggregates(zoned_hv("Testing"))[0] == test
    assert hvop.wanted_aggregates(zoned_hv("Handover")) == (test, (
        "False", "WaitingForTraits", "Waiting for traits to be applied before switching to spec aggregates"))
    assert hvop.wanted_aggregates(zoned_hv("Handover", TraitsUpdated="True")) == (
        ["az-1"], ("True", "Succeeded", "Aggregates from spec applied successfully"))
    assert hvop.wanted_aggregates(zoned_hv("Succeeded"))[0] == ["az-1"]
    # Without the zone label upstream asks Nova for an aggregate named "" (which does not exist).
    assert hvop.wanted_aggregates(zoned_hv("Initial", zone=None))[0] == ["", hvop.TEST_AGGREGATE]
    assert hvop.missing_aggregates(["", hvop.TEST_AGGREGATE]) == [""] and hvop.go_list([""]) == "[]"
    assert hvop.same_names(["b", "a"], ["a", "b"]) and not hvop.same_names(["a"], ["a", "a"])


def hv(spec=None, **status):
    return {"apiVersion": hvop.GV, "kind": "Hypervisor", "metadata": {"name": "srv-1", "generation": 1},
            "spec": spec or {"lifecycleEnabled": True}, "status": status}


def test_ready_condition_as_upstream_computes_it():
    assert hvop.ready_condition(hv({"lifecycleEnabled": False})) == (
        "False", "Onboarding", "Onboarding not started: lifecycle management is disabled")
    assert hvop.ready_condition(hv()) == ("False", "Onboarding", hvop.NOT_REGISTERED)
    testing = {"type": "Onboarding", "status": "True", "reason": "Testing", "message": "Running onboarding tests"}
    assert hvop.ready_condition(hv(conditions=[testing])) == (
        "False", "Onboarding", "Onboarding in progress: Running onboarding tests")
    done = {"type": "Onboarding", "status": "False", "reason": "Succeeded", "message": "Onboarding completed"}
    assert hvop.ready_condition(hv(conditions=[done])) == ("True", "Ready", "Hypervisor is ready")
    ready = hv(conditions=[done, {"type": "Ready", "status": "True", "reason": "Ready", "message": "Hypervisor is ready",
                                  "lastTransitionTime": "2026-01-01T00:00:00Z"}])
    assert evaluate(ready).ready
    # Maintenance comes before the onboarding verdict; an onboarding in progress before maintenance.
    assert hvop.ready_condition(hv({"lifecycleEnabled": True, "maintenance": "ha"}, conditions=[done])) == (
        "False", "Maintenance", "Hypervisor is in maintenance mode")
    evicting = {"type": "Evicting", "status": "True", "reason": "Running", "message": "Evicting"}
    assert hvop.ready_condition(hv({"maintenance": "manual"}, conditions=[done, evicting])) == (
        "False", "Evicting", "Hypervisor is disabled and evicting")
    assert hvop.ready_condition(hv({"maintenance": "manual"}, conditions=[done, dict(evicting, status="False")])) == (
        "False", "Evicted", "Hypervisor is disabled and evicted")
    assert hvop.ready_condition(hv({"maintenance": "ha"}, conditions=[testing]))[1] == "Onboarding"
    aborted = {"type": "Onboarding", "status": "False", "reason": "Aborted", "message": "Aborted due to x"}
    assert hvop.ready_condition(hv(conditions=[aborted])) == ("False", "Onboarding", "Onboarding was aborted")
    terminating = {"type": "Terminating", "status": "True"}
    assert hvop.ready_condition(hv(conditions=[done, terminating]))[1] == "Terminating"


class ControlPlaneKube:
    """The control-plane cluster as the stand-in reads it: ControlPlanes and their Nova CRs."""

    def __init__(self, planes, novas):
        self.planes, self.novas = planes, novas

    def list(self, url):
        assert url == hvop.CONTROL_PLANES
        return self.planes

    def get(self, url):
        return self.novas.get(url.rsplit("/namespaces/", 1)[1].split("/")[0])


def test_nova_compute_registers_only_with_a_ready_nova_serving_the_pool(monkeypatch):
    monkeypatch.setattr(hvop, "Kube", lambda cluster, manager: None)
    operator = hvop.HypervisorOperator(ctl=None, clusters=[], control_plane="cp")

    def nova(ready):
        return {"kind": "Nova", "metadata": {"name": "nova", "generation": 2}, "status": {
            "observedGeneration": 2, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    plane = {"metadata": {"name": "lab", "namespace": "openstack"},
             "spec": {"compute": {"hypervisorClusters": ["hv-pool-a"]}}}
    operator.control_plane = ControlPlaneKube([plane], {"openstack": nova(False)})
    assert not operator.nova_ready("hv-pool-a")  # Nova exists but is not ready: no registration yet
    operator.novas, operator.control_plane.novas = None, {"openstack": nova(True)}
    assert operator.nova_ready("hv-pool-a")
    assert not operator.nova_ready("hv-pool-b")  # no ControlPlane computes on that pool
    operator.novas, operator.control_plane = None, ControlPlaneKube([], {})
    assert not operator.nova_ready("hv-pool-a")  # no ControlPlane (phase 4 not run): nothing to register with


# ---------------------------------------------------------------------------
# The operator against an in-memory pool cluster (no delays)

class PoolKube:
    """Nodes and Hypervisors of one pool cluster; reads return copies, writes need the read's resourceVersion."""

    def __init__(self):
        self.objects = {}
        self.version = 0

    def _bump(self, obj):
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)

    def list(self, url):
        return [copy.deepcopy(o) for k, o in sorted(self.objects.items()) if k.rsplit("/", 1)[0] == url]

    def get(self, url):
        if url == hvop.HYPERVISORS:
            return {"items": self.list(url)}
        return copy.deepcopy(self.objects.get(url))

    def create(self, url, obj):
        key = url + "/" + obj["metadata"]["name"]
        if key in self.objects:
            return None
        obj = json.loads(json.dumps(obj))
        obj["metadata"].update(uid=str(uuid.uuid4()), generation=1)
        self._bump(obj)
        self.objects[key] = obj
        return copy.deepcopy(obj)

    def patch(self, url, obj, patch, subresource=None):
        have = self.objects.get(url)
        if have is None or have["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]:
            return None
        merge(have, {k: v for k, v in patch.items() if k != "metadata"})
        merge(have["metadata"], patch.get("metadata") or {})
        self._bump(have)
        return copy.deepcopy(have)

    def delete(self, url):
        return self.objects.pop(url, None)


class Running:
    """The hypervisor operator's Deployment is Available (deployments.Operators)."""

    @staticmethod
    def runs(operator):
        return True


class Ctl:
    def __init__(self):
        self.settings = type("Settings", (), {"get": lambda s: settings.StandinSettings({})})()
        self.timers = {}
        self.logs = []
        self.operators = {"hv-pool-a": Running()}

    def after(self, key, delay):
        self.timers.setdefault(key, 0)
        return True

    def done(self, key):
        self.timers.pop(key, None)

    def delay(self, name):
        return 0.0

    def log(self, message):
        self.logs.append(message)


POOL = "hv-pool-a"


def operator_with_node(monkeypatch, labels, annotations=None):
    monkeypatch.setattr(hvop, "Kube", lambda cluster, manager: PoolKube())
    cluster = type("Cluster", (), {"name": POOL})()
    operator = hvop.HypervisorOperator(Ctl(), [cluster], None)
    operator.nova_ready = lambda pool: True
    kube = operator.kubes[POOL]
    kube.create(hvop.NODES, {"metadata": {"name": "srv-1", "labels": dict({hvop.VIRT_DRIVER: "kvm"}, **labels),
                                          "annotations": annotations or {}},
                             "status": {"addresses": [{"type": "InternalIP", "address": "10.20.1.10"}]}})
    return operator, kube


def passes(operator, count=12):
    for unused in range(count):
        operator.reconcile()
    return operator.kubes[POOL].get(hvop.HYPERVISORS + "/srv-1")


def conditions_of(found):
    return dict((c["type"], (c["status"], c.get("reason"), c.get("message"))) for c in found["status"]["conditions"])


def set_spec(kube, **spec):
    url = hvop.HYPERVISORS + "/srv-1"
    assert kube.patch(url, kube.get(url), {"spec": spec})


def test_without_a_zone_label_onboarding_stays_initial_and_the_aggregates_fail(monkeypatch):
    operator, kube = operator_with_node(monkeypatch, {hvop.LIFECYCLE: "skip-tests"})
    found = passes(operator)
    conds = conditions_of(found)
    assert conds["Onboarding"] == ("True", "Initial", "Initial onboarding")
    assert conds["AggregatesUpdated"] == ("False", "Failed", "failed to apply aggregates: aggregates not found: []")
    assert conds["Ready"] == ("False", "Onboarding", "Onboarding in progress: Initial onboarding")
    assert "aggregates" not in found["status"] and found["status"]["hypervisorId"]
    assert operator.ctl.logs.count("Hypervisor hv-pool-a/srv-1: " + hvop.NO_ZONE) == 1
    # The zone arrives on the Node (the CCM), the Hypervisor follows; with HA off onboarding completes.
    node = kube.get(hvop.NODES + "/srv-1")
    kube.patch(hvop.NODES + "/srv-1", node, {"metadata": {"labels": {hvop.ZONE: "lab-1a"}}})
    set_spec(kube, highAvailability=False)
    found = passes(operator)
    conds = conditions_of(found)
    assert found["metadata"]["labels"][hvop.ZONE] == "lab-1a"
    assert conds["Onboarding"] == ("False", "Succeeded", "Onboarding completed")
    assert conds["Ready"] == ("True", "Ready", "Hypervisor is ready")
    assert conds["AggregatesUpdated"] == ("True", "Succeeded", "Aggregates from spec applied successfully")
    assert conds["TraitsUpdated"][0] == "True" and conds["HypervisorDisabled"][:2] == ("False", "Succeeded")
    assert "aggregates" not in found["status"]  # no spec aggregates: the test aggregates are gone again


def test_onboarding_passes_through_the_test_aggregates(monkeypatch):
    operator, kube = operator_with_node(monkeypatch, {hvop.LIFECYCLE: "skip-tests", hvop.ZONE: "lab-1a"},
                                        {hvop.AGGREGATES: "az-x"})
    seen = []
    for unused in range(8):
        operator.reconcile()
        found = kube.get(hvop.HYPERVISORS + "/srv-1")
        if (found.get("status") or {}).get("conditions"):
            conds = conditions_of(found)
            step = (conds.get("Onboarding", (None, None))[1], hvop.aggregate_names(found), conds["AggregatesUpdated"][1])
            if not seen or seen[-1] != step:
                seen.append(step)
    test = ["lab-1a", hvop.TEST_AGGREGATE]
    assert seen == [(None, ["az-x", "lab-1a"], "Succeeded"),   # registered: spec aggregates until onboarding starts
                    ("Initial", test, "TestAggregates"), ("Testing", test, "TestAggregates"),
                    ("Handover", test, "WaitingForTraits"), ("Handover", ["az-x", "lab-1a"], "Succeeded")]
    set_spec(kube, highAvailability=False)
    assert conditions_of(passes(operator))["Onboarding"][1] == "Succeeded"


def test_with_high_availability_onboarding_waits_at_handover_for_ha_enabled(monkeypatch):
    operator, kube = operator_with_node(monkeypatch, {hvop.LIFECYCLE: "skip-tests", hvop.ZONE: "lab-1a"})
    found = passes(operator)
    conds = conditions_of(found)
    assert found["spec"]["highAvailability"] is True
    assert conds["Onboarding"] == ("True", "Handover", "Waiting for other controllers to take over")
    assert conds["AggregatesUpdated"][0] == "True" and conds["TraitsUpdated"][0] == "True" and "HaEnabled" not in conds
    assert conds["Ready"] == ("False", "Onboarding", "Onboarding in progress: Waiting for other controllers to take over")
    # kvm-ha-service enables HA: onboarding completes.
    url = hvop.HYPERVISORS + "/srv-1"
    have = kube.get(url)
    ha = {"type": "HaEnabled", "status": "True", "reason": "Succeeded", "message": "HA enabled"}
    kube.patch(url, have, {"status": {"conditions": have["status"]["conditions"] + [ha]}}, "status")
    assert conditions_of(passes(operator))["Ready"] == ("True", "Ready", "Hypervisor is ready")


def test_maintenance_reports_not_ready_evicts_and_returns(monkeypatch):
    operator, kube = operator_with_node(monkeypatch, {hvop.LIFECYCLE: "skip-tests", hvop.ZONE: "lab-1a"})
    passes(operator, 1)
    set_spec(kube, highAvailability=False)
    assert conditions_of(passes(operator))["Ready"][0] == "True"
    set_spec(kube, maintenance="ha")
    assert conditions_of(passes(operator))["Ready"] == ("False", "Maintenance", "Hypervisor is in maintenance mode")
    set_spec(kube, maintenance="")
    assert conditions_of(passes(operator))["Ready"][0] == "True"
    set_spec(kube, maintenance="manual", maintenanceReason="firmware")
    operator.reconcile()
    found = kube.get(hvop.HYPERVISORS + "/srv-1")
    assert conditions_of(found)["Ready"] == ("False", "Evicting", "Hypervisor is disabled and evicting")
    assert conditions_of(found)["HypervisorDisabled"] == ("True", "Succeeded", "Hypervisor is disabled")
    # The Eviction, named after the Hypervisor and owned by it.
    eviction = kube.get(hvop.EVICTIONS + "/srv-1")
    assert eviction["spec"] == {"hypervisor": "srv-1", "reason": "openstack-hypervisor-operator maintenance"}
    assert eviction["metadata"]["ownerReferences"][0]["kind"] == "Hypervisor"
    assert eviction["metadata"]["labels"] == {hvop.ZONE: "lab-1a"}
    found = passes(operator)
    assert conditions_of(found)["Ready"] == ("False", "Evicted", "Hypervisor is disabled and evicted")
    assert found["status"]["evicted"] is True
    eviction = kube.get(hvop.EVICTIONS + "/srv-1")
    assert conditions_of(eviction)["Evicting"] == ("False", "Succeeded", "eviction completed successfully")
    assert eviction["status"]["outstandingInstances"] == [] and eviction["status"]["outstandingRamMb"] == 0
    set_spec(kube, maintenance="")
    found = passes(operator)
    assert conditions_of(found)["Ready"][0] == "True" and "Evicting" not in conditions_of(found)
    assert "evicted" not in found["status"]
    assert conditions_of(found)["HypervisorDisabled"] == ("False", "Succeeded", "Hypervisor is enabled")
    assert kube.get(hvop.EVICTIONS + "/srv-1") is None


def test_an_instance_in_error_holds_the_eviction_until_it_is_gone(monkeypatch):
    operator, kube = operator_with_node(monkeypatch, {hvop.LIFECYCLE: "skip-tests", hvop.ZONE: "lab-1a"})
    passes(operator, 1)
    set_spec(kube, highAvailability=False)
    passes(operator)
    failing = settings.StandinSettings({"failures": {"Hypervisor/%s/srv-1" % POOL: {"evict": "No valid host"}}})
    operator.ctl.settings = type("Settings", (), {"get": lambda s: failing})()
    set_spec(kube, maintenance="manual", maintenanceReason="firmware")
    found = passes(operator)
    assert conditions_of(found)["Ready"] == ("False", "Evicting", "Hypervisor is disabled and evicting")
    assert conditions_of(found)["Onboarding"][1] == "Succeeded"  # the eviction's failure is not onboarding's
    assert not found["status"].get("evicted")
    eviction = kube.get(hvop.EVICTIONS + "/srv-1")
    (instance,) = eviction["status"]["outstandingInstances"]
    assert conditions_of(eviction)["Evicting"] == ("True", "Running", "Running")
    assert conditions_of(eviction)["PreflightChecksSucceeded"][0] == "True"
    assert conditions_of(eviction)["MigratingInstance"] == (
        "False", "Failed", "Migration of instance %s failed: No valid host" % instance)
    assert eviction["status"]["hypervisorServiceId"] == found["status"]["hypervisorId"]
    # The instance's owner deletes it: it is gone, and the eviction completes.
    operator.ctl.settings = type("Settings", (), {"get": lambda s: settings.StandinSettings({})})()
    found = passes(operator)
    assert found["status"]["evicted"] is True
    eviction = kube.get(hvop.EVICTIONS + "/srv-1")
    assert conditions_of(eviction)["MigratingInstance"] == ("False", "Succeeded", "Instance %s is gone" % instance)
    assert conditions_of(eviction)["Evicting"] == ("False", "Succeeded", "eviction completed successfully")


def test_the_eviction_of_a_hypervisor_nova_never_registered_ends_at_once():
    hv = {"metadata": {"name": "srv-1", "uid": "u-1"}, "status": {"conditions": []}}
    eviction = {"metadata": {"name": "srv-1", "uid": "e-1", "resourceVersion": "1"},
                "status": {"conditions": [{"type": "Evicting", "status": "True", "reason": "Running"}]}}
    written = []
    operator = hvop.HypervisorOperator(Ctl(), [], None)
    operator.kubes[POOL] = type("K", (), {"patch": lambda s, url, obj, patch, sub: written.append(patch) or patch})()
    operator.evict(POOL, hv, eviction)
    assert conditions_of(written[0])["Evicting"] == (
        "False", "Succeeded", "eviction completed successfully due to expected case of no hypervisor")


def test_a_status_writer_other_than_kvm_ha_service_makes_the_hypervisor_foreign(monkeypatch):
    operator, kube = operator_with_node(monkeypatch, {hvop.LIFECYCLE: "skip-tests", hvop.ZONE: "lab-1a"})
    found = passes(operator, 2)

    def written_by(manager):
        return dict(found, metadata=dict(found["metadata"], managedFields=[
            {"manager": manager, "operation": "Update", "subresource": "status"}]))
    assert not hvop.loop.status_writers(written_by(hvop.HA_SERVICE)) - {hvop.MANAGER, hvop.HA_SERVICE}
    assert hvop.loop.status_writers(written_by("a-test")) - {hvop.MANAGER, hvop.HA_SERVICE}


def test_kvm_node_agent_installs_a_version_and_boots_into_it_under_reboot(monkeypatch):
    operator, kube = operator_with_node(monkeypatch, {hvop.LIFECYCLE: "skip-tests", hvop.ZONE: "lab-1a"})
    found = passes(operator)
    assert found["status"]["operatingSystem"]["version"] == hvop.LAB_OPERATING_SYSTEM["version"]
    set_spec(kube, version="1592.7")
    operator.reconcile()
    found = kube.get(hvop.HYPERVISORS + "/srv-1")
    assert found["status"]["updateStatus"]["inProgress"] is True
    assert conditions_of(found)["OperatingSystemUpdate"] == ("True", "Running", "Running systemd-sysupdate@1592.7.service")
    found = passes(operator)
    # Installed, not booted: without spec.reboot the running version stays.
    assert found["status"]["updateStatus"] == {"inProgress": False, "installed": "1592.7", "retry": 3}
    assert conditions_of(found)["OperatingSystemUpdate"] == ("False", "Completed", "Update to 1592.7 installed")
    assert found["status"]["operatingSystem"]["version"] == "1592.6"
    set_spec(kube, reboot=True)
    found = passes(operator)
    assert found["status"]["operatingSystem"]["version"] == "1592.7"
    assert found["status"]["operatingSystem"]["prettyVersion"] == "Garden Linux 1592.7"


def test_a_failing_update_stops_and_runs_again_once_the_failure_is_gone(monkeypatch):
    operator, kube = operator_with_node(monkeypatch, {hvop.LIFECYCLE: "skip-tests", hvop.ZONE: "lab-1a"})
    passes(operator, 1)
    set_spec(kube, highAvailability=False)
    passes(operator)
    failing = settings.StandinSettings({"failures": {"Hypervisor/%s/srv-1" % POOL: {"update": "sysupdate: no space"}}})
    operator.ctl.settings = type("Settings", (), {"get": lambda s: failing})()
    set_spec(kube, version="1592.7", reboot=True)
    found = passes(operator)
    assert conditions_of(found)["OperatingSystemUpdate"] == ("False", "Stopped", "sysupdate: no space")
    assert found["status"]["operatingSystem"]["version"] == "1592.6"
    assert conditions_of(found)["Ready"][0] == "True"  # the onboarding is not what failed
    operator.ctl.settings = type("Settings", (), {"get": lambda s: settings.StandinSettings({})})()
    assert passes(operator)["status"]["operatingSystem"]["version"] == "1592.7"

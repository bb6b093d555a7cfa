# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gardenlet stand-in's worker Nodes and its hypervisor-operator stand-in: their pure parts.

The lab tests (tests/integration/test_hypervisors.py) drive both against real API servers.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import hypervisor_operator as hvop, nodes  # noqa: E402  pylint: disable=wrong-import-position

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

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hypervisor_nodes against module_harness.FakeKube: the Nodes' labels, the pool's zone and spec.highAvailability.

The lab's tests/integration/test_hypervisors.py runs it against the hypervisor operator's stand-in.
"""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import hypervisors as hv
from ansible_collections.c5c3.cobaltcore.plugins.modules import hypervisor_nodes

from module_harness import kubeconfig, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

ZONE = "eu-de-1a"
ARGS = {"kubeconfig": kubeconfig(), "workers": 1, "zone": ZONE, "wait": False}


def pool(api, zone=ZONE, high_availability=True):
    api.kinds.update({("v1", "Node"): ("nodes", False), (hv.HYPERVISOR_API_VERSION, "Hypervisor"): ("hypervisors", False)})
    labels = {hv.WORKER_POOL_LABEL: "worker"}
    if zone:
        labels[hv.ZONE_LABEL] = zone
    api.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "srv-1", "labels": labels}})
    api.add({"apiVersion": hv.HYPERVISOR_API_VERSION, "kind": "Hypervisor", "metadata": {"name": "srv-1"},
             "spec": {"highAvailability": high_availability, "lifecycleEnabled": True},
             "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})


def hypervisor_writes(api, dry_run=None):
    return [c for c in api.calls if c[0] == "PATCH" and c[1] == "Hypervisor" and (dry_run is None or c[-1] == dry_run)]


def test_high_availability_off_is_applied_once_and_check_mode_writes_nothing(kube):
    pool(kube)
    result, unused = run_module(hypervisor_nodes.main, ARGS, check_mode=True, diff=True)
    assert result["changed"] and result["high_availability_changed"] == ["srv-1"]
    assert hypervisor_writes(kube) == [("PATCH", "Hypervisor", "srv-1", None, True)]
    assert kube.find(hv.HYPERVISOR_API_VERSION, "Hypervisor", "srv-1")["spec"]["highAvailability"] is True
    assert any("highAvailability" in str(d.get("after")) for d in result["diff"])
    kube.calls[:] = []
    result, unused = run_module(hypervisor_nodes.main, ARGS)
    assert result["changed"] and result["high_availability_changed"] == ["srv-1"]
    assert kube.find(hv.HYPERVISOR_API_VERSION, "Hypervisor", "srv-1")["spec"]["highAvailability"] is False
    assert result["hypervisors"][0]["high_availability"] is False and result["ready"], result["problems"]
    kube.calls[:] = []
    result, unused = run_module(hypervisor_nodes.main, ARGS)
    assert not result["changed"] and result["high_availability_changed"] == [] and hypervisor_writes(kube) == []


def test_a_region_with_high_availability_leaves_the_operators_default(kube):
    pool(kube)
    result, unused = run_module(hypervisor_nodes.main, dict(ARGS, high_availability=True))
    assert result["high_availability_changed"] == [] and hypervisor_writes(kube) == []


def test_a_node_outside_the_pools_zone_is_a_problem(kube):
    pool(kube, zone=None, high_availability=False)
    result, unused = run_module(hypervisor_nodes.main, ARGS)
    assert not result["ready"]
    assert result["problems"] == [
        "Node srv-1 has no label topology.kubernetes.io/zone, not the pool's zone eu-de-1a (the "
        "cloud-controller-manager copies it from the Server's label; the hypervisor operator onboards a Node only "
        "with it)"]


def test_without_a_zone_nothing_is_read_or_written(kube):
    pool(kube)
    result, unused = run_module(hypervisor_nodes.main, dict(ARGS, zone=""))
    assert result["failed"] and result["msg"].startswith("invalid input, nothing was changed: zone: '' is not a zone name")
    assert kube.calls == []

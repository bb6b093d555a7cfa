# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hypervisor_maintenance against a fake pool cluster whose Hypervisors another test thread plays."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import hypervisor_rollout as rollout
from ansible_collections.c5c3.cobaltcore.plugins.modules import hypervisor_maintenance

from module_harness import kube, kubeconfig, run_module  # noqa: F401  # pylint: disable=unused-import


@pytest.fixture
def pool(kube):
    kube.kinds[(rollout.API_VERSION, rollout.KIND)] = ("hypervisors", False)
    return kube


def hypervisor(kube, name="node-1", maintenance="", why=None, evicted=False, ready=True):
    spec = {"maintenance": maintenance}
    if why:
        spec["maintenanceReason"] = why
    conditions = [{"type": "Ready", "status": "True" if ready else "False", "reason": "Ready" if ready else "Evicted"}]
    status = {"conditions": conditions}
    if evicted:
        status["evicted"] = True
        conditions.append({"type": "Evicting", "status": "False", "reason": "Succeeded", "message": "Evicted"})
    kube.add({"apiVersion": rollout.API_VERSION, "kind": rollout.KIND, "metadata": {"name": name}, "spec": spec,
              "status": status})


def run(**args):
    return run_module(hypervisor_maintenance.main, dict(dict(node="node-1", wait_timeout=1, wait_sleep=1), **args,
                                                        kubeconfig=kubeconfig()))


def test_on_sets_manual_maintenance_and_waits_for_the_eviction(pool):
    hypervisor(pool)
    result, unused = run(state="on")
    # Nothing plays the operator here: the eviction never comes, and the module names the Node.
    assert result["failed"] and "Node node-1: not done within 1s (waiting until its instances are evicted)" in \
        result["msg"]
    spec = pool.find(rollout.API_VERSION, rollout.KIND, "node-1")["spec"]
    assert spec == {"maintenance": "manual", "maintenanceReason": "cobaltcore - maintenance"}
    hypervisor(pool, maintenance="manual", why="cobaltcore - maintenance", evicted=True, ready=False)
    result, unused = run(state="on")
    assert not result["changed"] and result["maintenance"] == "ours" and not result.get("failed")


def test_off_lifts_only_its_own_maintenance(pool):
    hypervisor(pool, maintenance="manual", why=rollout.reason("1592.7"), evicted=True, ready=False)
    result, unused = run(state="off")
    assert result["failed"] and "in maintenance for another reason (cobaltcore - operating system update to " \
        "1592.7)" in result["msg"]
    assert pool.find(rollout.API_VERSION, rollout.KIND, "node-1")["spec"]["maintenance"] == "manual"
    hypervisor(pool)
    result, unused = run(state="off")
    assert not result["changed"] and result["maintenance"] is None


def test_check_mode_writes_nothing_and_a_missing_node_is_not_found(pool):
    hypervisor(pool)
    result, unused = run_module(hypervisor_maintenance.main, dict(node="node-1", state="on", kubeconfig=kubeconfig()),
                                check_mode=True)
    assert result["changed"] and pool.find(rollout.API_VERSION, rollout.KIND, "node-1")["spec"]["maintenance"] == ""
    result, unused = run(node="node-9", state="on")
    assert result["found"] is False and not result["changed"]


def test_an_eviction_that_does_not_end_is_named_with_what_it_holds(pool):
    hypervisor(pool, maintenance="manual", why="cobaltcore - maintenance", ready=False)
    result, unused = run(state="on")
    # No Eviction kind served: the operator has not created one.
    assert result["failed"] and result["eviction"] == "the hypervisor operator has not created its Eviction"
    pool.kinds[(rollout.API_VERSION, "Eviction")] = ("evictions", False)
    failed = "Migration of instance i-1 failed: No valid host was found."
    pool.add({"apiVersion": rollout.API_VERSION, "kind": "Eviction", "metadata": {"name": "node-1"},
              "spec": {"hypervisor": "node-1", "reason": "openstack-hypervisor-operator maintenance"},
              "status": {"outstandingInstances": ["i-2", "i-1"], "conditions": [
                  {"type": "Evicting", "status": "True", "reason": "Running", "message": "Running"},
                  {"type": "PreflightChecksSucceeded", "status": "True", "reason": "Succeeded", "message": "ok"},
                  {"type": "MigratingInstance", "status": "False", "reason": "Failed", "message": failed}]}})
    result, unused = run(state="on")
    assert result["failed"] and result["eviction"] == "instances still on it: i-2, i-1; " + failed
    assert result["msg"].endswith("(waiting until its instances are evicted): " + result["eviction"]), result["msg"]

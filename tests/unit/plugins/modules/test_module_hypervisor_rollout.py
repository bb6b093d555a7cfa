# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""hypervisor_rollout: a pool of 3 updated with max_unavailable 1 never has two Nodes out at once; a Node that
stops its update stops the rollout naming it; a finished pool is changed=false; check mode writes nothing."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import hypervisor_rollout as rollout
from ansible_collections.c5c3.cobaltcore.plugins.modules import hypervisor_rollout

from module_harness import run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

OLD = "1592.6"
NEW = "1592.7"
ARGS = {"version": NEW, "max_unavailable": 1, "wait_timeout": 3, "wait_sleep": 1}


def hypervisor(name, version=OLD, **spec):
    return {"apiVersion": rollout.API_VERSION, "kind": rollout.KIND, "metadata": {"name": name},
            "spec": spec, "status": {"operatingSystem": {"version": version},
                                     "conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}]}}


def set_condition(hv, ctype, status, reason, message=""):
    conditions = [c for c in hv["status"]["conditions"] if c["type"] != ctype]
    hv["status"]["conditions"] = conditions + [{"type": ctype, "status": status, "reason": reason, "message": message,
                                                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]


@pytest.fixture
def pool(kube, monkeypatch):  # noqa: F811
    kube.kinds[(rollout.API_VERSION, rollout.KIND)] = ("hypervisors", False)
    for name in ("hv-1", "hv-2", "hv-3"):
        kube.add(hypervisor(name))
    kube.out_seen, kube.stop_update = [], set()
    real = hypervisor_rollout.HypervisorRolloutModule.hypervisors

    def operator_and_agent(self):
        """Each look: the operator evicts a Node in maintenance, kvm-node-agent installs and reboots, Ready follows."""
        for (unused_v, kind, unused_ns, name), hv in kube.objects.items():
            if kind != rollout.KIND:
                continue
            spec, status = hv["spec"], hv["status"]
            if spec.get("maintenance") and not status.get("evicted"):
                status["evicted"] = True
                set_condition(hv, "Evicting", "False", "Succeeded", "Evicted")
                set_condition(hv, "Ready", "False", "Evicted", "Hypervisor is disabled and evicted")
            elif spec.get("version") and spec["version"] != status["operatingSystem"]["version"]:
                if name in kube.stop_update:
                    set_condition(hv, "OperatingSystemUpdate", "False", "Stopped", "systemd-sysupdate failed")
                else:
                    status["operatingSystem"]["version"] = spec["version"]
                    set_condition(hv, "OperatingSystemUpdate", "False", "Completed", "")
            elif not spec.get("maintenance") and status.get("evicted"):
                status.pop("evicted")
                set_condition(hv, "Ready", "True", "Ready", "Hypervisor is ready")
        kube.out_seen.append(sorted(n for (v, k, ns, n), hv in kube.objects.items()
                                    if k == rollout.KIND and hv["spec"].get("maintenance")))
        return real(self)
    monkeypatch.setattr(hypervisor_rollout.HypervisorRolloutModule, "hypervisors", operator_and_agent)
    return kube


def writes(kube):  # noqa: F811
    return [c for c in kube.calls if c[0] == "PATCH" and not c[4]]


def test_check_mode_plans_and_writes_nothing(pool):
    result, unused = run_module(hypervisor_rollout.main, ARGS, check_mode=True)
    assert result["changed"] and not writes(pool) and result["batches"] == []
    assert [(n["name"], n["from"], n["stage"]) for n in result["nodes"]] == [
        ("hv-1", OLD, "to update"), ("hv-2", OLD, "to update"), ("hv-3", OLD, "to update")]


def test_one_node_at_a_time_then_nothing_to_do(pool):
    result, unused = run_module(hypervisor_rollout.main, ARGS)
    assert result["changed"] and result["batches"] == [["hv-1"], ["hv-2"], ["hv-3"]]
    assert max(len(out) for out in pool.out_seen) == 1 and result["max_out"] == 1
    for name in ("hv-1", "hv-2", "hv-3"):
        hv = pool.find(rollout.API_VERSION, rollout.KIND, name)
        assert hv["status"]["operatingSystem"]["version"] == NEW and not hv["spec"].get("maintenance")
        assert hv["spec"]["version"] == NEW and hv["spec"]["reboot"] is True
    pool.calls[:] = []
    again, unused = run_module(hypervisor_rollout.main, ARGS)
    assert not again["changed"] and not writes(pool)


def test_a_percentage_takes_that_share_of_the_pool_out(pool):
    result, unused = run_module(hypervisor_rollout.main, dict(ARGS, max_unavailable="67%"))
    assert result["batches"] == [["hv-1", "hv-2"], ["hv-3"]] and result["max_out"] == 2


def test_a_stopped_update_stops_the_rollout_naming_the_node(pool):
    pool.stop_update.add("hv-2")
    result, unused = run_module(hypervisor_rollout.main, ARGS)
    assert result["failed"] and "hv-2: OperatingSystemUpdate Stopped: systemd-sysupdate failed" in result["msg"]
    assert pool.find(rollout.API_VERSION, rollout.KIND, "hv-2")["spec"]["maintenance"] == "manual"
    assert pool.find(rollout.API_VERSION, rollout.KIND, "hv-3")["status"]["operatingSystem"]["version"] == OLD
    assert not pool.find(rollout.API_VERSION, rollout.KIND, "hv-3")["spec"].get("maintenance")
    # Fixed: the next run resumes with hv-2, then hv-3.
    pool.stop_update.clear()
    result, unused = run_module(hypervisor_rollout.main, ARGS)
    assert result["batches"] == [["hv-2"], ["hv-3"]]


def test_nodes_in_maintenance_for_other_reasons_count(pool):
    hv = pool.find(rollout.API_VERSION, rollout.KIND, "hv-1")
    hv["spec"].update(maintenance="manual", maintenanceReason="broken DIMM")
    result, unused = run_module(hypervisor_rollout.main, ARGS)
    assert result["failed"] and "leaves no Node to take out: hv-1" in result["msg"] and not writes(pool)
    result, unused = run_module(hypervisor_rollout.main, dict(ARGS, max_unavailable=2))
    assert result["batches"] == [["hv-2"], ["hv-3"]] and result["max_out"] == 2


def test_a_bad_max_unavailable_is_refused(pool):
    result, unused = run_module(hypervisor_rollout.main, dict(ARGS, max_unavailable="0"))
    assert result["failed"] and "max_unavailable" in result["msg"] and not writes(pool)


def test_what_an_eviction_holds():
    def eviction(*conditions, **status):
        return {"status": dict(status, conditions=[dict(zip(("type", "status", "reason", "message"), c))
                                                   for c in conditions])}
    assert rollout.eviction_holds(None) == "the hypervisor operator has not created its Eviction"
    assert rollout.eviction_holds(eviction(("Evicting", "False", "Succeeded", "done"))) is None
    assert rollout.eviction_holds(eviction(("Evicting", "True", "Running", "Running"))) == \
        "the Eviction's preflight: not run yet"
    assert rollout.eviction_holds(eviction(("Evicting", "True", "Running", "Running"), (
        "PreflightChecksSucceeded", "False", "Failed", "hypervisor not disabled"))) == \
        "the Eviction's preflight: hypervisor not disabled"
    running = eviction(("Evicting", "True", "Running", "Running"), ("PreflightChecksSucceeded", "True", "Succeeded", ""),
                       ("MigratingInstance", "False", "Succeeded", "Migration of instance i-3 finished"),
                       outstandingInstances=["i-1"])
    assert rollout.eviction_holds(running) == "instances still on it: i-1"

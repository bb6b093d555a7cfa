# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gardener_kubernetes_version: each step is written only once the step before it is reconciled, in the seed's order;
a failed reconcile stops the move naming the Shoot; a stopped move resumes; check mode writes nothing."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import wait
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
from ansible_collections.c5c3.cobaltcore.plugins.modules import gardener_kubernetes_version

from module_harness import run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

NAMESPACE = "garden-cc"
SHOOTS = [{"name": "cp", "stage": "control plane"}, {"name": "hv-a", "stage": "hypervisor pool"},
          {"name": "st-a", "stage": "storage pool"}, {"name": "hv-b", "stage": "hypervisor pool"}]
ARGS = {"namespace": NAMESPACE, "shoots": SHOOTS, "version": "1.35", "minor_steps": 2, "wait_timeout": 3,
        "wait_sleep": 1}
PROFILE = {"apiVersion": gardener.API_VERSION, "kind": "CloudProfile", "metadata": {"name": "metal"},
           "spec": {"kubernetes": {"versions": [{"version": "1.35.1"}, {"version": "1.34.3"}, {"version": "1.33.4"}]}}}


def shoot(name, version="1.33.4"):
    return {"apiVersion": gardener.API_VERSION, "kind": "Shoot",
            "metadata": {"name": name, "namespace": NAMESPACE, "generation": 1},
            "spec": {"cloudProfile": {"kind": "CloudProfile", "name": "metal"}, "kubernetes": {"version": version}},
            "status": {"observedGeneration": 1, "conditions": [{"type": "APIServerAvailable", "status": "True"}],
                       "lastOperation": {"type": "Reconcile", "state": "Succeeded", "progress": 100}}}


@pytest.fixture
def garden(kube, monkeypatch):  # noqa: F811
    kube.kinds[(gardener.API_VERSION, "Shoot")] = ("shoots", True)
    kube.kinds[(gardener.API_VERSION, "CloudProfile")] = ("cloudprofiles", False)
    kube.add(PROFILE)
    for entry in SHOOTS:
        kube.add(shoot(entry["name"]))
    kube.reconciled, kube.fail_shoot, kube.seen = [], None, {}
    real = wait.Waiter.check

    def gardenlet(self, refs):
        """Each look: a Shoot whose version changed is reconciled (or fails), one look after the write."""
        for key, obj in kube.objects.items():
            if key[1] != "Shoot":
                continue
            version = obj["spec"]["kubernetes"]["version"]
            name = obj["metadata"]["name"]
            if kube.seen.setdefault(name, "1.33.4") == version:
                continue
            if obj["status"]["lastOperation"]["state"] == "Succeeded":  # the write: a new generation, Processing
                obj["metadata"]["generation"] += 1
                obj["status"].update(observedGeneration=obj["metadata"]["generation"],
                                     lastOperation={"type": "Reconcile", "state": "Processing", "progress": 54})
            elif name == kube.fail_shoot:
                obj["status"]["lastOperation"] = {"type": "Reconcile", "state": "Failed", "progress": 81,
                                                  "description": "workers did not roll"}
                obj["status"]["lastErrors"] = [{"description": "machine hv-b-1 did not join"}]
            else:
                obj["status"]["lastOperation"] = {"type": "Reconcile", "state": "Succeeded", "progress": 100}
                obj["status"]["conditions"] = [{"type": "APIServerAvailable", "status": "True"}]
                kube.seen[name] = version
                kube.reconciled.append((name, version))
                kube.calls.append(("RECONCILED", "Shoot", name, NAMESPACE, False))
        return real(self, refs)
    monkeypatch.setattr(wait.Waiter, "check", gardenlet)
    return kube


def writes(kube):  # noqa: F811
    return [(c[2], ) for c in kube.calls if c[0] == "PATCH" and not c[4]]


def test_check_mode_plans_the_steps_and_writes_nothing(garden):
    result, unused = run_module(gardener_kubernetes_version.main, ARGS, check_mode=True, diff=True)
    assert result["changed"] and writes(garden) == []
    assert result["plan_lines"][:4] == [
        "step 1: Kubernetes 1.34 on the control plane: cp (1.33.4 -> 1.34.3)",
        "step 2: Kubernetes 1.34 on the storage pool: st-a (1.33.4 -> 1.34.3)",
        "step 3: Kubernetes 1.34 on the hypervisor pool: hv-a (1.33.4 -> 1.34.3)",
        "step 4: Kubernetes 1.34 on the hypervisor pool: hv-b (1.33.4 -> 1.34.3)"]
    assert len(result["plan_lines"]) == 8
    assert result["diff"]["before"]["hv-b"] == {"kubernetes": "1.33.4"}
    assert result["diff"]["after"]["hv-b"] == {"kubernetes": "1.35.1"}


def test_each_step_waits_for_the_one_before_in_the_seeds_order_then_nothing_to_do(garden):
    result, unused = run_module(gardener_kubernetes_version.main, ARGS)
    assert result["changed"] and not result.get("failed"), result.get("msg")
    order = ["cp", "st-a", "hv-a", "hv-b"]
    assert garden.reconciled == [(n, "1.34.3") for n in order] + [(n, "1.35.1") for n in order]
    # Only a reconciled step lets the next be written.
    timeline = [(c[0], c[2]) for c in garden.calls if c[0] == "RECONCILED" or (c[0] == "PATCH" and not c[4])]
    assert timeline == [(event, n) for n in order for event in ("PATCH", "RECONCILED")] * 2
    result, unused = run_module(gardener_kubernetes_version.main, ARGS)
    assert not result["changed"] and result["plan_lines"] == ["every Shoot runs Kubernetes 1.35: nothing to move"]


def test_a_failed_reconcile_stops_the_move_and_the_next_run_refuses_until_it_is_fixed(garden):
    garden.fail_shoot = "hv-b"
    result, unused = run_module(gardener_kubernetes_version.main, ARGS)
    assert result["failed"]
    assert result["msg"].startswith("step 4: Kubernetes 1.34 on the hypervisor pool: hv-b (1.33.4 -> 1.34.3) failed, "
                                    "later steps were not written")
    assert "machine hv-b-1 did not join" in result["msg"]
    assert garden.reconciled == [("cp", "1.34.3"), ("st-a", "1.34.3"), ("hv-a", "1.34.3")]
    result, unused = run_module(gardener_kubernetes_version.main, ARGS)
    assert result["failed"] and "Shoot hv-b status.lastOperation" in result["msg"] and "fix it before" in result["msg"]


@pytest.mark.parametrize("conditions", ["Progressing", "True"], ids=["care-saw-it", "care-not-yet"])
def test_a_stopped_move_waits_for_the_shoot_it_left_reconciling_then_goes_on(garden, conditions):
    # A run killed after writing st-a's step: st-a reconciles, nothing else moved yet.
    for name in ("cp",):
        garden.find(gardener.API_VERSION, "Shoot", name, NAMESPACE)["spec"]["kubernetes"]["version"] = "1.34.3"
        garden.seen[name] = "1.34.3"
    obj = garden.find(gardener.API_VERSION, "Shoot", "st-a", NAMESPACE)
    obj["spec"]["kubernetes"]["version"] = "1.34.3"
    obj["metadata"]["generation"] = obj["status"]["observedGeneration"] = 2
    obj["status"]["lastOperation"] = {"type": "Reconcile", "state": "Processing", "progress": 27}
    # Mid-step: gardenlet set observedGeneration when the reconcile started; its care controller reports the rolled
    # control plane Progressing only once it looked, so until then the reconcile looks periodic but for the write.
    obj["status"]["conditions"] = [{"type": "APIServerAvailable", "status": conditions}]
    obj["metadata"]["managedFields"] = [{"manager": "c5c3.cobaltcore.kubernetes-upgrade", "operation": "Apply",
                                         "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 30))}]
    result, unused = run_module(gardener_kubernetes_version.main, dict(ARGS, version="1.34"))
    assert not result.get("failed"), result.get("msg")
    assert garden.reconciled == [("st-a", "1.34.3"), ("hv-a", "1.34.3"), ("hv-b", "1.34.3")]
    assert writes(garden) == [("hv-a",), ("hv-b",)]
    # hv-a's step is written only once st-a's is reconciled.
    timeline = [(c[0], c[2]) for c in garden.calls if c[0] == "RECONCILED" or (c[0] == "PATCH" and not c[4])]
    assert timeline == [("RECONCILED", "st-a"), ("PATCH", "hv-a"), ("RECONCILED", "hv-a"), ("PATCH", "hv-b"),
                        ("RECONCILED", "hv-b")]

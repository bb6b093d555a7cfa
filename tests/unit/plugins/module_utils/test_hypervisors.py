# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""region/hypervisors: a hypervisor pool's Node labels and the verdict on its Hypervisors (engine verdicts)."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import hypervisors as hv

PARAMS = {"workers": 2, "worker_pool": "worker", "labels": {"tier": "standard"}, "virt_driver": "kvm",
          "lifecycle": "skip-tests", "zone": "eu-de-1a", "high_availability": False, "timeout": 600, "sleep": 5}


def node(name, labels=None, address="10.250.3.10", pool="worker"):
    return {"metadata": {"name": name, "labels": dict({hv.WORKER_POOL_LABEL: pool}, **(labels or {}))},
            "status": {"addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}]}}


def hypervisor(name, ready=True, reason=None, message=None):
    conds = [{"type": "Ready", "status": "True" if ready else "False", "reason": reason or ("Ready" if ready else "Onboarding"),
              "message": message or ("Hypervisor is ready" if ready else "Onboarding in progress: Initial onboarding"),
              "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    return {"apiVersion": hv.HYPERVISOR_API_VERSION, "kind": "Hypervisor",
            "metadata": {"name": name, "generation": 1}, "status": {"conditions": conds}}


def verdict(obj):
    return evaluate(obj).as_dict()


def test_valid_input_passes():
    hv.validate(PARAMS)


def test_every_bad_field_is_named_in_one_error():
    bad = dict(PARAMS, workers=-1, worker_pool="bad pool", virt_driver="", lifecycle="sometimes",
               labels={"bad key!": "x", "tier": "bad value!", hv.ROLE_LABEL: "", hv.ZONE_LABEL: "a"}, timeout=-5,
               zone="", high_availability="yes")
    with pytest.raises(InputError) as err:
        hv.validate(bad)
    text = str(err.value)
    for field in ("workers", "worker_pool", "virt_driver", "lifecycle", "'bad key!'", "labels.tier",
                  "labels.%s: is set by the module itself" % hv.ROLE_LABEL, "timeout",
                  "zone: '' is not a zone name: the pool's zone (cobaltcore_pool.zone) is required",
                  "labels.%s: is the cloud-controller-manager's" % hv.ZONE_LABEL, "high_availability: must be a boolean"):
        assert field in text, field


def test_wanted_labels_per_lifecycle():
    wanted = hv.wanted_labels({"tier": "standard"})
    assert wanted == {"tier": "standard", hv.ROLE_LABEL: "", hv.VIRT_DRIVER_LABEL: "kvm",
                      hv.LIFECYCLE_LABEL: "skip-tests"}
    assert hv.wanted_labels({}, lifecycle="enabled")[hv.LIFECYCLE_LABEL] == "true"
    assert hv.LIFECYCLE_LABEL not in hv.wanted_labels({}, lifecycle="disabled")


def test_label_changes_and_manifest():
    wanted = hv.wanted_labels({"tier": "standard"})
    n = node("srv-1", {"tier": "premium", hv.ROLE_LABEL: ""})
    assert hv.label_changes(n, wanted) == {
        hv.LIFECYCLE_LABEL: {"from": None, "to": "skip-tests"}, hv.VIRT_DRIVER_LABEL: {"from": None, "to": "kvm"},
        "tier": {"from": "premium", "to": "standard"}}
    assert hv.label_changes(node("srv-1", wanted), wanted) == {}
    assert hv.node_manifest("srv-1", wanted) == {"apiVersion": "v1", "kind": "Node",
                                                 "metadata": {"name": "srv-1", "labels": wanted}}


def test_pool_nodes_only_of_the_worker_pool():
    nodes = [node("b"), node("a"), node("c", pool="other")]
    assert [n["metadata"]["name"] for n in hv.pool_nodes(nodes, "worker")] == ["a", "b"]


def test_complete_pool_is_ready():
    report = hv.judge([node("a"), node("b")], [hypervisor("a"), hypervisor("b")], 2, verdict)
    assert report["ready"] and not report["problems"]
    found = [(h["name"], h["ready"], h["reason"]) for h in report["hypervisors"]]
    assert found == [("a", True, "Ready"), ("b", True, "Ready")]


def test_missing_extra_and_not_ready_are_all_reported():
    report = hv.judge([node("a"), node("b")], [hypervisor("a", ready=False), hypervisor("gone")], 3, verdict)
    assert not report["ready"] and not report["terminal"]
    assert report["missing_nodes"] == 1
    assert report["missing"] == ["b"] and report["extra"] == ["gone"]
    assert report["not_ready"][0]["name"] == "a" and report["not_ready"][0]["reason"] == "Onboarding"
    assert report["problems"] == [
        "1 of 3 Nodes missing (worker pool has 2)", "no Hypervisor for Node b",
        "Hypervisor without a Node of the pool: gone",
        "Hypervisor a not ready: Onboarding Onboarding in progress: Initial onboarding"]


def test_more_nodes_than_workers_wait_for_the_scale_in_and_are_no_problem():
    report = hv.judge([node("a"), node("b")], [hypervisor("a"), hypervisor("b")], 1, verdict)
    assert report["ready"] and report["problems"] == [] and report["extra_nodes"] == 1


def test_a_deleted_hypervisor_is_terminal():
    gone = hypervisor("a")
    gone["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert hv.judge([node("a")], [gone], 1, verdict)["terminal"]


def onboarding(reason, labels=None, spec=None, **conditions):
    conds = [{"type": "Onboarding", "status": "True", "reason": reason, "message": "..."},
             {"type": "Ready", "status": "False", "reason": "Onboarding", "message": "Onboarding in progress: ...",
              "lastTransitionTime": "2026-01-01T00:00:00Z"}]
    conds += [dict(c, type=t) for t, c in conditions.items()]
    return {"apiVersion": hv.HYPERVISOR_API_VERSION, "kind": "Hypervisor",
            "metadata": {"name": "a", "labels": labels or {}}, "spec": spec or {}, "status": {"conditions": conds}}


def test_what_onboarding_waits_for_is_named():
    zoned = {hv.ZONE_LABEL: "eu-de-1a"}
    assert hv.waiting_for(onboarding("Initial")) == "the label topology.kubernetes.io/zone (its Node has none)"
    failed = {"status": "False", "reason": "Failed", "message": "failed to apply aggregates: aggregates not found: [x]"}
    assert hv.waiting_for(onboarding("Initial", zoned, AggregatesUpdated=failed)) == (
        "its aggregates in Nova (failed to apply aggregates: aggregates not found: [x])")
    true = {"status": "True"}
    assert hv.waiting_for(onboarding("Handover", zoned, {"highAvailability": True}, AggregatesUpdated=true,
                                     TraitsUpdated=true)) == "HaEnabled (set by kvm-ha-service under spec.highAvailability)"
    assert hv.waiting_for(onboarding("Handover", zoned, {"highAvailability": False}, AggregatesUpdated=true)) == \
        "TraitsUpdated"
    assert hv.waiting_for(onboarding("Testing", zoned)) is None
    report = hv.judge([node("a", zoned)], [onboarding("Handover", zoned, {"highAvailability": True})], 1, verdict,
                      "eu-de-1a")
    assert report["problems"] == ["Hypervisor a not ready: Onboarding Onboarding in progress: ... (waiting for "
                                  "TraitsUpdated, AggregatesUpdated, HaEnabled (set by kvm-ha-service under "
                                  "spec.highAvailability))"]
    assert report["hypervisors"][0]["high_availability"] is True


def test_every_node_must_be_in_the_pools_zone():
    nodes = [node("a", {hv.ZONE_LABEL: "eu-de-1a"}), node("b", {hv.ZONE_LABEL: "eu-de-1b"}), node("c")]
    report = hv.judge(nodes, [hypervisor("a"), hypervisor("b"), hypervisor("c")], 3, verdict, "eu-de-1a")
    assert not report["ready"] and not report["terminal"]
    assert report["problems"] == [
        "Node b is in zone eu-de-1b, not the pool's zone eu-de-1a (the cloud-controller-manager copies it from the "
        "Server's label; the hypervisor operator onboards a Node only with it)",
        "Node c has no label topology.kubernetes.io/zone, not the pool's zone eu-de-1a (the cloud-controller-manager "
        "copies it from the Server's label; the hypervisor operator onboards a Node only with it)"]
    assert hv.judge(nodes[:1], [hypervisor("a")], 1, verdict, "eu-de-1a")["ready"]


def test_high_availability_is_applied_to_the_pools_hypervisors_that_differ():
    def with_ha(name, value):
        found = hypervisor(name)
        found["spec"] = {"highAvailability": value}
        return found
    found = [with_ha("a", True), with_ha("b", False), with_ha("other", True), hypervisor("c")]
    # c has no spec.highAvailability: the CRD's default, true.
    assert hv.high_availability_changes(found, {"a", "b", "c"}, False) == ["a", "c"]
    assert hv.high_availability_changes(found, {"a", "b", "c"}, True) == ["b"]
    assert hv.high_availability_manifest("a", False) == {
        "apiVersion": "kvm.cloud.sap/v1", "kind": "Hypervisor", "metadata": {"name": "a"},
        "spec": {"highAvailability": False}}

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The claims' CRD (from the XRD schema) and the Synced/Ready status phase 7 writes on claims."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.openapi_schema import validate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import claim_schema, claim_status
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import validate_claims
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import region_control_plane

REGION = {"name": "lab", "control_planes": ["lab-control-plane"], "hypervisor_pools": ["hv-pool-a"],
          "storage_pools": ["st-pool-a"]}


def claim(name, namespace="tenant-x", **spec):
    body = {"region": "lab", "size": "small", "hypervisorClusters": ["hv-pool-a"], "storageClusters": ["st-pool-a"]}
    body.update(spec)
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "OpenStackCluster",
            "metadata": {"name": name, "namespace": namespace}, "spec": body}


def ready_report(name, through="infrastructure"):
    return {"namespace": "openstack-" + name, "name": name, "through": through, "ready": True, "failed": False,
            "phases": [], "blocking": None, "waiting": [], "first_not_ready": None}


def blocked_report(name, failed=False):
    """The report of a tenant ControlPlane the operator has made nothing for yet (the engine's own rules)."""
    cp = region_control_plane({"name": "lab"}, ["keystone", "glance"])
    cp["metadata"].update(name=name, namespace="openstack-" + name, uid="uid-" + name)
    report = health.build_report(cp, {}, evaluate, through="identity")
    if failed:
        report["failed"] = True
        report["phases"][0]["state"] = health.FAILED
    return report


def by_type(status):
    return dict((c["type"], c) for c in status["conditions"] + status["initial_conditions"])


# -- the CRD -------------------------------------------------------------------

def test_the_crd_is_the_xrds_schema_with_a_status_subresource_and_columns():
    crd = claim_schema.crd()
    assert crd["metadata"]["name"] == "openstackclusters.c5c3.io"
    spec = crd["spec"]
    assert (spec["group"], spec["scope"], spec["names"]["kind"], spec["names"]["plural"]) == (
        "c5c3.io", "Namespaced", "OpenStackCluster", "openstackclusters")
    version, = spec["versions"]
    assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}
    schema = version["schema"]["openAPIV3Schema"]
    # The XRD's, not the stricter one: the API server admits what Crossplane would, the rest is reported in status.
    assert schema["properties"]["spec"] == claim_schema.XRD_SPEC_SCHEMA
    assert schema["properties"]["spec"] != claim_schema.SPEC_SCHEMA
    assert [c["name"] for c in version["additionalPrinterColumns"]] == ["REGION", "SIZE", "SYNCED", "READY", "AGE"]
    assert crd == claim_schema.crd() and crd is not claim_schema.crd()  # a fresh copy each time


def test_the_crd_schema_is_structural():
    def walk(node, path):
        assert "type" in node, path
        for key, child in (node.get("properties") or {}).items():
            walk(child, path + "." + key)
        if "items" in node:
            walk(node["items"], path + "[]")
    walk(claim_schema.crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"], "")


def test_the_crd_schema_admits_a_claim_with_status_and_refuses_a_bad_size():
    schema = claim_schema.crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    good = claim("a")
    del good["metadata"]  # the API server's own
    good["status"] = {"conditions": [{"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
                                      "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}]}
    assert validate(schema, good, "", None) == []
    bad = claim("a", size="huge")
    del bad["metadata"]
    assert validate(schema, bad, "", None) == [
        "spec.size: must be one of small, medium, large, xlarge, got 'huge'"]


# -- which problems belong to which claim -----------------------------------------

def test_problems_are_split_by_claim_even_when_one_name_prefixes_another():
    claims = [claim("a"), claim("a-b")]
    found, other = claim_status.problems_by_claim(claims, [
        "tenant-x/a-b spec.size: bad", "tenant-x/a spec.region: bad", "region storage_pools: bad"])
    assert found == {"tenant-x/a": ["spec.region: bad"], "tenant-x/a-b": ["spec.size: bad"]}
    assert other == ["region storage_pools: bad"]


def test_valid_claims_keeps_those_without_own_problems():
    claims = [claim("a"), claim("b", size="huge"), claim("c")]
    problems = validate_claims(claims, REGION)
    assert [c["metadata"]["name"] for c in claim_status.valid_claims(claims, problems)] == ["a", "c"]


# -- statuses ----------------------------------------------------------------------

def test_before_applying_an_invalid_claim_gets_its_problems_and_the_valid_ones_are_held_back():
    claims = [claim("a"), claim("b", size="huge", storageClusters=["st-pool-x"])]
    problems = validate_claims(claims, REGION)
    out = claim_status.statuses(claims, problems, "lab", generations={"tenant-x/a": 1, "tenant-x/b": 4})
    a, b = out
    assert (b["name"], b["observed_generation"]) == ("b", 4)
    synced = by_type(b)["Synced"]
    assert (synced["status"], synced["reason"]) == ("False", "ReconcileError")
    assert "spec.size: must be one of" in synced["message"] and "spec.storageClusters[0]" in synced["message"]
    assert "tenant-x/b" not in synced["message"]
    # Ready is not known before applying: only set where the claim has none.
    assert b["initial_conditions"][0]["type"] == "Ready" and [c["type"] for c in b["conditions"]] == ["Synced"]
    held = by_type(a)["Synced"]
    assert (held["status"], held["reason"]) == ("False", "ReconcileError")
    assert "another claim" in held["message"] and "tenant-x/b" not in held["message"]


def test_before_applying_with_apply_valid_only_the_invalid_claims_get_a_status():
    claims = [claim("a"), claim("b", size="huge")]
    out = claim_status.statuses(claims, validate_claims(claims, REGION), "lab", apply_valid=True)
    assert [s["name"] for s in out] == ["b"]


def test_a_problem_of_the_region_holds_back_every_claim_even_with_apply_valid():
    claims = [claim("a")]
    out = claim_status.statuses(claims, ["region storage_pools: bad"], "lab", apply_valid=True)
    assert "region lab has problems" in by_type(out[0])["Synced"]["message"]


def test_after_applying_synced_and_ready():
    claims = [claim("a"), claim("b"), claim("c")]
    reports = [ready_report("a"), blocked_report("b"), blocked_report("c", failed=True)]
    out = dict((s["name"], by_type(s)) for s in claim_status.statuses(claims, [], "lab", reports=reports))
    assert out["a"]["Synced"] == {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}
    assert (out["a"]["Ready"]["status"], out["a"]["Ready"]["reason"]) == ("True", "Available")
    assert "through phase infrastructure" in out["a"]["Ready"]["message"]
    assert (out["b"]["Ready"]["status"], out["b"]["Ready"]["reason"]) == ("False", "Creating")
    assert out["b"]["Ready"]["message"] == health.summary(reports[1])
    assert out["b"]["Ready"]["message"].startswith("phase 1 infrastructure is not ready: ")
    assert (out["c"]["Ready"]["status"], out["c"]["Ready"]["reason"]) == ("False", "Unavailable")


def test_ready_needs_the_controlplane_and_the_ceph_objects():
    claims = [claim("a"), claim("b")]
    out = claim_status.statuses(claims, [], "lab", reports=[ready_report("a")], ceph_ready=False,
                                ceph_message="not waited for")
    a, b = [by_type(s)["Ready"] for s in out]
    assert (a["status"], a["message"]) == ("False", "not waited for")
    assert (b["status"], b["reason"], b["message"]) == ("False", "Creating", "the ControlPlane does not exist yet")
    missing = health.missing_report("openstack-a", "a")
    assert claim_status.ready_condition(missing)["message"] == "ControlPlane openstack-a/a does not exist"


def test_an_invalid_claim_applied_before_keeps_reporting_its_objects_readiness():
    claims = [claim("a", size="huge")]
    out = claim_status.statuses(claims, validate_claims(claims, REGION), "lab", reports=[ready_report("a")],
                                apply_valid=True)
    conditions = by_type(out[0])
    assert conditions["Synced"]["status"] == "False" and conditions["Ready"]["status"] == "True"


def test_long_messages_are_cut():
    cond = claim_status.synced_condition(["x" * 5000])
    assert len(cond["message"]) == claim_status.MESSAGE_LIMIT and cond["message"].endswith("...")


def test_claims_without_name_or_namespace_get_no_status():
    bad = claim("a")
    del bad["metadata"]["namespace"]
    assert claim_status.statuses([bad], validate_claims([bad], REGION), "lab") == []


# -- merging into what the claim has -----------------------------------------------------

SYNCED = {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}
READY = {"type": "Ready", "status": "False", "reason": "Creating", "message": "phase 1 ..."}


def test_merge_sets_times_and_generation_and_a_second_merge_changes_nothing():
    first = claim_status.merge_conditions(None, [SYNCED, READY], generation=2, now="T1")
    assert first == [dict(SYNCED, lastTransitionTime="T1", observedGeneration=2),
                     dict(READY, lastTransitionTime="T1", observedGeneration=2)]
    again = claim_status.merge_conditions(first, [SYNCED, READY], generation=2, now="T2")
    assert again == first
    assert claim_status.status_patch({"conditions": first}, again) is None


def test_merge_keeps_the_transition_time_while_the_status_stays():
    live = claim_status.merge_conditions(None, [SYNCED, READY], generation=2, now="T1")
    other_message = dict(READY, message="phase 2 ...")
    merged = claim_status.merge_conditions(live, [SYNCED, other_message], generation=3, now="T2")
    assert merged[1] == dict(other_message, lastTransitionTime="T1", observedGeneration=3)
    ready = dict(READY, status="True", reason="Available", message="ok")
    merged = claim_status.merge_conditions(live, [SYNCED, ready], generation=3, now="T2")
    assert merged[1]["lastTransitionTime"] == "T2" and merged[0]["lastTransitionTime"] == "T1"
    assert claim_status.status_patch({"conditions": live}, merged) == {"status": {"conditions": merged}}


def test_merge_keeps_other_conditions_and_sets_initial_ones_only_when_missing():
    live = [{"type": "Custom", "status": "True", "reason": "X", "lastTransitionTime": "T0"},
            dict(READY, status="True", reason="Available", lastTransitionTime="T0", observedGeneration=1)]
    initial = [dict(READY, message="nothing applied yet")]
    merged = claim_status.merge_conditions(copy.deepcopy(live), [SYNCED], initial, generation=2, now="T1")
    assert merged[:2] == live  # the Ready of objects applied earlier stays as it is
    assert merged[2] == dict(SYNCED, lastTransitionTime="T1", observedGeneration=2)
    fresh = claim_status.merge_conditions([], [SYNCED], initial, generation=2, now="T1")
    assert [c["type"] for c in fresh] == ["Synced", "Ready"] and fresh[1]["message"] == "nothing applied yet"

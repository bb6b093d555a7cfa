# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""openstack_cluster_claims (CRD and read) and openstack_cluster_claim_status against a fake management cluster."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import claim_schema
from ansible_collections.c5c3.cobaltcore.plugins.modules import openstack_cluster_claim_status, openstack_cluster_claims

from module_harness import kube  # noqa: F401  # pylint: disable=unused-import
from module_harness import run_module

CLAIMS = ("c5c3.io/v1alpha1", "OpenStackCluster")
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
SYNCED = {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}
READY = {"type": "Ready", "status": "False", "reason": "Creating", "message": "phase 1 infrastructure is not ready"}


def add_claim(api, name, namespace, region="lab", generation=1, **meta):
    metadata = {"name": name, "namespace": namespace, "generation": generation, "uid": "uid-" + name,
                "managedFields": [{"manager": "kubectl"}], "creationTimestamp": "2026-01-01T00:00:00Z"}
    metadata.update(meta)
    return api.add({"apiVersion": CLAIMS[0], "kind": CLAIMS[1], "metadata": metadata,
                    "spec": {"region": region, "size": "small", "hypervisorClusters": ["hv-pool-a"],
                             "storageClusters": ["st-pool-a"]},
                    "status": {"conditions": [dict(SYNCED, lastTransitionTime="T0")]}})


@pytest.fixture
def cluster(kube):
    kube.kinds[CLAIMS] = ("openstackclusters", True)
    kube.kinds[CRD] = ("customresourcedefinitions", False)

    def status_patch(method, path, body, query):
        parts = path.strip("/").split("/")  # apis/c5c3.io/v1alpha1/namespaces/<ns>/openstackclusters/<name>/status
        assert (method, parts[-1], parts[5]) == ("PATCH", "status", "openstackclusters")
        found = kube.find(CLAIMS[0], CLAIMS[1], parts[6], parts[4])
        if found is None:
            return 404, {"kind": "Status", "reason": "NotFound"}
        assert set(body) == {"status"}
        found["status"] = copy.deepcopy(body["status"])
        return 200, found
    kube.on_request = status_patch
    return kube


def read(**args):
    return run_module(openstack_cluster_claims.main, dict(dict(kubeconfig="m.yaml", region="lab"), **args))


def test_reads_the_regions_claims_in_the_directory_shape(cluster):
    add_claim(cluster, "b", "tenant-b", annotations={openstack_cluster_claims.LAST_APPLIED: "{}", "team": "b"})
    add_claim(cluster, "a", "tenant-a", generation=3, labels={"x": "y"})
    add_claim(cluster, "other", "tenant-a", region="eu-de-1")
    result, _text = read()
    assert not result["changed"] and result["served"]
    assert [c["metadata"] for c in result["claims"]] == [
        {"name": "a", "namespace": "tenant-a", "labels": {"x": "y"}},
        {"name": "b", "namespace": "tenant-b", "annotations": {"team": "b"}}]
    assert set(result["claims"][0]) == {"apiVersion", "kind", "metadata", "spec"}
    assert result["generations"] == {"tenant-a/a": 3, "tenant-b/b": 1}
    assert read(namespace="tenant-b")[0]["generations"] == {"tenant-b/b": 1}
    assert read(name="a")[0]["generations"] == {"tenant-a/a": 3}
    assert read(name="a", namespace="tenant-b")[0]["claims"] == []
    assert [c[0] for c in cluster.calls] == ["GET"] * len(cluster.calls)


def test_no_claims_where_the_kind_is_not_served(kube):
    result, _text = read()
    assert result["claims"] == [] and result["served"] is False and not result["changed"]


def test_installs_the_crd_only_when_it_differs(cluster):
    stale = claim_schema.crd()
    stale["spec"]["versions"][0]["additionalPrinterColumns"] = []
    stale["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    cluster.add(stale)
    result, _text = run_module(openstack_cluster_claims.main, dict(kubeconfig="m.yaml", region="lab", install_crd=True), check_mode=True)
    assert result["changed"] and result["crd"] == "configured"
    assert cluster.find(CRD[0], CRD[1], claim_schema.CRD_NAME)["spec"]["versions"][0]["additionalPrinterColumns"] == []
    result, _text = read(install_crd=True)
    assert result["changed"] and result["crd"] == "configured"
    live = cluster.find(CRD[0], CRD[1], claim_schema.CRD_NAME)
    assert live["spec"]["versions"][0]["additionalPrinterColumns"] == claim_schema.PRINTER_COLUMNS
    writes = len([c for c in cluster.calls if c[0] == "PATCH"])
    result, _text = read(install_crd=True)
    assert not result["changed"] and result["crd"] == "unchanged"
    assert len([c for c in cluster.calls if c[0] == "PATCH"]) == writes


def write(statuses, **extra):
    return run_module(openstack_cluster_claim_status.main, dict(kubeconfig="m.yaml", statuses=statuses), **extra)


def test_status_is_written_once_and_a_rerun_changes_nothing(cluster):
    add_claim(cluster, "a", "tenant-a", generation=2)
    entry = {"namespace": "tenant-a", "name": "a", "observed_generation": 2, "conditions": [SYNCED, READY]}
    result, _text = write([entry], check_mode=True)
    assert result["changed"] and result["results"][0]["result"] == "updated"
    assert cluster.find(CLAIMS[0], CLAIMS[1], "a", "tenant-a")["status"]["conditions"][0].get("observedGeneration") \
        is None
    result, _text = write([entry], diff=True)
    assert result["changed"] and result["diff"][0]["after"]["conditions"][1]["reason"] == "Creating"
    conditions = cluster.find(CLAIMS[0], CLAIMS[1], "a", "tenant-a")["status"]["conditions"]
    # Synced kept its status, so its transition time; Ready is new.
    assert conditions[0] == dict(SYNCED, lastTransitionTime="T0", observedGeneration=2)
    assert conditions[1]["lastTransitionTime"] != "T0" and conditions[1]["observedGeneration"] == 2
    patches = [c for c in cluster.calls if c[0] == "PATCH"]
    assert len(patches) == 1 and patches[0][1].endswith("/namespaces/tenant-a/openstackclusters/a/status")
    result, _text = write([entry])
    assert not result["changed"] and result["results"][0]["result"] == "unchanged"
    assert len([c for c in cluster.calls if c[0] == "PATCH"]) == 1


def test_a_claim_that_is_gone_is_absent(cluster):
    result, _text = write([{"namespace": "tenant-a", "name": "gone", "conditions": [SYNCED]}])
    assert not result["changed"] and result["results"] == [{"namespace": "tenant-a", "name": "gone",
                                                           "result": "absent"}]


def test_bad_conditions_fail_naming_each_before_any_write(cluster):
    add_claim(cluster, "a", "tenant-a")
    result, _text = write([{"namespace": "tenant-a", "name": "a",
                            "conditions": [{"type": "Synced", "status": "yes"}, {"status": "True", "reason": "R"}]}])
    assert result["failed"]
    for field in ("statuses[0].conditions[0].status", "statuses[0].conditions[0].reason",
                  "statuses[0].conditions[1].type"):
        assert field in result["msg"]
    assert [c for c in cluster.calls if c[0] == "PATCH"] == []


def test_no_statuses_make_no_request_and_an_unserved_kind_has_only_absent_claims(kube):
    result, _text = write([])
    assert result["results"] == [] and kube.calls == []
    result, _text = write([{"namespace": "tenant-a", "name": "a", "conditions": [SYNCED]}])
    assert not result["changed"] and [r["result"] for r in result["results"]] == ["absent"]


def test_another_owners_crd_is_used_as_it_is(cluster):
    theirs = claim_schema.crd()
    theirs["metadata"]["labels"] = {"lab.c5c3.io/source": "hand-written"}
    theirs["spec"]["versions"][0]["additionalPrinterColumns"] = []
    cluster.add(theirs)
    add_claim(cluster, "a", "tenant-a")
    result, _text = read(install_crd=True)
    assert not result["changed"] and result["crd"] == "foreign" and len(result["claims"]) == 1
    assert [c for c in cluster.calls if c[0] == "PATCH"] == []
    del theirs["spec"]["versions"][0]["subresources"]
    cluster.add(theirs)
    result, _text = read(install_crd=True)
    assert result["failed"] and "status subresource" in result["msg"]

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import tenants
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import load_claim_files
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError

REGION = {
    "name": "lab",
    "control_planes": ["lab-control-plane"],
    "hypervisor_pools": ["hv-pool-a", "hv-pool-b"],
    "storage_pools": ["st-pool-a", "st-pool-b", "st-pool-c"],
}
LAB_TENANTS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "inventories", "lab", "tenants")


def lab_claims():
    return load_claim_files(LAB_TENANTS)


def names(manifests):
    return [(m["kind"], m["metadata"]["name"]) for m in manifests]


def test_plan_batches_every_tenant_per_cluster():
    plan = tenants.plan(lab_claims(), REGION)
    assert [t["name"] for t in plan["tenants"]] == ["lab-tenant-a", "lab-tenant-b"]
    assert names(plan["control_plane"]["lab-control-plane"]) == [
        ("Namespace", "openstack-lab-tenant-a"), ("ControlPlane", "lab-tenant-a"),
        ("Namespace", "openstack-lab-tenant-b"), ("ControlPlane", "lab-tenant-b")]
    pool_a = names(plan["storage"]["st-pool-a"])
    assert ("CephClient", "openstack-lab-tenant-a") in pool_a and ("CephClient", "openstack-lab-tenant-b") in pool_a
    assert ("CephFilesystem", "lab-tenant-b-cephfs") in pool_a
    assert names(plan["storage"]["st-pool-b"]) == [
        ("CephBlockPool", "lab-tenant-b-volumes"), ("CephClient", "openstack-lab-tenant-b")]
    # A storage pool without tenants still has its (empty) batch: the same single call on every pool.
    assert plan["storage"]["st-pool-c"] == [] and plan["secrets"]["st-pool-c"] == {}


def test_plan_secrets_by_storage_pool_and_control_plane():
    plan = tenants.plan(lab_claims(), REGION)
    copies = plan["secrets"]["st-pool-a"]["lab-control-plane"]
    assert [(c["source"]["name"], c["target"]["namespace"], c["target"]["name"], c["key"]) for c in copies] == [
        ("rook-ceph-client-openstack-lab-tenant-a", "openstack-lab-tenant-a", "ceph-client-lab-tenant-a",
         ["userID", "userKey"]),
        ("rook-ceph-client-openstack-lab-tenant-b", "openstack-lab-tenant-b", "ceph-client-lab-tenant-b",
         ["userID", "userKey"])]
    assert copies[0]["labels"] == {"app.kubernetes.io/managed-by": "c5c3.cobaltcore",
                                   "c5c3.io/openstack-cluster-name": "lab-tenant-a"}
    tiered = plan["secrets"]["st-pool-b"]["lab-control-plane"]
    assert [c["target"]["name"] for c in tiered] == ["ceph-client-lab-tenant-b-st-pool-b"]


def test_plan_retires_lower_ceph_client_versions_per_cluster():
    assert all(objects == [] for objects in tenants.plan(lab_claims(), REGION)["retired_ceph_clients"].values())
    retired = tenants.plan(lab_claims(), REGION, ceph_client_version=1)["retired_ceph_clients"]
    names = dict((cluster, [(o["kind"], o["metadata"]["name"]) for o in objects]) for cluster, objects in retired.items())
    assert names["st-pool-a"] == [("CephClient", "openstack-lab-tenant-a"), ("CephClient", "openstack-lab-tenant-b")]
    assert names["st-pool-b"] == [("CephClient", "openstack-lab-tenant-b")]
    assert names["lab-control-plane"] == [("Secret", "ceph-client-lab-tenant-a"), ("Secret", "ceph-client-lab-tenant-b"),
                                          ("Secret", "ceph-client-lab-tenant-b-st-pool-b")]


def test_plan_adds_the_first_storage_pools_monitors_only_when_known():
    ceph = {"st-pool-a": {"fsid": "f", "monitors": ["10.0.1.10:6789", "10.0.1.11:6789"]}}
    plan = tenants.plan(lab_claims(), REGION, ceph)
    control_planes = [m for m in plan["control_plane"]["lab-control-plane"] if m["kind"] == "ControlPlane"]
    assert all(cp["spec"]["storage"]["ceph"]["monitors"] == ceph["st-pool-a"]["monitors"] for cp in control_planes)
    without = tenants.plan(lab_claims(), REGION, {"st-pool-b": ceph["st-pool-a"]})
    assert all("monitors" not in m["spec"]["storage"]["ceph"]
               for m in without["control_plane"]["lab-control-plane"] if m["kind"] == "ControlPlane")


def backends(control_plane):
    return dict((b["storageCluster"], b) for b in control_plane["spec"]["openstack"]["cinder"]["backends"])


def test_plan_gives_each_rbd_backend_the_monitors_of_its_own_storage_pool():
    ceph = {"st-pool-a": {"monitors": ["10.0.1.10:6789"]}, "st-pool-b": {"monitors": ["10.0.2.10:6789"]}}
    plan = tenants.plan(lab_claims(), REGION, ceph)
    tiered = next(m for m in plan["control_plane"]["lab-control-plane"]
                  if m["kind"] == "ControlPlane" and m["metadata"]["name"] == "lab-tenant-b")
    assert sorted(backends(tiered)) == ["st-pool-a", "st-pool-b"]
    assert dict((pool, b["monitors"]) for pool, b in backends(tiered).items()) == dict(
        (pool, facts["monitors"]) for pool, facts in ceph.items())
    assert tiered["spec"]["storage"]["ceph"]["monitors"] == ceph["st-pool-a"]["monitors"]  # its first pool's
    # Without st-pool-b's facts that backend has none; the others keep theirs.
    partial = tenants.plan(lab_claims(), REGION, {"st-pool-a": ceph["st-pool-a"]})
    tiered = next(m for m in partial["control_plane"]["lab-control-plane"] if m["metadata"]["name"] == "lab-tenant-b")
    assert "monitors" not in backends(tiered)["st-pool-b"] and backends(tiered)["st-pool-a"]["monitors"]


def test_plan_requiring_monitors_names_each_tenant_and_pool_without_them_with_the_reason():
    ceph = {"st-pool-a": {"monitors": ["10.0.1.10:6789"]},
            "st-pool-b": {"problem": "st-pool-b CephCluster: rook-ceph/rook-ceph does not exist"}}
    with pytest.raises(InputError) as error:
        tenants.plan(lab_claims(), REGION, ceph, require_monitors=True)
    assert error.value.problems == [
        "tenant-lab-b/lab-tenant-b spec.storageClusters[1]: storage pool st-pool-b has no Ceph monitors to give the "
        "ControlPlane (st-pool-b CephCluster: rook-ceph/rook-ceph does not exist); run playbooks/storage.yml for it "
        "first"]
    with pytest.raises(InputError) as error:
        tenants.plan(lab_claims(), REGION, {}, require_monitors=True)
    assert [p.split(":")[0] for p in error.value.problems] == [
        "tenant-lab-a/lab-tenant-a spec.storageClusters[0]", "tenant-lab-b/lab-tenant-b spec.storageClusters[0]",
        "tenant-lab-b/lab-tenant-b spec.storageClusters[1]"]
    assert "Phase 6 set no Ceph facts for it" in error.value.problems[0]
    # Not required (check mode): planned, the monitors left out.
    assert tenants.plan(lab_claims(), REGION, ceph)["tenants"]
    assert tenants.plan(lab_claims(), REGION, dict(ceph, **{"st-pool-b": {"monitors": ["m:6789"]}}),
                        require_monitors=True)["tenants"]


def test_plan_is_deterministic_and_does_not_share_state():
    first = tenants.plan(lab_claims(), REGION, {"st-pool-a": {"monitors": ["m:6789"]}})
    assert tenants.plan(lab_claims(), REGION, {"st-pool-a": {"monitors": ["m:6789"]}}) == first


def test_plan_names_every_problem_of_every_claim():
    claims = lab_claims()
    claims[0]["spec"]["size"] = "huge"
    claims[1]["spec"]["storageClusters"] = ["st-pool-x"]
    with pytest.raises(InputError) as error:
        tenants.plan(claims, REGION)
    text = str(error.value)
    assert "tenant-lab-a/lab-tenant-a spec.size" in text
    assert "tenant-lab-b/lab-tenant-b spec.storageClusters[0]" in text


def test_plan_without_claims():
    plan = tenants.plan([], REGION)
    assert plan["tenants"] == [] and plan["control_plane"] == {"lab-control-plane": []}


def test_removal_queries_by_namespace_and_labels():
    storage = tenants.removal_queries("lab-tenant-a", tenants.STORAGE)
    assert {q["kind"] for q in storage} == set(tenants.ROOK_REMOVAL_KINDS)
    assert all(q["namespace"] == "rook-ceph" and q["label_selector"] == (
        "app.kubernetes.io/managed-by=c5c3.cobaltcore,c5c3.io/openstack-cluster-name=lab-tenant-a") for q in storage)
    control = tenants.removal_queries("lab-tenant-a", tenants.CONTROL_PLANE)
    assert all(q["namespace"] in ("openstack-lab-tenant-a", None) for q in control)
    # Only the tenant's own namespace may be listed whole; the rest needs the labels.
    assert all(q["label_selector"] for q in control if q["namespace"] is None or q["kind"] in ("Secret", "ControlPlane"))
    with pytest.raises(InputError):
        tenants.removal_queries("Not_A_Name", tenants.STORAGE)
    with pytest.raises(InputError):
        tenants.removal_queries("x", "hypervisor")


def ref(kind, name, namespace, api_version=None):
    api_version = api_version or {"Secret": "v1", "Namespace": "v1", "ControlPlane": "c5c3.io/v1alpha1",
                                  "Keystone": tenants.KEYSTONE_API_VERSION}.get(kind, "ceph.rook.io/v1")
    return {"apiVersion": api_version, "kind": kind, "name": name, "namespace": namespace}


FOUND = {
    "lab-control-plane": {"side": "control_plane", "objects": [
        ref("Domain", "default", "openstack-t", "openstack.k-orc.cloud/v1alpha1"),
        ref("Keystone", "keystone", "openstack-t"),
        ref("ControlPlane", "t", "openstack-t"),
        ref("ControlPlane", "lab", "openstack"),           # not the tenant's namespace: never removed
        ref("Secret", "ceph-client-t", "openstack-t"),
        ref("Namespace", "openstack-t", None),
    ]},
    "st-pool-a": {"side": "storage", "objects": [
        ref("CephClient", "openstack-t", "rook-ceph"),
        ref("CephBlockPool", "t-volumes", "rook-ceph"),
        ref("CephObjectStoreUser", "swift-t", "rook-ceph"),
        ref("CephObjectStore", "t-rgw", "rook-ceph"),
        ref("CephFilesystem", "t-cephfs", "rook-ceph"),
        ref("CephBlockPool", "t-images", "other"),          # outside rook-ceph: never removed
    ]},
    "st-pool-b": {"side": "storage", "objects": [ref("CephClient", "openstack-t", "rook-ceph")]},
}


def test_removal_steps_in_reverse_dependency_order():
    steps = tenants.removal_steps("t", FOUND)
    assert [(s["step"], s["cluster"]) for s in steps] == [
        ("k-orc", "lab-control-plane"), ("control-plane", "lab-control-plane"),
        ("ceph-client-secrets", "lab-control-plane"), ("ceph-clients", "st-pool-a"), ("ceph-clients", "st-pool-b"),
        ("release-data", "st-pool-a"), ("ceph-pools", "st-pool-a"), ("namespace", "lab-control-plane")]
    by_step = dict((s["step"], s) for s in steps)
    assert [s["state"] for s in steps] == ["absent"] * 5 + ["present", "absent", "absent"]
    # Before they go, the block pool lets Rook delete its images (force deletion), the filesystem and the object store
    # their Ceph pools.
    assert by_step["release-data"]["definition"] == [
        {"apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool",
         "metadata": {"name": "t-volumes", "namespace": "rook-ceph", "annotations": {"rook.io/force-deletion": "true"}}},
        {"apiVersion": "ceph.rook.io/v1", "kind": "CephObjectStore", "metadata": {"name": "t-rgw", "namespace": "rook-ceph"},
         "spec": {"preservePoolsOnDelete": False}},
        {"apiVersion": "ceph.rook.io/v1", "kind": "CephFilesystem", "metadata": {"name": "t-cephfs", "namespace": "rook-ceph"},
         "spec": {"preserveFilesystemOnDelete": False, "preservePoolsOnDelete": False}}]
    # Creation order: the engine deletes in reverse (the ControlPlane before its Keystone, the user before its store).
    assert [o["kind"] for o in by_step["control-plane"]["objects"]] == ["Keystone", "ControlPlane"]
    assert [o["kind"] for o in by_step["ceph-pools"]["objects"]] == [
        "CephBlockPool", "CephFilesystem", "CephObjectStore", "CephObjectStoreUser"]
    every = [o for s in steps for o in s["objects"]]
    assert ref("ControlPlane", "lab", "openstack") not in every
    assert ref("CephBlockPool", "t-images", "other") not in every
    assert by_step["namespace"]["definition"] == [{"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "openstack-t"}}]


def test_data_loss_lists_what_may_hold_data():
    steps = tenants.removal_steps("t", FOUND)
    assert tenants.data_loss(steps) == [
        "st-pool-a: CephBlockPool rook-ceph/t-volumes", "st-pool-a: CephFilesystem rook-ceph/t-cephfs",
        "st-pool-a: CephObjectStore rook-ceph/t-rgw", "st-pool-a: CephObjectStoreUser rook-ceph/swift-t"]
    clients_only = {"st-pool-b": FOUND["st-pool-b"]}
    assert tenants.data_loss(tenants.removal_steps("t", clients_only)) == []


def test_removal_of_nothing():
    assert tenants.removal_steps("t", {"st-pool-a": {"side": "storage", "objects": []}}) == []


def test_plan_refuses_monitors_off_the_storage_pools_public_network():
    region = dict(REGION, storage_pools=[{"name": "st-pool-a", "network": {"public": "10.30.1.0/24"}},
                                         {"name": "st-pool-b", "network": {"public": "10.30.2.0/24"}}, "st-pool-c"])
    reachable = {"st-pool-a": {"fsid": "f", "monitors": ["10.30.1.10:6789"]},
                 "st-pool-b": {"fsid": "g", "monitors": ["10.30.2.10:6789"]}}
    assert tenants.plan(lab_claims(), region, reachable)["tenants"]
    # A mon Service's cluster-internal address (Rook's default pod network): every tenant would be cut off from it.
    internal = dict(reachable, **{"st-pool-b": {"fsid": "g", "monitors": ["10.96.3.7:6789", "10.30.2.10:6789"]}})
    with pytest.raises(InputError) as error:
        tenants.plan(lab_claims(), region, internal)
    assert error.value.problems == [
        "st-pool-b.network.public: the pool's Ceph reports monitors 10.96.3.7:6789 outside its public network "
        "10.30.2.0/24, which the control plane and the hypervisors could not reach (flow ceph-monitors): its "
        "CephCluster must run the mons on the Nodes' network there (network.provider host)"]

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claim_schema import (
    STRICTER_CONSTRAINTS, XRD_SPEC_SCHEMA)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import (
    claim_name_problems, claim_spec_with_defaults, load_claim_files, load_claims, validate_claims)

REGION = {
    "name": "eu-de-1",
    "hypervisor_pools": ["hv-pool-a", "hv-pool-b",
                         {"name": "hv-pool-compliance", "labels": {"dedicated": "true"}}],
    "storage_pools": ["st-pool-a", "st-pool-b"],
}

CLAIM = {
    "apiVersion": "c5c3.io/v1alpha1",
    "kind": "OpenStackCluster",
    "metadata": {"name": "customer-a-prod", "namespace": "tenant-customer-a"},
    "spec": {
        "region": "eu-de-1",
        "size": "large",
        "hypervisorClusters": ["hv-pool-a", "hv-pool-b"],
        "storageClusters": ["st-pool-a"],
    },
}


def claim(**spec):
    """A valid claim with spec fields replaced (None removes a field)."""
    result = copy.deepcopy(CLAIM)
    for key, value in spec.items():
        if value is None:
            del result["spec"][key]
        else:
            result["spec"][key] = value
    return result


def named(name, namespace="tenant-x", **spec):
    result = claim(**spec)
    result["metadata"] = {"name": name, "namespace": namespace}
    return result


def split(problem):
    """(claim, field, message) of a problem '<namespace>/<name> <field>: <message>'."""
    where, message = problem.split(": ", 1)
    # The field has no blank in these tests; an invalid namespace may ('Tenant X/x').
    claim_ref, _blank, field = where.rpartition(" ") if " " in where else (where, "", "")
    return claim_ref, field, message


def fields(claims, region=None):
    return [split(item)[1:] for item in validate_claims(claims, region or REGION)]


def ceph(**pools):
    return {"ceph": pools}


def test_the_valid_claim_has_no_problems():
    assert validate_claims([CLAIM], REGION) == []


def test_problems_name_the_claim_by_namespace_and_name():
    problems = validate_claims([claim(size="huge")], REGION)
    assert problems == ["tenant-customer-a/customer-a-prod spec.size: must be one of small, medium, large, xlarge, "
                        "got 'huge'"]


# --- the XRD's rules -------------------------------------------------------

@pytest.mark.parametrize("field", ["region", "size", "hypervisorClusters", "storageClusters"])
def test_required_fields(field):
    assert ("spec.%s" % field, "is required") in fields([claim(**{field: None})])


@pytest.mark.parametrize("size", ["small", "medium", "large", "xlarge"])
def test_every_size_is_accepted(size):
    assert fields([claim(size=size)]) == []


@pytest.mark.parametrize("field", ["hypervisorClusters", "storageClusters"])
def test_pool_lists_need_one_item(field):
    assert fields([claim(**{field: []})]) == [("spec." + field, "must have at least 1 item(s)")]


@pytest.mark.parametrize("spec, expected", [
    ({"region": 1}, ("spec.region", "must be a string, got integer")),
    ({"size": None, "hypervisorClusters": "hv-pool-a"}, ("spec.hypervisorClusters", "must be a list, got string")),
    ({"storageClusters": [7]}, ("spec.storageClusters[0]", "must be a string, got integer")),
    ({"controlPlaneCluster": ["x"]}, ("spec.controlPlaneCluster", "must be a string, got list")),
    ({"services": {"nova": "yes"}}, ("spec.services.nova", "must be a boolean, got string")),
    ({"services": []}, ("spec.services", "must be a mapping, got list")),
    ({"cortex": {"pipelines": "nova"}}, ("spec.cortex.pipelines", "must be a list, got string")),
    ({"cortex": {"enabled": 1}}, ("spec.cortex.enabled", "must be a boolean, got integer")),
    ({"tls": {"issuerRef": 5}}, ("spec.tls.issuerRef", "must be a string, got integer")),
    ({"network": {"mtu": "1500"}}, ("spec.network.mtu", "must be an integer, got string")),
    ({"network": {"externalNetwork": None}}, ("spec.network.externalNetwork", "must be a string, got null")),
    ({"storage": ceph(volumePool={"quotaGB": 1.5})}, ("spec.storage.ceph.volumePool.quotaGB",
                                                      "must be an integer, got float")),
    ({"storage": ceph(ephemeralPool={"enabled": "no"})}, ("spec.storage.ceph.ephemeralPool.enabled",
                                                          "must be a boolean, got string")),
])
def test_types(spec, expected):
    assert expected in fields([claim(**spec)])


@pytest.mark.parametrize("replication, valid", [(0, False), (1, True), (3, True), (5, True), (6, False)])
def test_volume_pool_replication_1_to_5(replication, valid):
    problems = fields([claim(storage=ceph(volumePool={"replication": replication}))])
    assert (problems == []) is valid


@pytest.mark.parametrize("mode", ["none", "passive", "aggressive", "force"])
def test_volume_pool_compression_modes(mode):
    assert fields([claim(storage=ceph(volumePool={"compression": mode}))]) == []


def test_unknown_compression_is_refused():
    assert fields([claim(storage=ceph(volumePool={"compression": "zstd"}))]) == [(
        "spec.storage.ceph.volumePool.compression",
        "must be one of none, passive, aggressive, force, got 'zstd'")]


def test_defaults_exactly_as_the_xrd_gives_them():
    spec = claim_spec_with_defaults(CLAIM["spec"])
    assert spec == {
        "region": "eu-de-1",
        "size": "large",
        "hypervisorClusters": ["hv-pool-a", "hv-pool-b"],
        "storageClusters": ["st-pool-a"],
        "services": {"nova": True, "neutron": True, "cinder": True, "glance": True,
                     "octavia": False, "manila": False},
        "cortex": {"enabled": True, "pipelines": ["nova", "cinder"]},
        "tls": {"enabled": True},
        "network": {"mtu": 1500},
        "storage": {"ceph": {
            "volumePool": {"replication": 3, "compression": "aggressive"},
            "imagePool": {"replication": 3, "compression": "aggressive"},
            "ephemeralPool": {"enabled": True, "replication": 2},
            "filesystem": {"enabled": False, "dataPoolReplication": 3, "metadataPoolReplication": 3},
            "objectStore": {"enabled": False, "dataPoolReplication": 3},
        }},
    }


def test_given_values_win_over_defaults():
    spec = claim_spec_with_defaults(claim(services={"nova": False}, tls={"enabled": False})["spec"])
    assert spec["services"]["nova"] is False
    assert spec["services"]["glance"] is True
    assert spec["tls"] == {"enabled": False}


# --- rules the XRD cannot express -------------------------------------------

@pytest.mark.parametrize("path, value", sorted(STRICTER_CONSTRAINTS.items()))
def test_stricter_constraints_are_not_in_the_xrd(path, value):
    node = XRD_SPEC_SCHEMA
    for key in path.split("."):
        node = node["properties"][key]
    assert not set(value) & set(node)


@pytest.mark.parametrize("pools, expected", [
    ({"imagePool": {"replication": 0}}, ("spec.storage.ceph.imagePool.replication", "must be at least 1, got 0")),
    ({"ephemeralPool": {"replication": 9}}, ("spec.storage.ceph.ephemeralPool.replication",
                                             "must be at most 5, got 9")),
    ({"filesystem": {"dataPoolReplication": 0}}, ("spec.storage.ceph.filesystem.dataPoolReplication",
                                                  "must be at least 1, got 0")),
    ({"filesystem": {"metadataPoolReplication": 6}}, ("spec.storage.ceph.filesystem.metadataPoolReplication",
                                                      "must be at most 5, got 6")),
    ({"objectStore": {"dataPoolReplication": 0}}, ("spec.storage.ceph.objectStore.dataPoolReplication",
                                                   "must be at least 1, got 0")),
    ({"imagePool": {"compression": "zstd"}}, ("spec.storage.ceph.imagePool.compression",
                                              "must be one of none, passive, aggressive, force, got 'zstd'")),
    ({"volumePool": {"quotaGB": -1}}, ("spec.storage.ceph.volumePool.quotaGB", "must be at least 0, got -1")),
])
def test_every_pool_gets_the_volume_pools_bounds(pools, expected):
    assert fields([claim(storage=ceph(**pools))]) == [expected]


def test_zero_quota_means_unlimited_and_is_valid():
    assert fields([claim(storage=ceph(volumePool={"quotaGB": 0}))]) == []


def test_referenced_pools_must_exist_in_the_region():
    assert fields([claim(hypervisorClusters=["hv-pool-z"], storageClusters=["st-pool-z"])]) == [
        ("spec.hypervisorClusters[0]",
         "hv-pool-z is not a hypervisor pool of region eu-de-1 (known: hv-pool-a, hv-pool-b, hv-pool-compliance)"),
        ("spec.storageClusters[0]", "st-pool-z is not a storage pool of region eu-de-1 (known: st-pool-a, st-pool-b)"),
    ]


def test_referenced_pools_must_be_of_the_right_kind():
    assert fields([claim(hypervisorClusters=["st-pool-a"], storageClusters=["hv-pool-a", "eu-de-1-control-plane"])]) == [
        ("spec.hypervisorClusters[0]", "st-pool-a is a storage pool, not a hypervisor pool"),
        ("spec.storageClusters[0]", "hv-pool-a is a hypervisor pool, not a storage pool"),
        ("spec.storageClusters[1]", "eu-de-1-control-plane is a control-plane cluster, not a storage pool"),
    ]


def test_no_pool_listed_twice():
    assert fields([claim(storageClusters=["st-pool-a", "st-pool-b", "st-pool-a"])]) == [
        ("spec.storageClusters[2]", "lists st-pool-a twice (also at index 0)")]


def test_spec_region_must_be_the_region():
    assert fields([claim(region="us-east-1")]) == [
        ("spec.region", "is us-east-1, but the claims are validated for region eu-de-1")]


def test_control_plane_cluster_must_exist():
    assert fields([claim(controlPlaneCluster="eu-de-1-control-plane")]) == []
    assert fields([claim(controlPlaneCluster="hv-pool-a")]) == [
        ("spec.controlPlaneCluster",
         "hv-pool-a is not a control-plane cluster of region eu-de-1 (known: eu-de-1-control-plane)")]


def test_the_default_control_plane_must_exist():
    region = dict(REGION, control_planes=["cp-1"])
    assert fields([CLAIM], region) == [
        ("spec.controlPlaneCluster",
         "the default eu-de-1-control-plane is not a control-plane cluster of region eu-de-1 (known: cp-1)")]
    assert fields([claim(controlPlaneCluster="cp-1")], region) == []


@pytest.mark.parametrize("name, valid", [
    ("a" * 53, True), ("a" * 54, False), ("Customer", False), ("a.b", False), ("-a", False), ("a", True),
])
def test_claim_names(name, valid):
    assert (fields([named(name)]) == []) is valid


def test_long_names_say_why():
    assert fields([named("a" * 54)]) == [(
        "metadata.name",
        "is 54 characters long; at most 53 fit, so that namespace openstack-<name> stays within 63")]
    assert [problem.split(":")[0] for problem in claim_name_problems("A" * 70)] == ["metadata.name", "metadata.name"]
    assert claim_name_problems(5, field="name", subject="tenant") == ["tenant name: must be a string, got integer"]


def test_with_an_object_store_the_name_leaves_room_for_rooks_store_name_limit():
    store = ceph(objectStore={"enabled": True})
    assert fields([named("a" * 34, storage=store)]) == []
    assert fields([named("a" * 35, storage=store)]) == [(
        "metadata.name",
        "is 35 characters long; with spec.storage.ceph.objectStore.enabled at most 34 fit, because Rook refuses its "
        "CephObjectStore %s-rgw (39 characters, more than 38): shorten the name or turn the object store off" % ("a" * 35))]
    # Without the object store (the default) the namespace's limit is the only one.
    assert fields([named("a" * 53)]) == [] == fields([named("a" * 53, storage=ceph(objectStore={"enabled": False}))])
    # A name too long anyway, or a malformed spec, is reported once, as such.
    assert [f for f, _m in fields([named("a" * 54, storage=store)])] == ["metadata.name"]
    assert fields([named("a" * 40, storage=ceph(objectStore={"enabled": "yes"}))]) == [
        ("spec.storage.ceph.objectStore.enabled", "must be a boolean, got string")]


def test_every_problem_of_a_claim_with_a_long_name_and_an_object_store_is_named_at_once():
    bad = named("b" * 40, size="huge", storage=ceph(objectStore={"enabled": True}))
    assert sorted(f for f, _m in fields([bad, named("c" * 36, storage=ceph(objectStore={"enabled": True}))])) == [
        "metadata.name", "metadata.name", "spec.size"]


@pytest.mark.parametrize("metadata, expected", [
    ({"name": "x"}, ("metadata.namespace", "is required: claims live in a tenant namespace")),
    ({"name": "x", "namespace": "Tenant X"}, ("metadata.namespace",
                                              "'Tenant X' is not a valid namespace name (DNS-1123 label)")),
    ({"namespace": "t"}, ("metadata.name", "is required")),
    ({"name": 5, "namespace": "t"}, ("metadata.name", "must be a string, got integer")),
    ({"name": "x", "namespace": "t", "uid": "1"}, ("metadata.uid", "unknown field")),
])
def test_metadata(metadata, expected):
    value = claim()
    value["metadata"] = metadata
    assert fields([value]) == [expected]


def test_labels_and_annotations_are_allowed():
    value = claim()
    value["metadata"].update(labels={"a": "b"}, annotations={"c": "d"})
    assert fields([value]) == []


def test_two_claims_must_not_share_a_namespace():
    problems = validate_claims([named("prod", "tenant-a"), named("prod", "tenant-b")], REGION)
    assert problems == ["tenant-b/prod metadata.name: maps to namespace openstack-prod, as claim tenant-a/prod does"]


def test_the_same_claim_twice_is_a_conflict():
    assert fields([CLAIM, CLAIM]) == [
        ("metadata.name", "maps to namespace openstack-customer-a-prod, "
                          "as claim tenant-customer-a/customer-a-prod does")]


def test_a_dedicated_pool_serves_one_claim():
    problems = validate_claims([named("finance", hypervisorClusters=["hv-pool-compliance"]),
                                named("other", hypervisorClusters=["hv-pool-a", "hv-pool-compliance"])], REGION)
    assert problems == ["tenant-x/other spec.hypervisorClusters[1]: hv-pool-compliance is dedicated to claim "
                        "tenant-x/finance"]


def test_shared_pools_serve_many_claims():
    assert fields([named("a"), named("b"), named("c")]) == []


def test_manila_needs_the_filesystem():
    assert fields([claim(services={"manila": True}, storage=ceph(filesystem={"enabled": False}))]) == [
        ("spec.storage.ceph.filesystem.enabled", "is false, but services.manila needs the CephFilesystem")]
    assert fields([claim(services={"manila": True})]) == []


@pytest.mark.parametrize("change, expected", [
    (lambda c: c.update(status={}), ("status", "unknown field")),
    (lambda c: c["spec"].update(replicas=3), ("spec.replicas", "unknown field")),
    (lambda c: c["spec"].update(services={"swift": True}), ("spec.services.swift", "unknown field")),
    (lambda c: c["spec"].update(storage=ceph(volumePool={"quota": 10})),
     ("spec.storage.ceph.volumePool.quota", "unknown field")),
    (lambda c: c["spec"].update(storage={"ceph": {}, "nfs": {}}), ("spec.storage.nfs", "unknown field")),
])
def test_unknown_fields_are_reported(change, expected):
    value = claim()
    change(value)
    assert fields([value]) == [expected]


@pytest.mark.parametrize("field, value, message", [
    ("apiVersion", "c5c3.io/v1", "must be c5c3.io/v1alpha1, got 'c5c3.io/v1'"),
    ("kind", "XOpenStackCluster", "must be OpenStackCluster, got 'XOpenStackCluster'"),
])
def test_api_version_and_kind(field, value, message):
    assert fields([dict(claim(), **{field: value})]) == [(field, message)]


def test_missing_spec():
    value = claim()
    del value["spec"]
    assert fields([value]) == [("spec", "is required")]


def test_all_problems_of_all_claims_are_collected():
    problems = validate_claims([
        named("one", size="huge", storageClusters=["st-pool-z"]),
        named("two", region="us-east-1"),
        "not a claim",
        {},
    ], REGION)
    assert [split(item)[:2] for item in problems] == [
        ("tenant-x/one", "spec.size"),
        ("tenant-x/one", "spec.storageClusters[0]"),
        ("tenant-x/two", "spec.region"),
        ("?/#2", ""),
        ("?/#3", "apiVersion"),
        ("?/#3", "kind"),
        ("?/#3", "metadata"),
        ("?/#3", "spec"),
    ]


def test_claims_argument_shapes():
    assert validate_claims(None, REGION) == []
    assert validate_claims([], REGION) == []
    assert validate_claims(CLAIM, REGION) == []
    assert validate_claims("claims", REGION) == ["claims: must be a list of OpenStackCluster claims, got string"]


def test_an_invalid_region_is_reported_not_raised():
    assert validate_claims([CLAIM], {"name": "eu-de-1", "hypervisor_pools": [{"workers": 0}]}) == [
        "region hypervisor_pools[0].name: is required",
        "region hypervisor_pools[0].workers: must be at least 1, got 0",
    ]


def test_validation_does_not_change_the_claims():
    value = claim(services={"manila": True})
    before = copy.deepcopy(value)
    validate_claims([value], REGION)
    assert value == before


MULTI = """---
# first
apiVersion: c5c3.io/v1alpha1
kind: OpenStackCluster
metadata: {name: a, namespace: t}
---
---
apiVersion: c5c3.io/v1alpha1
kind: OpenStackCluster
metadata: {name: b, namespace: t}
"""


def test_load_claims_reads_every_document_and_skips_empty_ones():
    assert [item["metadata"]["name"] for item in load_claims(MULTI)] == ["a", "b"]


def test_load_claim_files_reads_yaml_and_yml_in_name_order(tmp_path):
    (tmp_path / "b.yaml").write_text(MULTI)
    (tmp_path / "a.yml").write_text("metadata: {name: first}\n")
    (tmp_path / "notes.md").write_text("# not a claim\n")
    assert [item["metadata"]["name"] for item in load_claim_files(str(tmp_path))] == ["first", "a", "b"]

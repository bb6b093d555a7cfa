# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests: composition and validation over generated claims."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.ceph import COMPRESSION_MODES
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import validate_claims
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import compose_openstack_cluster
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.size_presets import SIZES

HYPERVISOR_POOLS = ["hv-a", "hv-b", "hv-c"]
STORAGE_POOLS = ["st-a", "st-b", "st-c"]
REGION = {"name": "r1", "hypervisor_pools": HYPERVISOR_POOLS, "storage_pools": STORAGE_POOLS}

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])

names = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?\Z", fullmatch=True)
replication = st.integers(min_value=1, max_value=5)


def optional(fields):
    """A mapping with any subset of the given field strategies."""
    return st.fixed_dictionaries({}, optional=fields)


def pool_list(pools):
    return st.lists(st.sampled_from(pools), min_size=1, max_size=len(pools), unique=True)


ceph_settings = optional({
    "volumePool": optional({"replication": replication, "compression": st.sampled_from(COMPRESSION_MODES),
                            "quotaGB": st.integers(min_value=0, max_value=10 ** 7)}),
    "imagePool": optional({"replication": replication, "compression": st.sampled_from(COMPRESSION_MODES)}),
    "ephemeralPool": optional({"enabled": st.booleans(), "replication": replication}),
    "filesystem": optional({"enabled": st.booleans(), "dataPoolReplication": replication,
                            "metadataPoolReplication": replication}),
    "objectStore": optional({"enabled": st.booleans(), "dataPoolReplication": replication}),
})

specs = optional({
    "services": optional(dict((service, st.booleans()) for service in
                              ("nova", "neutron", "cinder", "glance", "octavia", "manila"))),
    "cortex": optional({"enabled": st.booleans(), "pipelines": st.lists(st.sampled_from(["nova", "cinder"]))}),
    "tls": optional({"enabled": st.booleans(), "issuerRef": names}),
    "network": optional({"externalNetwork": names, "mtu": st.integers(min_value=1280, max_value=9000)}),
    "storage": optional({"ceph": ceph_settings}),
})


@st.composite
def claims(draw, name=names):
    spec = draw(specs)
    spec.update(region="r1", size=draw(st.sampled_from(SIZES)),
                hypervisorClusters=draw(pool_list(HYPERVISOR_POOLS)),
                storageClusters=draw(pool_list(STORAGE_POOLS)))
    filesystem = spec.get("storage", {}).get("ceph", {}).get("filesystem", {})
    if spec.get("services", {}).get("manila") and filesystem.get("enabled") is False:
        filesystem["enabled"] = True  # Manila needs the filesystem; that rule is tested elsewhere.
    if spec.get("storage", {}).get("ceph", {}).get("objectStore", {}).get("enabled") is True:
        # Rook's limit on the CephObjectStore's name shortens the claim's; that rule is tested elsewhere.
        name = name.filter(lambda n: len(n) <= naming.CLAIM_WITH_OBJECT_STORE_NAME_MAX)
    return {
        "apiVersion": "c5c3.io/v1alpha1",
        "kind": "OpenStackCluster",
        "metadata": {"name": draw(name), "namespace": draw(names)},
        "spec": spec,
    }


@st.composite
def claim_pairs(draw):
    """Two claims with different names: valid together."""
    first = draw(claims())
    second = draw(claims(name=names.filter(lambda n: n != first["metadata"]["name"])))
    return first, second


def objects(composition):
    """(cluster, manifest) for every manifest of a composition."""
    for manifest in composition["control_plane"]:
        yield composition["control_plane_cluster"], manifest
    for cluster, manifests in composition["storage"].items():
        for manifest in manifests:
            yield cluster, manifest


def identity(cluster, manifest):
    metadata = manifest["metadata"]
    return (manifest["apiVersion"], manifest["kind"], metadata.get("namespace"), metadata["name"], cluster)


@PROPERTY_SETTINGS
@given(claims())
def test_generated_claims_are_valid(claim):
    assert validate_claims([claim], REGION) == []


@PROPERTY_SETTINGS
@given(claims())
def test_composition_is_deterministic(claim):
    first = compose_openstack_cluster(claim, REGION)
    second = compose_openstack_cluster(copy.deepcopy(claim), REGION)
    assert first == second
    assert json.dumps(first) == json.dumps(second)


@PROPERTY_SETTINGS
@given(claims())
def test_every_object_has_a_valid_name_and_namespace(claim):
    for _cluster, manifest in objects(compose_openstack_cluster(claim, REGION)):
        metadata = manifest["metadata"]
        assert kube_names.is_dns1123_label(metadata["name"]), metadata
        if manifest["kind"] == "Namespace":
            assert "namespace" not in metadata
        else:
            assert kube_names.is_dns1123_label(metadata["namespace"]), metadata
        assert all(kube_names.is_label_key(k) and kube_names.is_label_value(v) for k, v in metadata["labels"].items())


def caps_pools(manifest):
    return re.findall(r"profile rbd pool=([^,]+)", manifest["spec"]["caps"]["osd"])


@PROPERTY_SETTINGS
@given(claim_pairs())
def test_caps_name_exactly_the_tenants_pools_on_that_cluster(pair):
    compositions = [compose_openstack_cluster(claim, REGION, claims=list(pair)) for claim in pair]
    for own, other in (compositions, compositions[::-1]):
        other_pools = set(m["metadata"]["name"] for _cluster, m in objects(other) if m["kind"] == "CephBlockPool")
        for cluster, manifests in own["storage"].items():
            pools = [m["metadata"]["name"] for m in manifests if m["kind"] == "CephBlockPool"]
            for client in (m for m in manifests if m["kind"] == "CephClient"):
                assert caps_pools(client) == pools
                assert not set(caps_pools(client)) & other_pools


@PROPERTY_SETTINGS
@given(claim_pairs())
def test_no_two_valid_claims_produce_the_same_object(pair):
    assert validate_claims(list(pair), REGION) == []
    identities = [identity(cluster, manifest)
                  for claim in pair
                  for cluster, manifest in objects(compose_openstack_cluster(claim, REGION, claims=list(pair)))]
    assert len(identities) == len(set(identities))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8) | st.integers(), children, max_size=4),
    max_leaves=20)


def is_problem(problem):
    """'<field>: <message>', the field (with its claim or 'region') first."""
    return isinstance(problem, str) and ": " in problem and not problem.startswith(":")


@PROPERTY_SETTINGS
@given(json_values, json_values)
def test_validation_never_raises_on_arbitrary_input(claims_value, region_value):
    for region in (REGION, region_value):
        problems = validate_claims(claims_value, region)
        assert isinstance(problems, list)
        assert all(is_problem(problem) for problem in problems)


def paths(value, prefix=()):
    """Every path into a claim, as tuples of keys and indexes."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, prefix + (index,))


@PROPERTY_SETTINGS
@given(st.data())
def test_validation_never_raises_on_mutated_claims(data):
    claim = data.draw(claims())
    path = data.draw(st.sampled_from(list(paths(claim))[1:]))
    parent = claim
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = data.draw(json_values)
    problems = validate_claims([claim], REGION)
    assert all(is_problem(problem) for problem in problems)
    if not problems:
        compose_openstack_cluster(claim, REGION)

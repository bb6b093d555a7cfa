# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import os

import pytest
import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import load_claim_files
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import (
    REGION_SERVICES, compose_openstack_cluster, compose_openstack_clusters, region_control_plane)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.openapi_schema import validate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import tenants
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError

REGION = {
    "name": "eu-de-1",
    "control_planes": ["eu-de-1-control-plane", "eu-de-1-control-plane-2"],
    "hypervisor_pools": ["hv-pool-a", "hv-pool-b"],
    "storage_pools": ["st-pool-a", "st-pool-b"],
}

SEED_TENANTS = ["customer-a-prod", "customer-b-staging", "internal-prod", "finance-prod"]


def make_claim(name="t", **spec):
    value = {
        "apiVersion": "c5c3.io/v1alpha1",
        "kind": "OpenStackCluster",
        "metadata": {"name": name, "namespace": "tenant-" + name},
        "spec": {"region": "eu-de-1", "size": "medium",
                 "hypervisorClusters": ["hv-pool-a"], "storageClusters": ["st-pool-a"]},
    }
    value["spec"].update(spec)
    return value


def compose(**spec):
    return compose_openstack_cluster(make_claim(**spec), REGION)


def control_plane(result):
    return [m for m in result["control_plane"] if m["kind"] == "ControlPlane"][0]


def kinds_and_names(manifests):
    return [(m["kind"], m["metadata"]["name"]) for m in manifests]


def contains(actual, expected):
    """Whether every field of expected is in actual with the same value."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and contains(actual[key], value) for key, value in expected.items())
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(contains(a, e) for a, e in zip(actual, expected)))
    return actual == expected


# --- the seed's four tenants --------------------------------------------------

@pytest.fixture
def eu_de_1(inventory_of, tenants_dir):
    return inventory_of("eu-de-1"), load_claim_files(tenants_dir("eu-de-1"))


def test_the_inventory_holds_the_four_seed_tenants(eu_de_1):
    claims = eu_de_1[1]
    assert sorted(claim["metadata"]["name"] for claim in claims) == sorted(SEED_TENANTS)


@pytest.mark.parametrize("name", SEED_TENANTS)
def test_seed_tenants_compose_to_their_expected_manifests(eu_de_1, fixture_yaml, name):
    region, claims = eu_de_1
    claim = [item for item in claims if item["metadata"]["name"] == name][0]
    result = compose_openstack_cluster(claim, region, claims=claims)
    assert result == fixture_yaml("expected/eu-de-1/%s.yaml" % name)


def test_seed_002_claim_yields_the_seeds_control_plane(eu_de_1, fixture_yaml):
    region = eu_de_1[0]
    result = compose_openstack_cluster(fixture_yaml("seed_claims/seed-002-customer-a-prod.yaml"), region)
    seed_control_plane = fixture_yaml("expected/seed-002-controlplane-ceph-integration.yaml")
    # Monitors are the storage cluster's; they are known only when applying.
    del seed_control_plane["spec"]["storage"]["ceph"]["monitors"]
    assert contains(control_plane(result), seed_control_plane)


def test_seed_000_claims_validate_and_compose(eu_de_1, fixture_yaml):
    region = eu_de_1[0]
    claims = [fixture_yaml("seed_claims/seed-000-%s.yaml" % name)
              for name in ("customer-a-prod", "customer-b-staging", "finance-prod")]
    results = compose_openstack_clusters(claims, region)
    assert [result["name"] for result in results] == ["customer-a-prod", "customer-b-staging", "finance-prod"]


def test_seed_composition_status_quota(eu_de_1):
    region, claims = eu_de_1
    claim = [item for item in claims if item["metadata"]["name"] == "customer-a-prod"][0]
    volumes = compose_openstack_cluster(claim, region, claims=claims)["storage"]["st-pool-a"][0]
    assert volumes["metadata"]["name"] == "customer-a-prod-volumes"
    # The seed's status: quotaGB 10000 -> quotaBytes 10737418240000.
    assert int(volumes["spec"]["quotas"]["maxSize"][:-2]) * 1024 ** 3 == 10737418240000


# --- control-plane cluster -----------------------------------------------------

def test_namespace_is_labelled_as_an_openstack_cluster():
    namespace = compose(name="t")["control_plane"][0]
    assert namespace == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "openstack-t", "labels": {
            "c5c3.io/openstack-cluster": "true",
            "app.kubernetes.io/managed-by": "c5c3.cobaltcore",
            "c5c3.io/openstack-cluster-name": "t",
        }},
    }


def test_control_plane_lives_in_the_tenant_namespace_with_the_pool_references():
    result = compose(hypervisorClusters=["hv-pool-b", "hv-pool-a"], storageClusters=["st-pool-b"])
    manifest = control_plane(result)
    assert manifest["apiVersion"] == "c5c3.io/v1alpha1"
    assert manifest["metadata"]["name"] == "t"
    assert manifest["metadata"]["namespace"] == "openstack-t" == result["namespace"]
    assert manifest["spec"]["compute"] == {"hypervisorClusters": ["hv-pool-b", "hv-pool-a"]}
    assert manifest["spec"]["storage"]["storageClusters"] == ["st-pool-b"]


@pytest.mark.parametrize("size, mariadb, keystone, nova_api", [
    ("small", 1, 1, 1), ("medium", 3, 3, 3), ("large", 3, 3, 5), ("xlarge", 5, 5, 7)])
def test_replicas_follow_the_size_maps_as_integers(size, mariadb, keystone, nova_api):
    spec = control_plane(compose(size=size))["spec"]
    assert spec["infrastructure"]["mariadb"] == {"replicas": mariadb, "storageSize": "100Gi"}
    assert spec["openstack"]["keystone"]["replicas"] == keystone
    assert spec["openstack"]["nova"]["api"] == {"replicas": nova_api}


def test_the_control_plane_names_what_the_keystone_bootstrap_takes_from_it(inventory_of):
    """The c5c3-operator projects the Keystone CR's bootstrap.region and .publicEndpoint from these (and owns them):
    the claim's region, and Keystone's public URL by the region's template for the cluster named after the tenant."""
    spec = control_plane(compose(name="t1"))["spec"]
    assert spec["global"] == {"region": "eu-de-1"}
    assert spec["openstack"]["keystone"]["publicEndpoint"] == "https://keystone.openstack-t1.svc.cluster.local:5000/v3"
    template = "https://{name}.{cluster}.{region}.example.com{path}"
    planned = control_plane(compose_openstack_cluster(make_claim(name="t1"), REGION, public_url_template=template))
    assert planned["spec"]["openstack"]["keystone"]["publicEndpoint"] == "https://keystone.t1.eu-de-1.example.com/v3"
    # An inventory-shaped region brings its own template (cobaltcore_network.endpoints on a control-plane host).
    inventory = inventory_of("eu-de-1")
    for host in inventory["groups"]["control_plane"]:
        inventory["hostvars"][host]["cobaltcore_network"] = {"endpoints": {"public_url_template": template}}
    assert control_plane(compose_openstack_cluster(make_claim(name="t1"), inventory))["spec"]["openstack"][
        "keystone"]["publicEndpoint"] == "https://keystone.t1.eu-de-1.example.com/v3"


def test_composition_base_values():
    spec = control_plane(compose())["spec"]
    assert spec["infrastructure"]["rabbitmq"] == {"replicas": 3}
    assert spec["infrastructure"]["valkey"] == {"replicas": 3, "sentinel": {"enabled": True}}
    assert spec["infrastructure"]["memcached"] == {"replicas": 3}
    openstack = spec["openstack"]
    assert openstack["nova"]["scheduler"] == {"replicas": 2}
    assert openstack["nova"]["conductor"] == {"replicas": 3}
    assert openstack["neutron"] == {"enabled": True, "api": {"replicas": 3}, "server": {"replicas": 3}}
    assert openstack["glance"]["replicas"] == 2
    assert openstack["cinder"]["api"] == {"replicas": 2}
    assert openstack["cinder"]["scheduler"] == {"replicas": 2}


def test_service_flags_cortex_tls_and_network():
    spec = control_plane(compose(
        services={"octavia": True, "neutron": False},
        cortex={"enabled": True, "pipelines": ["nova"]},
        tls={"enabled": True, "issuerRef": "letsencrypt-prod"},
        network={"externalNetwork": "floating", "mtu": 9000}))["spec"]
    assert spec["openstack"]["octavia"] == {"enabled": True}
    assert spec["openstack"]["neutron"] == {"enabled": False}
    assert spec["openstack"]["manila"] == {"enabled": False}
    assert spec["cortex"] == {"enabled": True, "pipelines": ["nova"]}
    assert spec["tls"] == {"enabled": True, "issuerRef": "letsencrypt-prod"}
    assert spec["network"] == {"externalNetwork": "floating", "mtu": 9000}


def test_disabled_parts_carry_no_settings():
    spec = control_plane(compose(cortex={"enabled": False}, tls={"enabled": False, "issuerRef": "x"}))["spec"]
    assert spec["cortex"] == {"enabled": False}
    assert spec["tls"] == {"enabled": False}


def test_ceph_integration_sections():
    result = compose(name="t", services={"manila": True})
    spec = control_plane(result)["spec"]
    assert spec["storage"]["ceph"] == {
        "secretRef": {"name": "ceph-client-t", "key": "userKey"},
        "user": "openstack-t",
        "pools": {"volumes": "t-volumes", "images": "t-images", "ephemeral": "t-ephemeral"},
        "filesystem": {"name": "t-cephfs"},
    }
    assert spec["openstack"]["cinder"]["backends"] == [{
        "name": "ceph-volumes", "type": "rbd", "pool": "t-volumes", "secretRef": "ceph-client-t",
        "user": "openstack-t", "storageCluster": "st-pool-a"}]
    assert spec["openstack"]["cinder"]["volumeTypes"] == [{"name": "st-pool-a", "backend": "ceph-volumes"}]
    assert spec["openstack"]["cinder"]["defaultVolumeType"] == "st-pool-a"
    assert spec["openstack"]["glance"]["backend"] == {"type": "rbd", "pool": "t-images"}
    assert spec["openstack"]["nova"]["ephemeral"] == {"backend": "rbd", "pool": "t-ephemeral"}
    assert spec["openstack"]["manila"] == {"enabled": True, "backends": [
        {"name": "cephfs", "type": "cephfs", "filesystem": "t-cephfs"}]}


def test_control_plane_cluster_default_and_override():
    assert compose()["control_plane_cluster"] == "eu-de-1-control-plane"
    assert compose(controlPlaneCluster="eu-de-1-control-plane-2")["control_plane_cluster"] == \
        "eu-de-1-control-plane-2"


# --- storage clusters ------------------------------------------------------------

def test_default_claim_gets_the_seeds_rook_resources():
    manifests = compose(name="t")["storage"]["st-pool-a"]
    assert kinds_and_names(manifests) == [
        ("CephBlockPool", "t-volumes"), ("CephBlockPool", "t-images"),
        ("CephBlockPool", "t-ephemeral"), ("CephClient", "openstack-t")]
    assert all(m["apiVersion"] == "ceph.rook.io/v1" for m in manifests)
    assert all(m["metadata"]["namespace"] == "rook-ceph" for m in manifests)
    volumes, images, ephemeral, client = manifests
    assert volumes["spec"] == {"failureDomain": "host",
                               "replicated": {"size": 3, "requireSafeReplicaSize": True},
                               "parameters": {"compression_mode": "aggressive"}}
    assert images["spec"] == {"failureDomain": "host", "replicated": {"size": 3},
                              "parameters": {"compression_mode": "aggressive"}}
    assert ephemeral["spec"] == {"failureDomain": "host", "replicated": {"size": 2},
                                 "parameters": {"compression_mode": "none"}}
    assert client["spec"] == {"caps": {
        "mon": "profile rbd",
        "osd": "profile rbd pool=t-volumes, profile rbd pool=t-images, profile rbd pool=t-ephemeral",
        "mgr": "profile rbd"}}


def test_pool_settings_come_from_the_claim():
    storage = {"ceph": {
        "volumePool": {"replication": 2, "compression": "passive", "quotaGB": 500},
        "imagePool": {"replication": 4, "compression": "force"},
        "ephemeralPool": {"replication": 1},
    }}
    volumes, images, ephemeral = compose(storage=storage)["storage"]["st-pool-a"][:3]
    assert volumes["spec"]["replicated"] == {"size": 2, "requireSafeReplicaSize": True}
    assert volumes["spec"]["parameters"] == {"compression_mode": "passive"}
    assert volumes["spec"]["quotas"] == {"maxSize": "500Gi"}
    assert images["spec"]["replicated"] == {"size": 4}
    assert images["spec"]["parameters"] == {"compression_mode": "force"}
    assert ephemeral["spec"]["replicated"] == {"size": 1}
    assert ephemeral["spec"]["parameters"] == {"compression_mode": "none"}


def test_single_replica_volume_pool_drops_require_safe_replica_size():
    volumes = compose(storage={"ceph": {"volumePool": {"replication": 1}}})["storage"]["st-pool-a"][0]
    assert volumes["spec"]["replicated"] == {"size": 1, "requireSafeReplicaSize": False}


def test_no_quota_means_no_quotas_field():
    for quota in ({}, {"quotaGB": 0}):
        volumes = compose(storage={"ceph": {"volumePool": quota}})["storage"]["st-pool-a"][0]
        assert "quotas" not in volumes["spec"]


@pytest.mark.parametrize("services, storage, pools", [
    ({"cinder": False}, {}, ["t-images", "t-ephemeral"]),
    ({"glance": False}, {}, ["t-volumes", "t-ephemeral"]),
    ({"nova": False}, {}, ["t-volumes", "t-images"]),
    ({}, {"ephemeralPool": {"enabled": False}}, ["t-volumes", "t-images"]),
    ({"cinder": False, "glance": False}, {}, ["t-ephemeral"]),
])
def test_a_pool_only_exists_when_its_service_is_enabled(services, storage, pools):
    result = compose(services=services, storage={"ceph": storage})
    manifests = result["storage"]["st-pool-a"]
    assert [m["metadata"]["name"] for m in manifests if m["kind"] == "CephBlockPool"] == pools
    client = [m for m in manifests if m["kind"] == "CephClient"][0]
    assert client["spec"]["caps"]["osd"] == ", ".join("profile rbd pool=%s" % pool for pool in pools)
    assert sorted(control_plane(result)["spec"]["storage"]["ceph"]["pools"].values()) == sorted(pools)


def test_disabled_services_get_no_backends():
    openstack = control_plane(compose(services={"cinder": False, "glance": False, "nova": False}))["spec"]["openstack"]
    assert openstack["cinder"] == {"enabled": False}
    assert openstack["glance"] == {"enabled": False}
    assert openstack["nova"] == {"enabled": False}


def test_no_rbd_pools_means_no_client_no_secret_and_no_ceph_section():
    result = compose(services={"cinder": False, "glance": False, "nova": False})
    assert result["storage"] == {"st-pool-a": []}
    assert result["ceph_client_secrets"] == []
    assert "ceph" not in control_plane(result)["spec"]["storage"]


def test_nova_without_ephemeral_pool_uses_no_rbd_ephemeral():
    nova = control_plane(compose(storage={"ceph": {"ephemeralPool": {"enabled": False}}}))["spec"]["openstack"]["nova"]
    assert nova["enabled"] is True
    assert "ephemeral" not in nova


@pytest.mark.parametrize("services, storage, filesystem", [
    ({}, {}, False),
    ({"manila": True}, {}, True),
    ({}, {"filesystem": {"enabled": True}}, True),
    ({"manila": True}, {"filesystem": {"enabled": True}}, True),
])
def test_filesystem_when_enabled_or_manila(services, storage, filesystem):
    result = compose(services=services, storage={"ceph": storage})
    names = [m["metadata"]["name"] for m in result["storage"]["st-pool-a"] if m["kind"] == "CephFilesystem"]
    assert names == (["t-cephfs"] if filesystem else [])


def test_filesystem_spec():
    storage = {"ceph": {"filesystem": {"enabled": True, "dataPoolReplication": 2, "metadataPoolReplication": 4}}}
    filesystem = compose(storage=storage)["storage"]["st-pool-a"][-1]
    assert filesystem["spec"] == {
        "metadataPool": {"failureDomain": "host", "replicated": {"size": 4}},
        "dataPools": [{"name": "data0", "failureDomain": "host", "replicated": {"size": 2}}],
        "metadataServer": {"activeCount": 1, "activeStandby": True},
        # A deleted filesystem keeps its data until a removal with allow_data_loss releases it.
        "preserveFilesystemOnDelete": True, "preservePoolsOnDelete": True,
    }


def test_object_store_and_swift_user():
    manifests = compose(storage={"ceph": {"objectStore": {"enabled": True, "dataPoolReplication": 2}}})[
        "storage"]["st-pool-a"]
    store, user = manifests[-2:]
    assert store["kind"] == "CephObjectStore" and store["metadata"]["name"] == "t-rgw"
    assert store["spec"] == {"metadataPool": {"failureDomain": "host", "replicated": {"size": 3}},
                             "dataPool": {"failureDomain": "host", "replicated": {"size": 2}},
                             # No securePort: Rook refuses one without a certificate, and there is none to give.
                             "gateway": {"port": 80, "instances": 2},
                             "preservePoolsOnDelete": True}
    assert user["kind"] == "CephObjectStoreUser" and user["metadata"]["name"] == "swift-t"
    assert user["spec"] == {"store": "t-rgw", "displayName": "OpenStack Swift User - t",
                            "capabilities": {"user": "*", "bucket": "*"}}


def test_no_object_store_by_default():
    kinds = [m["kind"] for m in compose()["storage"]["st-pool-a"]]
    assert "CephObjectStore" not in kinds and "CephObjectStoreUser" not in kinds


# --- tiered pools ---------------------------------------------------------------------

def test_tiered_pools_each_get_volumes_and_a_client_for_their_own_pools():
    result = compose(name="t", storageClusters=["st-pool-a", "st-pool-b"],
                     services={"manila": True}, storage={"ceph": {"objectStore": {"enabled": True}}})
    assert list(result["storage"]) == ["st-pool-a", "st-pool-b"]
    assert kinds_and_names(result["storage"]["st-pool-a"]) == [
        ("CephBlockPool", "t-volumes"), ("CephBlockPool", "t-images"), ("CephBlockPool", "t-ephemeral"),
        ("CephClient", "openstack-t"), ("CephFilesystem", "t-cephfs"),
        ("CephObjectStore", "t-rgw"), ("CephObjectStoreUser", "swift-t")]
    assert kinds_and_names(result["storage"]["st-pool-b"]) == [
        ("CephBlockPool", "t-volumes"), ("CephClient", "openstack-t")]
    assert result["storage"]["st-pool-b"][1]["spec"]["caps"]["osd"] == "profile rbd pool=t-volumes"


def test_tiered_pools_get_one_cinder_backend_and_volume_type_each():
    cinder = control_plane(compose(name="t", storageClusters=["st-pool-a", "st-pool-b"]))["spec"]["openstack"]["cinder"]
    assert cinder["backends"] == [
        {"name": "ceph-volumes", "type": "rbd", "pool": "t-volumes", "secretRef": "ceph-client-t",
         "user": "openstack-t", "storageCluster": "st-pool-a"},
        {"name": "ceph-volumes-st-pool-b", "type": "rbd", "pool": "t-volumes",
         "secretRef": "ceph-client-t-st-pool-b", "user": "openstack-t", "storageCluster": "st-pool-b"}]
    assert cinder["volumeTypes"] == [{"name": "st-pool-a", "backend": "ceph-volumes"},
                                     {"name": "st-pool-b", "backend": "ceph-volumes-st-pool-b"}]
    assert cinder["defaultVolumeType"] == "st-pool-a"


def test_tiered_pools_propagate_one_secret_per_client():
    secrets = compose(name="t", storageClusters=["st-pool-a", "st-pool-b"])["ceph_client_secrets"]
    assert secrets == [
        {"storage_cluster": "st-pool-a",
         "source": {"namespace": "rook-ceph", "name": "rook-ceph-client-openstack-t"},
         "target": {"namespace": "openstack-t", "name": "ceph-client-t"}, "key": ["userID", "userKey"]},
        {"storage_cluster": "st-pool-b",
         "source": {"namespace": "rook-ceph", "name": "rook-ceph-client-openstack-t"},
         "target": {"namespace": "openstack-t", "name": "ceph-client-t-st-pool-b"}, "key": ["userID", "userKey"]}]


def test_a_ceph_client_version_is_a_new_user_the_control_plane_names_and_retires_the_lower_ones():
    claim = make_claim(name="t", storageClusters=["st-pool-a", "st-pool-b"])
    result = compose_openstack_cluster(claim, REGION, ceph_client_version=2)
    spec = control_plane(result)["spec"]
    assert spec["storage"]["ceph"]["secretRef"] == {"name": "ceph-client-t-v2", "key": "userKey"}
    assert spec["storage"]["ceph"]["user"] == "openstack-t-v2"
    assert [(b["secretRef"], b["user"]) for b in spec["openstack"]["cinder"]["backends"]] == [
        ("ceph-client-t-v2", "openstack-t-v2"), ("ceph-client-t-st-pool-b-v2", "openstack-t-v2")]
    for pool in ("st-pool-a", "st-pool-b"):
        assert [m["metadata"]["name"] for m in result["storage"][pool] if m["kind"] == "CephClient"] == \
            ["openstack-t-v2"]
        assert [m["metadata"]["name"] for m in result["retired_ceph_clients"][pool]] == ["openstack-t", "openstack-t-v1"]
    assert [(c["source"]["name"], c["target"]["name"]) for c in result["ceph_client_secrets"]] == [
        ("rook-ceph-client-openstack-t-v2", "ceph-client-t-v2"),
        ("rook-ceph-client-openstack-t-v2", "ceph-client-t-st-pool-b-v2")]
    assert [(m["kind"], m["metadata"]["namespace"], m["metadata"]["name"])
            for m in result["retired_ceph_client_secrets"]] == [
        ("Secret", "openstack-t", "ceph-client-t"), ("Secret", "openstack-t", "ceph-client-t-v1"),
        ("Secret", "openstack-t", "ceph-client-t-st-pool-b"), ("Secret", "openstack-t", "ceph-client-t-st-pool-b-v1")]
    assert compose_openstack_cluster(claim, REGION)["retired_ceph_clients"] == {}


@pytest.mark.parametrize("version", [-1, "x", 1.5, True, None])
def test_a_bad_ceph_client_version_is_refused(version):
    with pytest.raises(InputError) as error:
        compose_openstack_cluster(make_claim(), REGION, ceph_client_version=version)
    assert "ceph_client_version" in str(error.value)


def test_tiered_pools_without_cinder_leave_further_pools_empty():
    result = compose(storageClusters=["st-pool-a", "st-pool-b"], services={"cinder": False})
    assert result["storage"]["st-pool-b"] == []
    assert [s["storage_cluster"] for s in result["ceph_client_secrets"]] == ["st-pool-a"]


# --- errors and guarantees --------------------------------------------------------------

def test_invalid_claim_raises_with_every_problem():
    with pytest.raises(InputError) as error:
        compose(size="huge", storageClusters=["st-pool-z"])
    assert [p.split(",")[0] for p in error.value.problems] == [
        "tenant-t/t spec.size: must be one of small",
        "tenant-t/t spec.storageClusters[0]: st-pool-z is not a storage pool of region eu-de-1 (known: st-pool-a"]


def test_any_invalid_claim_of_the_set_stops_the_composition():
    good, twin = make_claim("a"), make_claim("a")
    twin["metadata"]["namespace"] = "other"
    with pytest.raises(InputError, match="maps to namespace openstack-a"):
        compose_openstack_cluster(good, REGION, claims=[good, twin])
    with pytest.raises(InputError, match="maps to namespace openstack-a"):
        compose_openstack_clusters([good, twin], REGION)


def test_the_claim_must_be_one_of_the_claims():
    with pytest.raises(InputError, match="^claims: must be a list that holds the claim tenant-a/a$"):
        compose_openstack_cluster(make_claim("a"), REGION, claims=[make_claim("b")])


def test_an_invalid_region_raises():
    with pytest.raises(InputError, match="^region name: is required$"):
        compose_openstack_cluster(make_claim(), {"hypervisor_pools": []})


def test_composition_does_not_change_the_claim():
    claim = make_claim(services={"manila": True})
    before = copy.deepcopy(claim)
    result = compose_openstack_cluster(claim, REGION)
    control_plane(result)["spec"]["compute"]["hypervisorClusters"].append("x")
    assert claim == before


def test_lab_tenants_compose(inventory_of, tenants_dir):
    results = compose_openstack_clusters(load_claim_files(tenants_dir("lab")), inventory_of("lab"))
    assert [(r["name"], r["control_plane_cluster"], list(r["storage"])) for r in results] == [
        ("lab-tenant-a", "lab-control-plane", ["st-pool-a"]),
        ("lab-tenant-b", "lab-control-plane", ["st-pool-a", "st-pool-b"]),
    ]


# --- the region's own ControlPlane, and every ControlPlane against the lab's c5c3.io CRD -----------

def _control_plane_schema():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "lab", "crds", "c5c3.io.yaml")
    with open(path) as handle:
        crds = list(yaml.safe_load_all(handle))
    for crd in crds:
        if crd and crd["spec"]["names"]["kind"] == "ControlPlane":
            return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    raise AssertionError("no ControlPlane CRD")


REGION_MODEL = {"name": "eu-de-1", "hypervisor_pools": [{"name": "hv-pool-a"}, {"name": "hv-pool-b"}],
                "storage_pools": [{"name": "st-pool-a"}]}


def test_region_control_plane_is_the_seeds_for_the_regions_pools():
    cp = region_control_plane(REGION_MODEL)
    assert cp["metadata"] == {"name": "eu-de-1", "namespace": "openstack", "labels": {
        "c5c3.io/openstack-cluster-name": "eu-de-1", "app.kubernetes.io/managed-by": "c5c3.cobaltcore"}}
    spec = cp["spec"]
    assert spec["compute"] == {"hypervisorClusters": ["hv-pool-a", "hv-pool-b"]}
    assert spec["storage"] == {"storageClusters": ["st-pool-a"]}
    assert spec["korc"] == {"enabled": True, "bootstrapResources": ["domains", "projects"]}
    assert spec["global"] == {"region": "eu-de-1"}
    assert spec["services"]["keystone"] == {"enabled": True, "replicas": 3, "publicEndpoint":
                                            "https://keystone.openstack.svc.cluster.local:5000/v3"}
    # Keystone's public endpoint by the region's template, for the cluster named after the region (phase 5's catalog).
    planned = region_control_plane(REGION_MODEL, public_url_template="https://{name}.{cluster}.example.com{path}")
    assert planned["spec"]["services"]["keystone"]["publicEndpoint"] == "https://keystone.eu-de-1.example.com/v3"
    enabled = sorted(name for name, s in spec["services"].items() if s["enabled"])
    assert enabled == sorted(["keystone", "glance", "placement", "nova", "neutron", "cinder"])
    small = region_control_plane(REGION_MODEL, ["keystone", "glance"], "small")["spec"]
    assert small["services"]["keystone"]["replicas"] == 1 and small["services"]["nova"] == {"enabled": False}


def test_region_control_plane_reports_every_problem():
    with pytest.raises(InputError) as error:
        region_control_plane({"name": "EU_1"}, ["glance", "swift"], "huge")
    assert error.value.problems == [
        "services: unknown swift (known: %s)" % ", ".join(REGION_SERVICES),
        "services: keystone is required (every OpenStack cluster has its own)",
        "size: unknown size 'huge', expected one of: small, medium, large, xlarge",
        "region name: 'EU_1' is not a DNS-1123 label (it names the ControlPlane)"]


def test_the_key_rotation_interval_is_whole_days():
    weekly = region_control_plane(REGION_MODEL, key_rotation_interval="168h")["spec"]["services"]["keystone"]
    assert weekly["rotationInterval"] == "168h"
    assert "rotationInterval" not in region_control_plane(REGION_MODEL)["spec"]["services"]["keystone"]
    for bad in ("25h", "0h", "a week", "-24h"):
        with pytest.raises(InputError) as error:
            region_control_plane(REGION_MODEL, key_rotation_interval=bad)
        assert error.value.problems[0].startswith("key_rotation_interval: %r must be a positive whole number" % bad)


def test_every_control_plane_fits_the_lab_crd(eu_de_1):
    schema = _control_plane_schema()
    manifests = [region_control_plane(REGION_MODEL, list(REGION_SERVICES), key_rotation_interval="48h")]
    region, claims = eu_de_1
    manifests += [control_plane(compose_openstack_cluster(claim, region, claims)) for claim in claims]
    # As phase 7 applies them: with each storage pool's monitors (the Ceph section's and each RBD backend's).
    pools = sorted(set(pool for claim in claims for pool in claim["spec"]["storageClusters"]))
    planned = tenants.plan(claims, region, dict((pool, {"monitors": ["10.101.%d.10:6789" % (index + 1)]})
                                                for index, pool in enumerate(pools)), require_monitors=True)
    manifests += [m for batch in planned["control_plane"].values() for m in batch if m["kind"] == "ControlPlane"]
    assert len(manifests) == 9
    assert any(len([b for b in m["spec"]["openstack"]["cinder"].get("backends", []) if b.get("monitors")]) > 1
               for m in manifests[5:])  # a tiered tenant
    for manifest in manifests:
        assert validate(schema, manifest["spec"], "spec") == [], manifest["metadata"]["name"]


def region_with_pools(workers, failure_domain=None):
    """REGION whose storage pools have `workers` Nodes and, if given, a ceph.failure_domain."""
    pool = {"workers": workers}
    if failure_domain:
        pool["ceph"] = {"failure_domain": failure_domain}
    return dict(REGION, storage_pools=[dict(pool, name=name) for name in REGION["storage_pools"]])


def _pool_failure_domains(manifests):
    """The failure domain of every pool the manifests make: block pools, the filesystem's, the object store's."""
    domains = []
    for manifest in manifests:
        spec = manifest["spec"]
        if manifest["kind"] == "CephBlockPool":
            domains.append(spec["failureDomain"])
        elif manifest["kind"] == "CephFilesystem":
            domains += [spec["metadataPool"]["failureDomain"]] + [p["failureDomain"] for p in spec["dataPools"]]
        elif manifest["kind"] == "CephObjectStore":
            domains += [spec["metadataPool"]["failureDomain"], spec["dataPool"]["failureDomain"]]
    return domains


def test_every_pool_spreads_over_the_storage_pools_failure_domain():
    claim = make_claim(storage={"ceph": {"filesystem": {"enabled": True}, "objectStore": {"enabled": True}}})
    domains = _pool_failure_domains(compose_openstack_cluster(claim, region_with_pools(1, "osd"))["storage"]["st-pool-a"])
    assert len(domains) == 7 and set(domains) == {"osd"}  # three block pools, two of the filesystem, two of the store
    hosts = _pool_failure_domains(compose_openstack_cluster(claim, region_with_pools(3))["storage"]["st-pool-a"])
    assert len(hosts) == 7 and set(hosts) == {"host"}


def test_more_replicas_than_hosts_is_refused_naming_each_field_and_pool():
    claim = make_claim(storageClusters=["st-pool-a", "st-pool-b"],
                       storage={"ceph": {"volumePool": {"replication": 3}, "imagePool": {"replication": 2},
                                         "ephemeralPool": {"replication": 2}}})
    with pytest.raises(InputError) as error:
        compose_openstack_clusters([claim], region_with_pools(2))
    assert error.value.problems == [
        "tenant-t/t spec.storage.ceph.volumePool.replication: 3 replicas need 3 hosts, but storage pool st-pool-a has "
        "2 (workers; its ceph.failure_domain is host): lower the replication or spread the pool's replicas over OSDs",
        "tenant-t/t spec.storage.ceph.volumePool.replication: 3 replicas need 3 hosts, but storage pool st-pool-b has "
        "2 (workers; its ceph.failure_domain is host): lower the replication or spread the pool's replicas over OSDs"]
    # Replicas spread over OSDs, or enough hosts: composed.
    assert compose_openstack_clusters([claim], region_with_pools(2, "osd"))
    assert compose_openstack_clusters([claim], region_with_pools(3))


def test_the_filesystems_and_the_object_stores_replicas_count_too():
    claim = make_claim(storage={"ceph": {"volumePool": {"replication": 2}, "imagePool": {"replication": 2},
                                         "ephemeralPool": {"replication": 2},
                                         "filesystem": {"enabled": True, "dataPoolReplication": 2,
                                                        "metadataPoolReplication": 3},
                                         "objectStore": {"enabled": True, "dataPoolReplication": 2}}})
    with pytest.raises(InputError) as error:
        compose_openstack_clusters([claim], region_with_pools(2))
    assert [p.split(":")[0] for p in error.value.problems] == [
        "tenant-t/t spec.storage.ceph.filesystem.metadataPoolReplication",
        "tenant-t/t spec.storage.ceph.objectStore.enabled (its metadata pools)"]
    assert compose_openstack_clusters([claim], region_with_pools(2, "osd"))

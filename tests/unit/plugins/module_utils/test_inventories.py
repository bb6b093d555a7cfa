# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventories shipped with the collection describe valid regions and tenants."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob

import pytest
import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import load_claim_files, validate_claims
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region

REGIONS = ["eu-de-1", "us-east-1", "lab"]
GROUPS = ["gardener", "ironcore", "management", "control_plane", "hypervisor_pools", "storage_pools", "shoots"]


@pytest.mark.parametrize("region", REGIONS)
def test_inventory_is_a_valid_region(inventory_of, region):
    model = build_region(inventory_of(region))
    assert model.name == region
    assert model.clusters == {"gardener": "garden", "ironcore": "baremetal", "management": "management-cluster"}
    assert [pool.name for pool in model.control_planes] == [region + "-control-plane"]


@pytest.mark.parametrize("region", REGIONS)
def test_inventory_groups(inventory_of, region):
    assert sorted(inventory_of(region)["groups"]) == sorted(GROUPS)


@pytest.mark.parametrize("region", REGIONS)
def test_tenants_are_valid(inventory_of, tenants_dir, region):
    assert validate_claims(load_claim_files(tenants_dir(region)), inventory_of(region)) == []


@pytest.mark.parametrize("region", REGIONS)
def test_pool_files_hold_only_cobaltcore_pool(inventory_path, region):
    paths = glob.glob(inventory_path(region, "host_vars", "*", "pool.yml"))
    assert paths
    for path in paths:
        with open(path) as handle:
            assert list(yaml.safe_load(handle)) == ["cobaltcore_pool"], path


def pools(inventory_of, region, kind):
    return dict((pool.name, pool.data) for pool in getattr(build_region(inventory_of(region)), kind))


def test_eu_de_1_pools_are_the_seeds(inventory_of):
    hypervisors = pools(inventory_of, "eu-de-1", "hypervisor_pools")
    storage = pools(inventory_of, "eu-de-1", "storage_pools")
    assert dict((name, data["workers"]) for name, data in hypervisors.items()) == {
        "hv-pool-a": 50, "hv-pool-b": 100, "hv-pool-compliance": 20}
    assert dict((name, (data.get("capacity"), data.get("media"))) for name, data in storage.items()) == {
        "st-pool-a": ("500Ti", "nvme"), "st-pool-b": ("1Pi", "hdd"), "st-pool-encrypted": (None, "nvme")}
    assert hypervisors["hv-pool-compliance"]["labels"] == {
        "dedicated": "true", "compliance": "sox", "isolation": "physical"}
    assert hypervisors["hv-pool-compliance"]["ironcore"] == {
        "machine_pool": "ironcore-dedicated-rack-1", "machine_class": "baremetal-kvm-isolated"}
    assert storage["st-pool-encrypted"]["encrypted"] is True
    assert pools(inventory_of, "eu-de-1", "control_planes")["eu-de-1-control-plane"]["workers"] == 5


def test_us_east_1_pools_are_the_seeds(inventory_of):
    assert pools(inventory_of, "us-east-1", "hypervisor_pools")["hv-pool-us"]["workers"] == 75
    assert pools(inventory_of, "us-east-1", "storage_pools")["st-pool-us"]["capacity"] == "750Ti"


def test_finance_prod_has_its_dedicated_pools_alone(inventory_of, tenants_dir):
    claims = load_claim_files(tenants_dir("eu-de-1"))
    users = dict((c["metadata"]["name"], c["spec"]["hypervisorClusters"] + c["spec"]["storageClusters"])
                 for c in claims)
    assert users["finance-prod"] == ["hv-pool-compliance", "st-pool-encrypted"]
    assert not any(set(users["finance-prod"]) & set(pools) for name, pools in users.items() if name != "finance-prod")


def test_lab_is_small(inventory_of):
    region = build_region(inventory_of("lab"))
    assert [p.name for p in region.hypervisor_pools] == ["hv-pool-a", "hv-pool-b"]
    assert [p.name for p in region.storage_pools] == ["st-pool-a", "st-pool-b"]
    assert all(1 <= p.data["workers"] <= 2 for kind in ("control_plane", "hypervisor", "storage")
               for p in region.pools(kind))


@pytest.mark.parametrize("region", REGIONS)
def test_every_flow_between_clusters_has_a_reachable_address(inventory_of, inventory_path, region):
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import endpoints
    with open(inventory_path(region, "group_vars", "all", "network.yml")) as handle:
        network = yaml.safe_load(handle)["cobaltcore_network"]
    inventory = inventory_of(region)
    gardener = inventory["hostvars"][inventory["groups"]["gardener"][0]]["cobaltcore_gardener"]
    found = endpoints.plan(build_region(inventory).to_dict(), network, gardener)
    assert found["public_url_template"]
    assert found["ovn_southbound"].startswith("tcp:")
    assert sorted(found["storage_pools"]) == sorted(inventory["groups"]["storage_pools"])
    assert all(pool["public"] for pool in found["storage_pools"].values())

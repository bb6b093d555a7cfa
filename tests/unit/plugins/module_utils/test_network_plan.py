# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region's network plan: good plans, and bad ones failing once naming every offending field."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import os

import pytest
import yaml

from conftest import REPO
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import network_plan
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region

REGION = {"name": "lab", "hypervisor_pools": [
    {"name": "hv-pool-a", "workers": 2, "network": {
        "underlay": "10.20.1.0/24", "mtu": 9000, "encapsulation": "10.20.1.10-10.20.1.250",
        "bridge_mappings": {"physnet-provider": "br-provider", "physnet-external": "br-ex"}}},
    {"name": "hv-pool-b", "workers": 1, "network": {
        "underlay": "10.20.2.0/24", "encapsulation": "10.20.2.64/26",
        "bridge_mappings": {"physnet-provider": "br-provider"}}},
]}
NETWORK = {"provider_networks": [
    {"name": "provider", "physical_network": "physnet-provider", "type": "vlan", "vlan_ranges": ["100:199", 300],
     "pools": ["hv-pool-a", "hv-pool-b"]},
    {"name": "external", "physical_network": "physnet-external", "type": "flat", "pools": ["hv-pool-a"]},
]}


def problems(region, network=None):
    with pytest.raises(InputError) as caught:
        network_plan.build_plan(region, NETWORK if network is None else network)
    return caught.value.problems


def region_with(**pools):
    region = copy.deepcopy(REGION)
    for pool in region["hypervisor_pools"]:
        pool["network"].update(pools.get(pool["name"].replace("-", "_"), {}))
    return region


def test_a_good_plan_reports_each_pools_tenant_mtu_after_neutrons_geneve_overhead():
    plan = network_plan.build_plan(REGION, NETWORK)
    assert plan["geneve_overhead"] == {4: 58, 6: 78}
    assert plan["pools"]["hv-pool-a"]["tenant_mtu"] == 9000 - 58
    assert plan["pools"]["hv-pool-b"]["mtu"] == 1500 and plan["pools"]["hv-pool-b"]["tenant_mtu"] == 1442
    assert plan["tenant_mtu"] == 1442  # a geneve network spans every pool
    assert plan["pools"]["hv-pool-a"]["encapsulation"][0] == "10.20.1.10/31"
    assert plan["pools"]["hv-pool-b"]["encapsulation"] == ["10.20.2.64/26"]
    assert plan["provider_networks"][0]["vlan_ranges"] == ["100:199", "300:300"]
    assert network_plan.bridge_mappings_text(plan["pools"]["hv-pool-a"]["bridge_mappings"]) == \
        "physnet-external:br-ex,physnet-provider:br-provider"
    assert network_plan.encapsulation_contains(plan["pools"]["hv-pool-a"], "10.20.1.12")
    assert not network_plan.encapsulation_contains(plan["pools"]["hv-pool-a"], "10.20.1.5")
    assert network_plan.in_underlay(plan["pools"]["hv-pool-b"], "10.20.2.77")


def test_explicit_addresses_and_ipv6_underlays():
    region = region_with(hv_pool_a={"encapsulation": ["10.20.1.20", "10.20.1.21"]},
                         hv_pool_b={"underlay": "fd00:20:2::/64", "encapsulation": "fd00:20:2::10-fd00:20:2::20"})
    plan = network_plan.build_plan(region, NETWORK)
    assert plan["pools"]["hv-pool-a"]["encapsulation"] == ["10.20.1.20", "10.20.1.21"]
    assert plan["pools"]["hv-pool-b"]["tenant_mtu"] == 1500 - 78


def test_overlapping_underlays_duplicate_address_and_a_missing_bridge_fail_once_naming_each():
    region = region_with(hv_pool_a={"encapsulation": ["10.20.1.20", "10.20.1.21", "10.20.1.20"]},
                         hv_pool_b={"underlay": "10.20.0.0/16", "encapsulation": "10.20.1.16/28",
                                    "bridge_mappings": {}})
    found = problems(region)
    assert found == [
        "hv-pool-a.network.encapsulation[2]: 10.20.1.20 is listed twice",
        "hv-pool-b.network.underlay: 10.20.0.0/16 overlaps hv-pool-a's underlay 10.20.1.0/24",
        "hv-pool-b.network.encapsulation: 10.20.1.20/31 are also hv-pool-a's encapsulation addresses",
        "hv-pool-b.network.bridge_mappings: has no bridge for physical network physnet-provider, which provider "
        "network provider needs",
    ], found


def test_every_field_is_checked():
    region = region_with(
        hv_pool_a={"underlay": "10.20.1.1/24", "mtu": "big", "encapsulation": "10.20.9.1-10.20.1.2",
                   "bridge_mappings": {"Phys_Net": "br-int", "physnet-provider": "a-bridge-name-too-long"},
                   "vlan": 3},
        hv_pool_b={"encapsulation": "10.20.3.0/30", "mtu": 1300})
    network = {"provider_networks": [
        {"name": "provider", "physical_network": "physnet-provider", "type": "vlan",
         "vlan_ranges": ["0:10", "200:100", "150:160", "155:170", "x"], "pools": ["hv-pool-b", "hv-pool-z"]},
        {"name": "provider", "physical_network": "physnet-provider", "type": "vlan", "vlan_ranges": ["160:165"]},
        {"name": "flat1", "physical_network": "physnet-provider", "type": "flat", "vlan_ranges": ["1:2"]},
        {"name": "flat2", "physical_network": "physnet-provider", "type": "flat"},
        {"name": "odd", "physical_network": "physnet-provider", "type": "vxlan"},
    ], "mtu": 1}
    found = problems(region, network)
    expected = [
        "cobaltcore_network.mtu: is not a field of the region's network",
        "hv-pool-a.network.vlan: is not a field of a pool's network",
        "hv-pool-a.network.underlay: '10.20.1.1/24' is not a network in CIDR notation",
        "hv-pool-a.network.mtu: 'big' is not an MTU",
        "hv-pool-a.network.encapsulation: '10.20.9.1-10.20.1.2' is not a range",
        "hv-pool-a.network.bridge_mappings.Phys_Net: 'Phys_Net' is not a physical network name",
        "hv-pool-a.network.bridge_mappings.Phys_Net: br-int is ovn-controller's integration bridge",
        "hv-pool-a.network.bridge_mappings.physnet-provider: 'a-bridge-name-too-long' is not an OVS bridge name",
        "hv-pool-b.network.encapsulation: 10.20.3.0/30 are outside the underlay 10.20.2.0/24",
        "hv-pool-b.network.mtu: 1300 leaves tenant networks 1242 bytes after geneve's 58, below the 1280 IPv6 needs",
        "cobaltcore_network.provider_networks[0].vlan_ranges[0]: '0:10': VLAN IDs are 1-4094",
        "cobaltcore_network.provider_networks[0].vlan_ranges[1]: '200:100' starts after it ends",
        "cobaltcore_network.provider_networks[0].vlan_ranges[3]: '155:170' overlaps 150:160 of the same network",
        "cobaltcore_network.provider_networks[0].vlan_ranges[4]: 'x' is not a VLAN range",
        "cobaltcore_network.provider_networks[0].pools: hv-pool-z is not a hypervisor pool of the region",
        "cobaltcore_network.provider_networks[1].name: provider is also provider_networks[0]",
        "cobaltcore_network.provider_networks[1].vlan_ranges: 160:165 overlaps 150:160 of provider on physnet-provider",
        "cobaltcore_network.provider_networks[2].vlan_ranges: a flat network has no VLANs",
        "cobaltcore_network.provider_networks[3].physical_network: physnet-provider carries flat network flat1",
        "cobaltcore_network.provider_networks[4].type: 'vxlan' is not one of vlan, flat",
    ]
    for text in expected:
        assert any(p.startswith(text) for p in found), (text, found)


def test_a_pool_without_a_network_and_too_few_addresses():
    region = copy.deepcopy(REGION)
    del region["hypervisor_pools"][1]["network"]
    region["hypervisor_pools"][0]["workers"] = 3
    region["hypervisor_pools"][0]["network"]["encapsulation"] = ["10.20.1.20", "10.20.1.21"]
    found = problems(region, {})
    assert found == ["hv-pool-a.network.encapsulation: offers 2 address(es) for 3 workers",
                     "hv-pool-b.network: is required: every hypervisor pool needs an underlay for geneve"]


def test_the_underlays_network_and_broadcast_addresses_are_no_encapsulation_addresses():
    found = problems(region_with(hv_pool_b={"encapsulation": "10.20.2.0/24"}))
    assert found == ["hv-pool-b.network.encapsulation: holds 10.20.2.0 and 10.20.2.255, the underlay's "
                     "network/broadcast address"]


def test_ipv4_only_tenants_accept_a_small_mtu():
    region = region_with(hv_pool_b={"mtu": 1300})
    assert network_plan.build_plan(region, dict(NETWORK, tenant_ipv6=False))["tenant_mtu"] == 1242


def test_bridge_mappings_parse_as_ovs_writes_them():
    assert network_plan.parse_bridge_mappings("a:br-a, b:br-b") == {"a": "br-a", "b": "br-b"}
    assert network_plan.parse_bridge_mappings("") == {}
    assert network_plan.parse_bridge_mappings("a") is None
    assert network_plan.parse_bridge_mappings("a:x,a:y") is None


@pytest.mark.parametrize("inventory", ["lab", "eu-de-1", "us-east-1"])
def test_the_shipped_inventories_have_valid_plans(inventory):
    base = os.path.join(REPO, "inventories", inventory)
    hosts = yaml.safe_load(open(os.path.join(base, "hosts.yml")))["all"]["children"]["hypervisor_pools"]["hosts"]
    pools = []
    for host in hosts:
        pool = yaml.safe_load(open(os.path.join(base, "host_vars", host, "pool.yml")))["cobaltcore_pool"]
        pools.append(dict(pool, name=host))
    network = yaml.safe_load(open(os.path.join(base, "group_vars", "all", "network.yml")))["cobaltcore_network"]
    region = build_region({"name": inventory, "hypervisor_pools": pools}).to_dict()
    plan = network_plan.build_plan(region, network)
    assert plan["tenant_mtu"] >= 1280


def test_a_shoot_node_network_other_than_the_underlay_is_named():
    region = copy.deepcopy(REGION)
    region["hypervisor_pools"][0]["gardener"] = {"networking": {"nodes": "10.30.0.0/24"}}
    region["hypervisor_pools"][1]["gardener"] = {"networking": {"nodes": "10.20.2.0/24"}}  # the same: fine
    assert problems(region) == ["hv-pool-a.gardener.networking.nodes: 10.30.0.0/24 is not the pool's underlay "
                                "10.20.1.0/24; leave it out"]

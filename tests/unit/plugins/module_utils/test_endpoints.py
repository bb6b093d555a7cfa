# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region's cross-cluster addresses (seed 004): what another cluster can reach, and what the preflight refuses."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import endpoints

GARDENER = {"networking": {"type": "calico", "pods": "100.64.0.0/12", "services": "100.80.0.0/13"}}
REGION = {
    "control_planes": [{"name": "eu-de-1-control-plane"}],
    "hypervisor_pools": [{"name": "hv-a", "network": {"underlay": "10.20.1.0/24"}}],
    "storage_pools": [{"name": "st-a", "network": {"public": "10.30.1.0/24"}},
                      {"name": "st-b", "network": {"public": "10.30.2.0/24"}}],
}
NETWORK = {"endpoints": {"public_url_template": "https://{name}.{cluster}.eu-de-1.example.com{path}",
                         "ovn_southbound": "tcp:10.100.0.50:6642"}}


def problems(region=None, network=None):
    with pytest.raises(InputError) as error:
        endpoints.plan(region or REGION, network or NETWORK, GARDENER)
    return error.value.problems


def with_endpoints(**changes):
    network = copy.deepcopy(NETWORK)
    network["endpoints"].update(changes)
    return network


def test_a_complete_plan_names_every_flow_and_its_address():
    found = endpoints.plan(REGION, NETWORK, GARDENER)
    assert found["public_url_template"] == NETWORK["endpoints"]["public_url_template"]
    assert found["storage_pools"] == {"st-a": {"public": "10.30.1.0/24"}, "st-b": {"public": "10.30.2.0/24"}}
    assert found["ovn_southbound"] == "tcp:10.100.0.50:6642"
    assert [(f["name"], f["from"], f["to"]) for f in found["flows"]] == [
        ("public-api", ["users"], ["eu-de-1-control-plane"]),
        ("ovn-southbound", ["hv-a"], ["eu-de-1-control-plane"]),
        ("ceph-monitors", ["eu-de-1-control-plane", "hv-a"], ["st-a"]),
        ("ceph-monitors", ["eu-de-1-control-plane", "hv-a"], ["st-b"])]


@pytest.mark.parametrize("remote, why", [
    ("tcp:ovn-sb.ovn-system.svc.cluster.local:6642", "resolves only inside a cluster"),
    ("tcp:ovn-sb:6642", "resolves only inside a cluster"),
    ("ssl:100.80.0.20:6642", "100.80.0.20 is inside the services network 100.80.0.0/13 of eu-de-1-control-plane"),
    ("tcp:100.64.1.5:6642", "100.64.1.5 is inside the pods network 100.64.0.0/12 of eu-de-1-control-plane"),
    ("10.100.0.50:6642", "is not an OVSDB remote such as tcp:10.100.0.50:6642"),
    ("tcp:10.100.0.50:70000", "is not an OVSDB remote"),
])
def test_an_ovn_southbound_the_hypervisors_cannot_reach_is_refused(remote, why):
    (found,) = problems(network=with_endpoints(ovn_southbound=remote))
    assert found.startswith("cobaltcore_network.endpoints.ovn_southbound: ") and why in found, found
    assert found.endswith("(flow ovn-southbound from hv-a to eu-de-1-control-plane)"), found


def test_an_ovn_southbound_is_needed_only_with_hypervisor_pools():
    network = copy.deepcopy(NETWORK)
    del network["endpoints"]["ovn_southbound"]
    (found,) = problems(network=network)
    assert found.startswith("cobaltcore_network.endpoints.ovn_southbound: is required")
    region = dict(REGION, hypervisor_pools=[])
    assert endpoints.plan(region, network, GARDENER)["ovn_southbound"] is None
    assert endpoints.plan(REGION, with_endpoints(ovn_southbound="ssl:ovn-sb.eu-de-1.example.com:6642"),
                          GARDENER)["ovn_southbound"] == "ssl:ovn-sb.eu-de-1.example.com:6642"


@pytest.mark.parametrize("template", ["https://{name}.{namespace}.svc.cluster.local:{port}{path}",
                                      "https://{name}.{namespace}.svc{path}", "https://{name}:{port}{path}"])
def test_an_in_cluster_public_name_is_refused_naming_flow_field_and_clusters(template):
    (found,) = problems(network=with_endpoints(public_url_template=template))
    assert found.startswith("cobaltcore_network.endpoints.public_url_template: ")
    assert "resolves only inside a cluster" in found
    assert "(flow public-api from users and tenants to eu-de-1-control-plane)" in found


def test_a_service_network_address_is_refused_for_every_flow_at_once():
    region = copy.deepcopy(REGION)
    region["storage_pools"][0]["network"]["public"] = "100.80.4.0/24"   # inside the Shoots' Services
    found = problems(region, with_endpoints(public_url_template="https://100.80.0.10:8443{path}"))
    assert len(found) == 2
    assert "100.80.0.10 is inside the services network 100.80.0.0/13 of eu-de-1-control-plane" in found[0]
    assert "public_url_template" in found[0] and "flow public-api" in found[0]
    assert found[1].startswith("st-a.network.public: 100.80.4.0/24 overlaps the services network 100.80.0.0/13")
    assert "(flow ceph-monitors from eu-de-1-control-plane, hv-a to st-a)" in found[1]


def test_a_pools_own_pod_network_counts_too():
    region = copy.deepcopy(REGION)
    region["hypervisor_pools"][0]["gardener"] = {"networking": {"pods": "10.40.0.0/16"}}
    region["storage_pools"][0]["network"]["public"] = "10.40.3.0/24"
    (found,) = problems(region)
    assert "overlaps the pods network 10.40.0.0/16 of hv-a" in found


def test_required_fields_and_bad_values_are_all_named():
    region = copy.deepcopy(REGION)
    del region["storage_pools"][0]["network"]
    region["storage_pools"][1]["network"] = {"public": "10.30.1.0/24", "cluster": "10.31.0.0/24"}
    found = problems(region, {"endpoints": {"extra": 1, "ovn_southbound": "tcp:10.100.0.50:6642"}})
    assert found == [
        "cobaltcore_network.endpoints.extra: is not a field of the region's endpoints (public_url_template, "
        "ovn_southbound)",
        "cobaltcore_network.endpoints.public_url_template: is required: the catalog's public URLs (such as "
        "https://{name}.{cluster}.eu-de-1.example.com{path}) (flow public-api from users and tenants to "
        "eu-de-1-control-plane)",
        "st-a.network.public: is required: the network of the pool's Nodes where Rook runs the Ceph monitors "
        "(network.provider host), which the other clusters reach (flow ceph-monitors from eu-de-1-control-plane, "
        "hv-a to st-a)",
        "st-b.network.cluster: is not a field of a storage pool's network (public)",
    ]


def test_storage_public_networks_do_not_overlap_and_are_the_shoots_nodes():
    region = copy.deepcopy(REGION)
    region["storage_pools"][1]["network"]["public"] = "10.30.0.0/16"
    region["storage_pools"][0]["gardener"] = {"networking": {"nodes": "10.30.9.0/24"}}
    found = problems(region)
    assert found[0] == "st-a.gardener.networking.nodes: 10.30.9.0/24 is not the pool's public network 10.30.1.0/24; " \
                       "leave it out"
    assert found[1].startswith("st-b.network.public: 10.30.0.0/16 overlaps st-a's public network 10.30.1.0/24")


def test_a_template_that_is_no_url_is_refused():
    (found,) = problems(network=with_endpoints(public_url_template="{name} at {nowhere}"))
    assert "is not a URL template of {name}, {type}, {namespace}, {cluster}, {region}, {port} and {path}" in found


def test_monitors_outside_the_public_network():
    assert endpoints.monitors_outside(["10.30.1.5:6789", "[fd00::1]:3300", "100.80.0.9:6789"], "10.30.1.0/24") == [
        "[fd00::1]:3300", "100.80.0.9:6789"]
    assert endpoints.monitors_outside(["10.30.1.5:6789"], None) == ["10.30.1.5:6789"]


@pytest.mark.parametrize("host,inside", [("ovn-sb", True), ("a.b.svc", True), ("a.b.svc.cluster.local.", True),
                                         ("keystone.eu-de-1.example.com", False)])
def test_in_cluster_names(host, inside):
    assert endpoints.in_cluster_name(host) is inside

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 6's verdict on OVN (region/ovn.py): a converged region is ready; every deviation is named, all
of them in one message."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import network_plan, ovn

REGION = {"name": "lab", "hypervisor_pools": [
    {"name": "hv-pool-a", "workers": 2, "network": {
        "underlay": "10.20.1.0/24", "mtu": 9000, "encapsulation": "10.20.1.10-10.20.1.250",
        "bridge_mappings": {"physnet-provider": "br-provider"}}},
    {"name": "hv-pool-b", "workers": 1, "network": {
        "underlay": "10.20.2.0/24", "encapsulation": "10.20.2.10-10.20.2.250",
        "bridge_mappings": {"physnet-provider": "br-provider"}}},
]}
PLAN = network_plan.build_plan(REGION, {"provider_networks": [
    {"name": "provider", "physical_network": "physnet-provider", "type": "vlan", "vlan_ranges": ["100:199"]}]})
NB, SB = "tcp:ovn-nb.ovn-system.svc.cluster.local:6641", "tcp:ovn-sb.ovn-system.svc.cluster.local:6642"
NODES = {"hv-pool-a": [("hv-a-0", "10.20.1.10"), ("hv-a-1", "10.20.1.11")], "hv-pool-b": [("hv-b-0", "10.20.2.10")]}


def node(name, ip):
    return {"metadata": {"name": name, "labels": {"node-role.kubernetes.io/hypervisor": ""}},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}]}}


def chassis(name, ip, mappings=None):
    return {"metadata": {"name": name, "namespace": "ovn-system"},
            "spec": {"hostname": name, "systemId": "id-" + name,
                     "encapsulation": {"type": "geneve", "ip": ip},
                     "bridgeMappings": mappings if mappings is not None else [
                         {"physicalNetwork": "physnet-provider", "bridge": "br-provider"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True", "message": "registered"}]}}


def database(members):
    return {"replicas": 3, "readyReplicas": len(members), "members": list(members)}


def cluster(count=3, sb_members=("ovn-sb-0", "ovn-sb-1", "ovn-sb-2")):
    return {"metadata": {"name": "ovn", "namespace": "ovn-system", "generation": 2},
            "spec": {"northbound": {"replicas": 3}, "southbound": {"replicas": 3},
                     "controller": {"nodeSelector": {"node-role.kubernetes.io/hypervisor": ""}}},
            "status": {"observedGeneration": 2, "chassisCount": count, "activeControllers": count,
                       "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}],
                       "endpoints": {"northbound": NB, "southbound": SB},
                       "northbound": database(["ovn-nb-0", "ovn-nb-1", "ovn-nb-2"]),
                       "southbound": database(sb_members)}}


def converged():
    nodes = dict((pool, [node(n, ip) for n, ip in members]) for pool, members in NODES.items())
    found = [chassis(n, ip) for members in NODES.values() for n, ip in members]
    neutron = {"spec": {"ovn": {"nbConnection": NB, "sbConnection": SB}}}
    return cluster(), found, nodes, neutron


def test_a_converged_region_is_ready_and_reported():
    report = ovn.verify(PLAN, *converged())
    assert report["problems"] == [] and report["ready"]
    assert [(c["pool"], c["node"], c["ip"]) for c in report["chassis"]] == [
        ("hv-pool-a", "hv-a-0", "10.20.1.10"), ("hv-pool-a", "hv-a-1", "10.20.1.11"),
        ("hv-pool-b", "hv-b-0", "10.20.2.10")]
    assert report["raft"]["southbound"]["missing"] == [] and report["hypervisor_nodes"] == 3
    assert report["tenant_mtu"] == 1442 and report["pools"]["hv-pool-a"]["tenant_mtu"] == 8942


def test_every_deviation_is_named_in_one_message():
    found_cluster, found, nodes, neutron = converged()
    found_cluster = cluster(count=2, sb_members=("ovn-sb-0", "ovn-sb-1"))
    found = [c for c in found if c["metadata"]["name"] != "hv-a-1"]           # a Node without chassis
    found.append(chassis("gone-0", "10.20.1.99"))                              # a chassis without Node
    found[0]["spec"]["encapsulation"]["ip"] = "10.20.1.12"                     # not the Node's InternalIP
    found[1]["spec"]["bridgeMappings"] = []                                    # hv-b-0: no bridges
    neutron["spec"]["ovn"]["sbConnection"] = "tcp:10.0.0.1:6642"
    report = ovn.verify(PLAN, found_cluster, found, nodes, neutron, neutron_where="Neutron openstack/neutron")
    assert not report["ready"]
    message = ovn.failure_message(report, 600)
    assert message.startswith("OVN is not as planned after 600s: ")
    for expected in (
            "OVNCluster ovn-system/ovn: Southbound Raft has 2 of 3 members; missing ovn-sb-2",
            "OVNCluster ovn-system/ovn: chassisCount is 2, the hypervisor pools have 3 hypervisor Nodes",
            "Node hv-a-1 of hv-pool-a has no OVNChassis",
            "OVNChassis gone-0 has no hypervisor Node in any pool",
            "OVNChassis hv-a-0 (Node hv-a-0 of hv-pool-a): encapsulation ip 10.20.1.12 is not the Node's "
            "InternalIP 10.20.1.10",
            "OVNChassis hv-b-0 (Node hv-b-0 of hv-pool-b): bridge mappings none, planned physnet-provider:br-provider",
            "Neutron openstack/neutron: spec.ovn.sbConnection is tcp:10.0.0.1:6642, the OVNCluster's Southbound "
            "endpoint is " + SB):
        assert expected in message, (expected, message)
    assert len(report["problems"]) == 7, report["problems"]
    assert "Northbound" not in message


def test_an_address_outside_the_plan_or_shared_is_named():
    found_cluster, found, nodes, neutron = converged()
    nodes["hv-pool-a"][0]["status"]["addresses"][0]["address"] = "10.20.9.1"
    found[0]["spec"]["encapsulation"]["ip"] = "10.20.9.1"                      # outside the underlay
    nodes["hv-pool-a"][1]["status"]["addresses"][0]["address"] = "10.20.1.5"
    found[1]["spec"]["encapsulation"]["ip"] = "10.20.1.5"                      # in it, not planned
    problems = ovn.verify(PLAN, found_cluster, found, nodes, neutron)["problems"]
    assert problems == [
        "OVNChassis hv-a-0 (Node hv-a-0 of hv-pool-a): encapsulation ip 10.20.9.1 is outside the underlay "
        "10.20.1.0/24",
        "OVNChassis hv-a-1 (Node hv-a-1 of hv-pool-a): encapsulation ip 10.20.1.5 is not a planned encapsulation "
        "address"]


def test_status_of_an_older_generation_or_not_ready_is_not_trusted():
    found_cluster, found, nodes, neutron = converged()
    found_cluster["metadata"]["generation"] = 3
    found[2]["status"]["conditions"][0].update(status="False", message="ovn-controller not connected")
    problems = ovn.verify(PLAN, found_cluster, found, nodes, neutron)["problems"]
    assert problems == [
        "OVNCluster ovn-system/ovn: status is for generation 2, not the current 3",
        "OVNChassis hv-b-0 (Node hv-b-0 of hv-pool-b): Ready is False (ovn-controller not connected)"]
    found_cluster["status"]["observedGeneration"] = 3  # the condition alone lags
    assert ovn.verify(PLAN, found_cluster, found, nodes, neutron)["problems"][0] == \
        "OVNCluster ovn-system/ovn: Ready is for generation 2, not the current 3"


def test_nothing_there_yet():
    report = ovn.verify(PLAN, None, [], {"hv-pool-a": []}, None)
    assert report["problems"] == ["OVNCluster ovn-system/ovn does not exist"] and not report["ready"]
    found_cluster, _found, _nodes, _neutron = converged()
    found_cluster["status"].pop("endpoints")
    problems = ovn.verify(PLAN, found_cluster, [], {}, {"spec": {}}, neutron_where="Neutron x/y")["problems"]
    assert "OVNCluster ovn-system/ovn: chassisCount is 3, the hypervisor pools have 0 hypervisor Nodes" in problems
    assert "OVNCluster ovn-system/ovn: publishes no Southbound endpoint" in problems


def test_the_node_selector_is_the_clusters_or_the_hypervisor_label():
    assert ovn.node_selector(None) == {"node-role.kubernetes.io/hypervisor": ""}
    other = copy.deepcopy(cluster())
    other["spec"]["controller"]["nodeSelector"] = {"role": "hv"}
    assert ovn.node_selector(other) == {"role": "hv"}


def test_the_southbound_service_publishes_the_planned_address():
    service = ovn.southbound_service("tcp:10.100.0.50:6642")
    assert service["metadata"] == {"name": "ovn-sb-public", "namespace": "ovn-system",
                                   "labels": {"app.kubernetes.io/managed-by": "c5c3.cobaltcore"}}
    assert service["spec"] == {"type": "LoadBalancer", "loadBalancerIP": "10.100.0.50", "selector": {"app": "ovn-sb"},
                               "ports": [{"name": "ovsdb-sb", "protocol": "TCP", "port": 6642, "targetPort": 6642}]}
    named = ovn.southbound_service("ssl:ovn-sb.eu-de-1.example.com:16642", "ovn")
    assert "loadBalancerIP" not in named["spec"] and named["spec"]["ports"][0]["port"] == 16642
    assert named["metadata"]["namespace"] == "ovn"
    with pytest.raises(InputError) as error:
        ovn.southbound_service("ovn-sb:6642")
    assert error.value.problems == ["ovn_southbound: 'ovn-sb:6642' is not an OVSDB remote such as tcp:10.100.0.50:6642"]

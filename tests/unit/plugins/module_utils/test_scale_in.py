# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pool's scale-in: its input and its tenants' needs (region/scale_in.py), the surplus claims and their Nodes
(providers/ironcore.py)."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import scale_in
from ansible_collections.c5c3.cobaltcore.plugins.filter.cobaltcore import FilterModule

GROUPS = {"hypervisor_pools": ["hv-pool-a"], "storage_pools": ["st-pool-a", "st-pool-o"]}
FILTERS = FilterModule().filters()


def tenant(name, hypervisors=(), storage=(), replication=None):
    spec = {"region": "eu-de-1", "hypervisorClusters": list(hypervisors), "storageClusters": list(storage)}
    if replication:
        spec["storage"] = {"ceph": {"volumePool": {"replication": replication}}}
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "OpenStackCluster",
            "metadata": {"name": name, "namespace": "tenant-" + name}, "spec": spec}


def claim(pool, index, server=None):
    obj = {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "ServerClaim",
           "metadata": {"name": "%s-%d" % (pool, index), "namespace": "cobaltcore-servers",
                        "labels": {"c5c3.io/pool": pool}},
           "spec": {"serverRef": {"name": server}} if server else {}}
    if server:
        obj["status"] = {"phase": "Bound"}
    return obj


def test_the_input_names_its_problem():
    assert scale_in.problems("hv-pool-a", GROUPS, {"workers": 1}, []) == []
    assert scale_in.problems(None, GROUPS, {}, []) == [
        "pool: must name the pool to scale in (a DNS-1123 label), got None"]
    assert scale_in.problems("hv-pool-z", GROUPS, {}, [])[0].startswith(
        "pool: hv-pool-z is no pool of the inventory's hypervisor_pools or storage_pools")
    assert scale_in.problems("hv-pool-a", GROUPS, {"workers": "2"}, []) == [
        "hv-pool-a.workers: must be a whole number >= 0, got '2'"]


def test_a_count_below_the_tenants_needs_is_refused_naming_every_tenant():
    claims = [tenant("t-1", ["hv-pool-a"], ["st-pool-a"], replication=3), tenant("t-2", ["hv-pool-a"]),
              tenant("t-3", storage=["st-pool-o"]), tenant("t-4", ["hv-pool-b"])]
    # Any tenant on a hypervisor pool needs one Node.
    assert scale_in.problems("hv-pool-a", GROUPS, {"workers": 1}, claims) == []
    assert scale_in.problems("hv-pool-a", GROUPS, {"workers": 0}, claims) == [
        "hv-pool-a.workers: 0 is below what the pool's tenants need: "
        "tenant t-1 (OpenStackCluster claim tenant-t-1/t-1) needs 1: its hypervisorClusters name the pool; "
        "tenant t-2 (OpenStackCluster claim tenant-t-2/t-2) needs 1: its hypervisorClusters name the pool"]
    # Over hosts (the default failure domain), a pool of 3 replicas needs 3 Nodes.
    assert scale_in.problems("st-pool-a", GROUPS, {"workers": 3}, claims) == []
    assert scale_in.problems("st-pool-a", GROUPS, {"workers": 2}, claims) == [
        "st-pool-a.workers: 2 is below what the pool's tenants need: "
        "tenant t-1 (OpenStackCluster claim tenant-t-1/t-1) needs 3: spec.storage.ceph.volumePool.replication 3"]
    # Over OSDs, one Node holds every replica.
    assert scale_in.problems("st-pool-a", GROUPS, {"workers": 1, "ceph": {"failure_domain": "osd"}}, claims) == []
    assert "needs 1: its storageClusters name the pool (replicas spread over osds)" in scale_in.problems(
        "st-pool-a", GROUPS, {"workers": 0, "ceph": {"failure_domain": "osd"}}, claims)[0]
    # The same claim from the directory and the management cluster counts once; the filter takes both.
    reads = [{"skipped": True}, {"objects": [{"items": claims[1:2]}]}]
    assert FILTERS["scale_in_problems"]("hv-pool-a", GROUPS, {"workers": 0}, reads, claims[:2])[0].count("tenant t-2") == 1


def test_the_surplus_claims_go_in_phase_1s_order_and_find_their_nodes_by_provider_id():
    claims = [claim("hv-pool-a", 1, "srv-1"), claim("hv-pool-a", 2, "srv-2"), claim("hv-pool-a", 3, "srv-3"),
              claim("hv-pool-a", 4)]
    assert ironcore.surplus_claims("hv-pool-a", 4, claims) == []
    surplus = ironcore.surplus_claims("hv-pool-a", 2, claims)
    # The unbound claim first (it holds no server), then the highest index.
    assert [(c["name"], c["server"], c["bound"]) for c in surplus] == [
        ("hv-pool-a-4", None, False), ("hv-pool-a-3", "srv-3", True)]
    assert surplus[1]["provider_id"] == "metal://cobaltcore-servers/hv-pool-a-3"
    assert surplus[1]["ref"] == {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "ServerClaim",
                                 "metadata": {"name": "hv-pool-a-3", "namespace": "cobaltcore-servers"}}
    nodes = [{"metadata": {"name": "node-%d" % i}, "spec": {"providerID": "metal://cobaltcore-servers/hv-pool-a-%d" % i}}
             for i in (1, 2, 3)] + [{"metadata": {"name": "own"}, "spec": {}}]
    assert ironcore.claim_nodes(surplus, nodes) == ["node-3"]
    assert FILTERS["scale_in_nodes"]({"objects": [{"items": nodes}]}, ironcore.surplus_claims("hv-pool-a", 0, claims)) == [
        "node-3", "node-2", "node-1"]
    assert [c["name"] for c in FILTERS["scale_in_surplus"]({"objects": [{"items": claims}]}, "hv-pool-a", 3)] == [
        "hv-pool-a-4"]

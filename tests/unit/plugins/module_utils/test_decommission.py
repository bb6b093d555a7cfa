# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""region/decommission.py: a pool decommission's input, its users (also what runs on its own cluster) and what its
release deletes."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import decommission
from ansible_collections.c5c3.cobaltcore.plugins.filter.cobaltcore import FilterModule

GROUPS = {"hypervisor_pools": ["hv-pool-a"], "storage_pools": ["st-pool-a"]}


def test_the_input_names_every_problem():
    assert decommission.input_problems("hv-pool-c", "hv-pool-c", GROUPS) == []
    assert decommission.input_problems(None, None, GROUPS) == [
        "pool: must name the pool to decommission (a DNS-1123 label), got None"]
    problems = decommission.input_problems("st-pool-a", "st-pool-b", GROUPS)
    assert problems[0].startswith("pool: st-pool-a is still in the inventory (storage_pools): remove it there")
    assert problems[1] == "confirm: must be st-pool-a (the pool whose Shoot and servers go), got 'st-pool-b'"


def test_a_control_plane_cluster_in_the_inventory_or_its_default_is_refused():
    groups = dict(GROUPS, control_plane=["eu-de-1-control-plane-b"])
    assert decommission.input_problems("eu-de-1-control-plane-b", "eu-de-1-control-plane-b", groups, "eu-de-1")[0] \
        .startswith("pool: eu-de-1-control-plane-b is still in the inventory (control_plane): ")
    # Another control plane listed: the default name is a cluster like any other.
    assert decommission.input_problems("eu-de-1-control-plane", "eu-de-1-control-plane", groups, "eu-de-1") == []
    # No control_plane group: the region has its default control-plane cluster.
    (only,) = decommission.input_problems("eu-de-1-control-plane", "eu-de-1-control-plane", GROUPS, "eu-de-1")
    assert only.startswith("pool: eu-de-1-control-plane is still in the inventory (the region's control-plane "
                           "cluster, as no control_plane group names another)"), only


def test_what_runs_on_the_pools_own_cluster_and_the_claims_placed_there_use_it():
    claims = [
        {"kind": "OpenStackCluster", "metadata": {"name": "t-1", "namespace": "tenants"},
         "spec": {"controlPlaneCluster": "cp-b"}},
        {"kind": "OpenStackCluster", "metadata": {"name": "t-2", "namespace": "tenants"}, "spec": {}}]
    control_plane = {"kind": "ControlPlane", "metadata": {
        "name": "t-1", "namespace": "openstack-t-1", "labels": {"c5c3.io/openstack-cluster-name": "t-1"}}}
    read = {"cluster": "cp-b", "shoot": "cp-b", "api_server": True,
            "objects": [{"kind": "ControlPlane", "items": [control_plane], "error": None, "status": None}]}
    assert decommission.users("cp-b", claims, "r-control-plane", [read]) == [
        "ControlPlane openstack-t-1/t-1 of OpenStack cluster t-1, which runs on cp-b",
        "tenant t-1 (OpenStackCluster claim tenants/t-1)"]
    # A claim that names no control-plane cluster has the region's default.
    assert decommission.users("r-control-plane", claims, "r-control-plane") == [
        "tenant t-2 (OpenStackCluster claim tenants/t-2)"]
    # Another cluster's read is not this pool's; a kind the cluster does not serve means nothing of it runs there.
    assert decommission.users("hv-pool-c", [], None, [read, {
        "cluster": "hv-pool-c", "shoot": "hv-pool-c",
        "objects": [{"kind": "ControlPlane", "items": [], "error": "not served", "status": 404}]}]) == []
    # A refused read leaves what runs there unknown: that is a use.
    refused = {"cluster": "cp-b", "shoot": "cp-b", "objects": [
        {"kind": "ControlPlane", "items": [], "error": "controlplanes is forbidden", "status": 403}]}
    assert decommission.users("cp-b", [], None, [refused]) == [
        "whatever runs on cp-b (Shoot cp-b: its ControlPlane could not be read: controlplanes is forbidden)"]
    # The filter finds gardener_cluster_info's result among the registered ones and the region's default.
    reads = [{"skipped": True}, {"clusters": [read]}, {"objects": [{"items": claims[1:]}]}]
    assert FilterModule().filters()["decommission_users"](reads, "r-control-plane", [], "r") == [
        "tenant t-2 (OpenStackCluster claim tenants/t-2)"]
    assert len(FilterModule().filters()["decommission_users"](reads, "cp-b", claims[:1], "r")) == 2


def test_tenants_and_control_planes_that_name_the_pool():
    objects = [
        {"kind": "OpenStackCluster", "metadata": {"name": "t-1", "namespace": "tenants"},
         "spec": {"hypervisorClusters": ["hv-pool-a"], "storageClusters": ["st-pool-c"]}},
        {"kind": "OpenStackCluster", "metadata": {"name": "t-2", "namespace": "tenants"},
         "spec": {"hypervisorClusters": ["hv-pool-c"]}},
        {"kind": "ControlPlane", "metadata": {"name": "cp", "namespace": "openstack",
                                              "labels": {"c5c3.io/openstack-cluster-name": "eu-de-1"}},
         "spec": {"compute": {"hypervisorClusters": ["hv-pool-c"]}, "storage": {"storageClusters": []}}},
        {"kind": "ControlPlane", "metadata": {"name": "cp", "namespace": "openstack-t-3"}, "spec": {}}]
    assert decommission.users("hv-pool-c", objects) == [
        "ControlPlane openstack/cp of OpenStack cluster eu-de-1", "tenant t-2 (OpenStackCluster claim tenants/t-2)"]
    assert decommission.users("st-pool-c", objects) == ["tenant t-1 (OpenStackCluster claim tenants/t-1)"]
    assert decommission.users("hv-pool-z", objects) == []
    # The filter takes registered cluster_info results; a skipped host's has no objects.
    reads = [{"skipped": True}, {"objects": [{"items": objects[1:]}]}]
    assert FilterModule().filters()["decommission_users"](reads, "st-pool-c", objects[:1]) == [
        "tenant t-1 (OpenStackCluster claim tenants/t-1)"]


def server(name, bmc, claim=None):
    spec = {"bmcRef": {"name": bmc}}
    if claim:
        spec["serverClaimRef"] = {"name": claim, "namespace": "cobaltcore-servers"}
    return {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "Server", "metadata": {"name": name}, "spec": spec}


def test_the_release_deletes_the_claims_and_only_the_bmcs_the_inventory_dropped_and_nothing_else_needs():
    claims = [{"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "ServerClaim",
               "metadata": {"name": "hv-pool-c-%d" % i, "namespace": "cobaltcore-servers", "uid": "u"},
               "spec": {"serverRef": {"name": "srv-%d" % i}}} for i in (1, 2, 3)]
    servers = [server("srv-1", "bmc-1", "hv-pool-c-1"), server("srv-2", "bmc-2", "hv-pool-c-2"),
               server("srv-3", "bmc-3", "hv-pool-c-3"), server("srv-4", "bmc-3", "hv-pool-a-1")]
    bmcs = [{"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "BMC", "metadata": {"name": "bmc-%d" % i}}
            for i in (1, 2, 3)]
    plan = decommission.release_plan(claims, servers, bmcs, ["bmc-1"])
    assert [c["metadata"] for c in plan["claims"]] == [
        {"name": "hv-pool-c-%d" % i, "namespace": "cobaltcore-servers"} for i in (1, 2, 3)]
    assert plan["servers"] == ["srv-1", "srv-2", "srv-3"]
    # bmc-1: the inventory keeps it; bmc-3: another pool's server is behind it.
    assert plan["bmcs"] == [{"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "BMC", "metadata": {"name": "bmc-2"}}]
    assert decommission.release_plan([], servers, bmcs, []) == {"claims": [], "servers": [], "bmcs": []}

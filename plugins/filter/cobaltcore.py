# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of c5c3.cobaltcore: thin wrappers over module_utils.

Each filter's documentation is the YAML file of its name beside this one.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.filter_errors import fails_on_input_error
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.lazy_import import lazy_module

ceph = lazy_module("region.ceph")
ceph_cluster = lazy_module("region.ceph_cluster")
claim_status = lazy_module("region.claim_status")
region_claims = lazy_module("region.claims")
composition = lazy_module("region.composition")
decommission = lazy_module("region.decommission")
endpoints = lazy_module("region.endpoints")
model = lazy_module("region.model")
naming = lazy_module("region.naming")
network_plan = lazy_module("region.network_plan")
ovn = lazy_module("region.ovn")
run_summary = lazy_module("common.run_summary")
scale_in = lazy_module("region.scale_in")
size_presets = lazy_module("region.size_presets")
tenants = lazy_module("region.tenants")
flux = lazy_module("providers.flux")
gardener = lazy_module("providers.gardener")
ironcore = lazy_module("providers.ironcore")


def validate_claims_filter(claims, region):
    return region_claims.validate_claims(claims, region)


@fails_on_input_error("invalid OpenStackCluster claims, nothing composed")
def compose_openstack_cluster_filter(claim, region, claims=None, public_url_template=None, ceph_client_version=0):
    return composition.compose_openstack_cluster(claim, region, claims=claims,
                                                 public_url_template=public_url_template or None,
                                                 ceph_client_version=ceph_client_version)


@fails_on_input_error("invalid region")
def region_model_filter(region):
    return _region(region)


@fails_on_input_error("invalid size")
def size_preset_filter(size):
    return size_presets.size_preset(size)


@fails_on_input_error("invalid Ceph pools")
def ceph_caps_filter(pools):
    return ceph.client_caps(pools)


@fails_on_input_error("invalid storage pool")
def ceph_cluster_filter(pool):
    """The CephCluster of a storage pool (its cobaltcore_pool: name, ceph, media, encrypted, network.public)."""
    return ceph_cluster.cluster_manifest(pool.get("name"), pool.get("ceph"), pool.get("media"),
                                         bool(pool.get("encrypted")), (pool.get("network") or {}).get("public"))


@fails_on_input_error("invalid quotaGB")
def quota_bytes_filter(quota_gb):
    return ceph.quota_bytes(quota_gb)


@fails_on_input_error("invalid tenant name")
def tenant_names_filter(name):
    problems = region_claims.claim_name_problems(name, field="name")
    if problems:
        raise InputError(problems)
    return naming.tenant_names(name)


@fails_on_input_error("invalid input of the region's ControlPlane, nothing composed")
def region_control_plane_filter(region, services=None, size="medium", public_url_template=None,
                                key_rotation_interval=None):
    # Keystone's public endpoint: the given template, else an inventory-shaped region's own.
    template = public_url_template or model.public_url_template_of(region)
    return composition.region_control_plane(_region(region), services, size, template, key_rotation_interval or None)


def tenant_claims_filter(directory, name=None):
    claims = region_claims.load_claim_files(directory)
    return claims if name is None else region_claims.claims_named(claims, name)


def claim_statuses_filter(claims, problems, region, generations=None, reports=None, ceph_ready=True,
                          ceph_message=None, apply_valid=False):
    return claim_status.statuses(claims, problems, region, generations=generations, reports=reports,
                                 ceph_ready=ceph_ready, ceph_message=ceph_message, apply_valid=apply_valid)


def valid_claims_filter(claims, problems):
    return claim_status.valid_claims(claims, problems)


@fails_on_input_error("invalid OpenStackCluster claims, nothing applied")
def tenant_plan_filter(claims, region, ceph=None, ceph_fact=None, require_monitors=False, public_url_template=None,
                       ceph_client_version=0):
    facts = dict(ceph or {})
    if ceph_fact:
        facts.update(_host_facts(region, ceph_fact))
    return tenants.plan(claims, region, dict((pool, f) for pool, f in facts.items() if isinstance(f, dict)),
                        require_monitors=bool(require_monitors), public_url_template=public_url_template or None,
                        ceph_client_version=ceph_client_version)


def _host_facts(region, fact):
    """{storage pool: its host's fact (the first of several names present)} from an inventory-shaped region;
    hosts without it are left out."""
    hostvars = region.get("hostvars") or {} if isinstance(region, dict) else {}
    groups = region.get("groups") or {} if isinstance(region, dict) else {}
    names = [fact] if isinstance(fact, str) else list(fact)
    found = {}
    for pool in groups.get("storage_pools") or []:
        host = hostvars[pool] if pool in hostvars else {}
        present = [name for name in names if name in host]
        if present:
            found[pool] = host[present[0]]
    return found


@fails_on_input_error("cannot plan the tenant's removal, nothing deleted")
def tenant_removal_filter(name, found):
    steps = tenants.removal_steps(name, found)
    return {"steps": steps, "data_loss": tenants.data_loss(steps)}


@fails_on_input_error("invalid network plan, nothing changed")
def network_plan_filter(region, network=None):
    return network_plan.build_plan(_region(region), network)


@fails_on_input_error("invalid OVN Southbound address, nothing changed")
def ovn_southbound_service_filter(remote, namespace="ovn-system"):
    return ovn.southbound_service(remote, namespace)


@fails_on_input_error("addresses that work inside one cluster only, nothing changed")
def cross_cluster_endpoints_filter(region, network=None, gardener=None):
    return endpoints.plan(_region(region), network, gardener)


def _region(region):
    return model.build_region(region).to_dict()


@fails_on_input_error("invalid region or Gardener settings, no Shoot composed")
def gardener_shoots_filter(region, settings):
    return gardener.shoots(_region(region), settings or {})


@fails_on_input_error("invalid region, no upgrade order")
def gardener_upgrade_order_filter(region, settings=None):
    return gardener.upgrade_order(_region(region), settings)


@fails_on_input_error("no kubeconfig path for some Shoots")
def gardener_kubeconfig_paths_filter(shoots, hostvars):
    return gardener.kubeconfig_paths(shoots, hostvars)


@fails_on_input_error("invalid region or IronCore settings, no claim composed")
def ironcore_claim_pools_filter(region, settings=None):
    return ironcore.claim_pools(_region(region), settings or {})


def ironcore_bmcs_filter(entries):
    return ironcore.bmcs_from_inventory(entries or [])


def ironcore_bmc_secrets_filter(credentials):
    return ironcore.bmc_secrets_from_inventory(credentials or {})


@fails_on_input_error("invalid operator table")
def operator_releases_filter(operators, group_names, overrides=None, repositories=None):
    table = flux.validated_table(operators, overrides or {}, repositories or {})
    return flux.releases_for(table, group_names)


@fails_on_input_error("cannot count the changed objects")
def changed_objects_filter(registered):
    return run_summary.changed_objects(registered)


def _read_items(reads):
    """The objects of cluster_info results (registered; skipped hosts' results have none)."""
    return [item for read in reads or [] if isinstance(read, dict)
            for entry in read.get("objects") or [] for item in entry.get("items") or []]


def decommission_problems_filter(pool, confirm, groups, region=None):
    return decommission.input_problems(pool, confirm, groups, region)


def decommission_users_filter(reads, pool, claims=None, region=None):
    """reads: cluster_info's results and gardener_cluster_info's (the pool's own cluster, in their clusters)."""
    cluster_reads = [entry for read in reads or [] if isinstance(read, dict) for entry in read.get("clusters") or []]
    return decommission.users(pool, _read_items(reads) + list(claims or []),
                              naming.control_plane_cluster(region) if region else None, cluster_reads)


def decommission_release_filter(read, inventory_bmcs):
    claims, servers, bmcs = [(entry.get("items") or []) for entry in read["objects"]]
    plan = decommission.release_plan(claims, servers, bmcs, [b["name"] for b in inventory_bmcs or []])
    plan["servers_released"] = ironcore.servers_released_wait(plan["servers"], plan["claims"])
    return plan


def scale_in_problems_filter(pool, groups, settings, claim_reads=None, claims=None):
    return scale_in.problems(pool, groups, settings, _read_items(claim_reads) + list(claims or []))


def scale_in_surplus_filter(read, pool, workers):
    return ironcore.surplus_claims(pool, workers, _read_items([read]))


def scale_in_nodes_filter(read, surplus):
    return ironcore.claim_nodes(surplus, _read_items([read]))


class FilterModule(object):
    """c5c3.cobaltcore filters."""

    def filters(self):
        return {
            "validate_claims": validate_claims_filter,
            "compose_openstack_cluster": compose_openstack_cluster_filter,
            "region_model": region_model_filter,
            "network_plan": network_plan_filter,
            "cross_cluster_endpoints": cross_cluster_endpoints_filter,
            "ovn_southbound_service": ovn_southbound_service_filter,
            "size_preset": size_preset_filter,
            "ceph_caps": ceph_caps_filter,
            "ceph_cluster": ceph_cluster_filter,
            "quota_bytes": quota_bytes_filter,
            "tenant_names": tenant_names_filter,
            "tenant_claims": tenant_claims_filter,
            "claim_statuses": claim_statuses_filter,
            "valid_claims": valid_claims_filter,
            "tenant_plan": tenant_plan_filter,
            "tenant_removal": tenant_removal_filter,
            "decommission_problems": decommission_problems_filter,
            "decommission_users": decommission_users_filter,
            "decommission_release": decommission_release_filter,
            "scale_in_problems": scale_in_problems_filter,
            "scale_in_surplus": scale_in_surplus_filter,
            "scale_in_nodes": scale_in_nodes_filter,
            "region_control_plane": region_control_plane_filter,
            "gardener_shoots": gardener_shoots_filter,
            "gardener_kubeconfig_paths": gardener_kubeconfig_paths_filter,
            "gardener_upgrade_order": gardener_upgrade_order_filter,
            "ironcore_claim_pools": ironcore_claim_pools_filter,
            "ironcore_bmcs": ironcore_bmcs_filter,
            "ironcore_bmc_secrets": ironcore_bmc_secrets_filter,
            "operator_releases": operator_releases_filter,
            "changed_objects": changed_objects_filter,
        }

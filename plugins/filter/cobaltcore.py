# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of c5c3.cobaltcore: thin wrappers over module_utils.

Each filter's documentation is the YAML file of its name beside this one.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import (
    claim_name_problems, validate_claims)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.composition import (
    CompositionError, compose_openstack_cluster, region_control_plane)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import (
    RegionError, build_region)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.size_presets import size_preset


def _problem_lines(problems):
    return "\n".join("- %s %s: %s" % (item.get("claim", "region"), item["field"] or "(claim)",
                                      item["message"]) for item in problems)


def validate_claims_filter(claims, region):
    return validate_claims(claims, region)


def compose_openstack_cluster_filter(claim, region, claims=None):
    try:
        return compose_openstack_cluster(claim, region, claims=claims)
    except CompositionError as error:
        raise AnsibleFilterError("invalid OpenStackCluster claims, nothing composed:\n%s"
                                 % _problem_lines(error.problems))


def region_model_filter(region):
    return _region(region)


def size_preset_filter(size):
    try:
        return size_preset(size)
    except ValueError as error:
        raise AnsibleFilterError(str(error))


def ceph_caps_filter(pools):
    if isinstance(pools, str) or not isinstance(pools, (list, tuple)):
        raise AnsibleFilterError("ceph_caps expects a list of pool names, got %r" % (pools,))
    try:
        return ceph.client_caps(list(pools))
    except ValueError as error:
        raise AnsibleFilterError(str(error))


def quota_bytes_filter(quota_gb):
    try:
        return ceph.quota_bytes(quota_gb)
    except ValueError as error:
        raise AnsibleFilterError(str(error))


def tenant_names_filter(name):
    problems = claim_name_problems(name)
    if problems:
        raise AnsibleFilterError("invalid tenant name: %s" % "; ".join(
            message for _field, message in problems))
    return naming.tenant_names(name)


def region_control_plane_filter(region, services=None, size="medium"):
    try:
        return region_control_plane(_region(region), services, size)
    except InputError as error:
        raise AnsibleFilterError("invalid settings of the region's ControlPlane:\n%s"
                                 % "\n".join("- " + p for p in error.problems))


def _region(region):
    try:
        return build_region(region).to_dict()
    except RegionError as error:
        raise AnsibleFilterError("invalid region:\n%s" % _problem_lines(error.problems))


def gardener_shoots_filter(region, settings):
    try:
        return gardener.shoots(_region(region), settings or {})
    except gardener.GardenerError as error:
        raise AnsibleFilterError("invalid Gardener settings, no Shoot composed:\n%s"
                                 % "\n".join("- " + p for p in error.problems))


def gardener_kubeconfig_paths_filter(shoots, hostvars):
    try:
        return gardener.kubeconfig_paths(shoots, hostvars)
    except gardener.GardenerError as error:
        raise AnsibleFilterError("no kubeconfig path for some Shoots:\n%s" % "\n".join("- " + p for p in error.problems))


def ironcore_claim_pools_filter(region, settings=None):
    try:
        return ironcore.claim_pools(_region(region), settings or {})
    except ironcore.IronCoreError as error:
        raise AnsibleFilterError("invalid IronCore settings, no claim composed:\n%s"
                                 % "\n".join("- " + p for p in error.problems))


def ironcore_bmcs_filter(entries):
    return ironcore.bmcs_from_inventory(entries or [])


def ironcore_bmc_secrets_filter(credentials):
    return ironcore.bmc_secrets_from_inventory(credentials or {})


class FilterModule(object):
    """c5c3.cobaltcore filters."""

    def filters(self):
        return {
            "validate_claims": validate_claims_filter,
            "compose_openstack_cluster": compose_openstack_cluster_filter,
            "region_model": region_model_filter,
            "size_preset": size_preset_filter,
            "ceph_caps": ceph_caps_filter,
            "quota_bytes": quota_bytes_filter,
            "tenant_names": tenant_names_filter,
            "region_control_plane": region_control_plane_filter,
            "gardener_shoots": gardener_shoots_filter,
            "gardener_kubeconfig_paths": gardener_kubeconfig_paths_filter,
            "ironcore_claim_pools": ironcore_claim_pools_filter,
            "ironcore_bmcs": ironcore_bmcs_filter,
            "ironcore_bmc_secrets": ironcore_bmc_secrets_filter,
        }

# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's verdict on one cluster of the region, from what the role's checks found.

The preflight role asks (stat of the kubeconfig, c5c3.cobaltcore.cluster_info,
openstack.cloud.auth); this turns their registered results into the list of problems, one line
each, in a fixed order: kubeconfig, reachability, version, API groups, what the region needs from
this cluster (the garden's Project, cloud profile and Seeds; the machines IronCore can give every
pool), Keystone. Pure Python: it reads results, it asks nothing itself.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region

REQUIRED = ("kubeconfig", "kubeconfig_exists", "min_version", "max_version")
OPTIONAL = {
    "kubeconfig_fetched_later": False,
    "cluster_info": None,
    "api_groups_by_group": None,
    "group_names": None,
    "check_keystone": False,
    "keystone": None,
    "keystone_cloud": "",
    "keystone_clouds_yaml": "",
    "region": None,
    "gardener": None,
    "seed_strategy": "SameRegion",
    "bmcs": None,
}
_MINOR = re.compile(r"^v?(\d+\.\d+).*$")


def _numbers(version):
    """A version as a tuple of its numbers ("1.31" < "1.31.0" < "1.32"), as Ansible's loose version test orders them."""
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _validate(checks):
    if not isinstance(checks, dict):
        raise InputError([problem("checks", "must be a mapping, got %s" % type(checks).__name__)])
    problems = [problem(key, "is required") for key in REQUIRED if key not in checks]
    problems += [problem(key, "is not a preflight check") for key in sorted(checks)
                 if key not in REQUIRED and key not in OPTIONAL]
    for key in ("kubeconfig_exists", "kubeconfig_fetched_later", "check_keystone"):
        if key in checks and not isinstance(checks[key], bool):
            problems.append(problem(key, "must be a boolean, got %s" % type(checks[key]).__name__))
    for key in ("min_version", "max_version"):
        if key in checks and (not isinstance(checks[key], str) or not _numbers(checks[key])):
            problems.append(problem(key, "must be a version like 1.31, got %r" % (checks[key],)))
    for key in ("cluster_info", "keystone", "api_groups_by_group", "region", "gardener"):
        if checks.get(key) is not None and not isinstance(checks[key], dict):
            problems.append(problem(key, "must be a mapping, got %s" % type(checks[key]).__name__))
    groups = checks.get("api_groups_by_group") or {}
    if isinstance(groups, dict):
        for group, needed in sorted(groups.items()):
            if not isinstance(needed, (list, str)) or any(not isinstance(item, str) for item in (
                    needed if isinstance(needed, list) else [needed])):
                problems.append(problem("api_groups_by_group.%s" % group, "must be a list of API group names"))
    if checks.get("bmcs") is not None and not isinstance(checks["bmcs"], list):
        problems.append(problem("bmcs", "must be a list of the inventory's BMCs"))
    if not isinstance(checks.get("seed_strategy", ""), str):
        problems.append(problem("seed_strategy", "must be a string"))
    names = checks.get("group_names")
    if names is not None and (not isinstance(names, list) or any(not isinstance(n, str) for n in names)):
        problems.append(problem("group_names", "must be a list of inventory group names"))
    if problems:
        raise InputError(problems)


def server_version(cluster_info):
    """The API server's gitVersion from a cluster_info result ('' when it did not answer)."""
    version = (cluster_info or {}).get("version")
    return (version.get("gitVersion") or "") if isinstance(version, dict) else ""


def needed_api_groups(api_groups_by_group, group_names):
    """The API groups a cluster must serve: those of every inventory group it is in, first mention first."""
    needed = []
    for group, groups in (api_groups_by_group or {}).items():
        if group in (group_names or []):
            for name in (groups if isinstance(groups, list) else [groups]):
                if name not in needed:
                    needed.append(name)
    return needed


def served_api_groups(cluster_info):
    """The API groups of a cluster_info result (the core group is 'core')."""
    return list((cluster_info or {}).get("api_groups") or [])


def problems(checks, region_needs=None):
    """The problems of one cluster, [] when it is ready to be driven.

    checks: kubeconfig (its path), kubeconfig_exists, kubeconfig_fetched_later (phase 2 fetches
    it, so a missing one is no problem yet), cluster_info (the cluster_info result; it has
    `version` once the API server answered), min_version and max_version (major.minor,
    inclusive), api_groups_by_group and group_names (the host's inventory groups), check_keystone,
    keystone (the keystone_token_check result), keystone_cloud, keystone_clouds_yaml.
    region_needs(values, cluster_info) judges those reads (providers.region_needs.problems: the vendors'
    knowledge lives there, above this package). InputError lists every malformed key.
    """
    _validate(checks)
    values = dict(OPTIONAL, **checks)
    kubeconfig, exists = values["kubeconfig"], values["kubeconfig_exists"]
    cluster = values["cluster_info"] or {}
    reached = "version" in cluster
    found = []
    if not exists and not values["kubeconfig_fetched_later"]:
        found.append("kubeconfig %s does not exist" % kubeconfig)
    if exists and not reached:
        found.append("API server not reachable with %s: %s" % (kubeconfig, cluster.get("msg", "no answer")))
    if reached:
        version = server_version(cluster)
        minor = _MINOR.sub(r"\1", version)
        if not (_numbers(values["min_version"]) <= _numbers(minor) <= _numbers(values["max_version"])):
            found.append("Kubernetes %s is outside the supported range %s to %s"
                         % (version, values["min_version"], values["max_version"]))
        served = served_api_groups(cluster)
        found.extend("API group %s is not served, and the phases of this cluster need it" % group
                     for group in needed_api_groups(values["api_groups_by_group"], values["group_names"])
                     if group not in served)
        if region_needs is not None and values["region"] is not None:
            found.extend(region_needs(values, cluster))
    keystone = values["keystone"] or {}
    if values["check_keystone"] and not keystone.get("user_id"):
        found.append("Keystone: no token for cloud %s from %s: %s" % (
            values["keystone_cloud"], values["keystone_clouds_yaml"], keystone.get("msg", "no answer")))
    return found


# ---------------------------------------------------------------------------
# The region model, once for the whole region


def region_problems(inventory):
    """Every problem of the region model, pools named by their inventory hosts; one line each, empty
    when the region can be built. What the region needs from IronCore and the garden is checked on
    those clusters (problems with region, gardener, bmcs)."""
    try:
        build_region(inventory)
    except InputError as exc:
        return list(exc.problems)
    return []

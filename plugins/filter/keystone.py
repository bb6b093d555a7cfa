# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the Keystone bootstrap (phase 5): thin wrappers over module_utils.keystone.

Each filter's documentation is the YAML file of its name beside this one.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.filter_errors import fails_on_input_error
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.lazy_import import lazy_module

catalog = lazy_module("keystone.catalog")
clusters = lazy_module("keystone.clusters")
failures = lazy_module("keystone.failures")
recheck = lazy_module("keystone.recheck")


@fails_on_input_error("invalid Keystone bootstrap settings, nothing was changed")
def keystone_catalog_plan_filter(settings):
    return catalog.catalog_plan(settings)


@fails_on_input_error("invalid Keystone bootstrap settings, nothing was changed")
def keystone_bootstrap_batch_filter(cluster_list, defaults, endpoints=None, korc=None, settled=None):
    return clusters.batch(cluster_list, defaults, endpoints, korc, settled)


def keystone_tenant_clusters_filter(tenants, control_planes):
    return clusters.tenant_clusters(tenants, control_planes)


def korc_import_failure_filter(wait_result, manifests):
    return failures.import_failure_message(wait_result, manifests)


def korc_refs_filter(manifests):
    return catalog.refs_of(manifests or [])


def keystone_pending_filter(entries, state):
    return recheck.pending(entries, state)


def keystone_korc_results_filter(minted, state):
    return recheck.korc_results(minted, state)


def keystone_verified_records_filter(state, korc, verified_at):
    return recheck.records(state, korc, verified_at)


class FilterModule(object):
    """c5c3.cobaltcore Keystone bootstrap filters."""

    def filters(self):
        return {
            "keystone_bootstrap_batch": keystone_bootstrap_batch_filter,
            "keystone_catalog_plan": keystone_catalog_plan_filter,
            "keystone_korc_results": keystone_korc_results_filter,
            "keystone_pending": keystone_pending_filter,
            "keystone_verified_records": keystone_verified_records_filter,
            "keystone_tenant_clusters": keystone_tenant_clusters_filter,
            "korc_import_failure": korc_import_failure_filter,
            "korc_refs": korc_refs_filter,
        }

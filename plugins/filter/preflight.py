# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight filter: a thin wrapper over module_utils.region.preflight.

Its documentation is the YAML file of its name beside this one.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.filter_errors import fails_on_input_error
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils.lazy_import import lazy_module

region_needs = lazy_module("providers.region_needs")
preflight = lazy_module("region.preflight")


@fails_on_input_error("invalid preflight checks")
def preflight_problems_filter(checks):
    return preflight.problems(checks, region_needs.problems)


@fails_on_input_error("invalid region check")
def region_problems_filter(inventory):
    return preflight.region_problems(inventory)


@fails_on_input_error("invalid preflight reads")
def preflight_reads_filter(group_names, gardener_settings=None):
    return region_needs.reads(group_names, gardener_settings)


class FilterModule(object):
    """c5c3.cobaltcore preflight filter."""

    def filters(self):
        return {
            "preflight_problems": preflight_problems_filter,
            "region_problems": region_problems_filter,
            "preflight_reads": preflight_reads_filter,
        }

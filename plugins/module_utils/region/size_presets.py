# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Size presets of an OpenStackCluster claim (spec.size).

The replica counts are the seed composition's size maps. The composition writes
them as strings ("3") because Crossplane map transforms only yield strings;
they are replica counts, so they are integers here.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem

SIZES = ("small", "medium", "large", "xlarge")

SIZE_PRESETS = {
    "small": {"mariadb": 1, "keystone": 1, "nova_api": 1},
    "medium": {"mariadb": 3, "keystone": 3, "nova_api": 3},
    "large": {"mariadb": 3, "keystone": 3, "nova_api": 5},
    "xlarge": {"mariadb": 5, "keystone": 5, "nova_api": 7},
}


def size_preset(size):
    """Replica counts for a size; InputError for an unknown size."""
    if not isinstance(size, str) or size not in SIZE_PRESETS:
        raise InputError([problem("size", "unknown size %r, expected one of: %s" % (size, ", ".join(SIZES)))])
    return copy.deepcopy(SIZE_PRESETS[size])

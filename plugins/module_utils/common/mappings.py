# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merging settings: a region's values over shipped defaults."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy


def deep_merge(base, override):
    """A copy of base with override's keys; mappings merge key by key, anything else is replaced."""
    result = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result

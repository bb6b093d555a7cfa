# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merging settings: a region's values over shipped defaults."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
from collections.abc import Mapping


def plain_copy(value):
    """A deep copy of JSON-like data in plain types: any mapping a dict, a list or tuple a list, a str
    subclass a str. Ansible's lazily templated containers carry their templating context, which
    copy.deepcopy copies too (seconds for a region's settings); this copies only the data."""
    if isinstance(value, Mapping):
        return dict((plain_copy(key), plain_copy(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [plain_copy(item) for item in value]
    if isinstance(value, str):
        return str.__str__(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return copy.deepcopy(value)


def deep_merge(base, override):
    """A plain copy of base with override's keys; mappings merge key by key, anything else is replaced."""
    result = plain_copy(base)
    for key, value in (override or {}).items():
        if isinstance(value, Mapping) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = plain_copy(value)
    return result

# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading Kubernetes objects' data: a Secret's values decoded, a field at a dotted path."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64


def field_of(obj, path):
    """The string at a dotted path of an object, None when absent or not a scalar."""
    node = obj
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    if isinstance(node, bool) or node is None or isinstance(node, (dict, list)):
        return None
    return str(node)


def decoded(live):
    """{key: str} of a live Secret's data; binary values are left out (and kept as they are)."""
    values = {}
    for key, value in ((live or {}).get("data") or {}).items():
        try:
            values[key] = base64.b64decode(value).decode("utf-8")
        except (ValueError, TypeError, UnicodeDecodeError):
            continue
    return values

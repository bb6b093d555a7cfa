# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An object's status conditions (metav1.Condition lists), as every kind reports them."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


def condition(obj, ctype):
    """The condition of this type in obj's status.conditions, or None."""
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == ctype:
            return cond
    return None


def is_true(obj, ctype):
    return (condition(obj, ctype) or {}).get("status") == "True"

# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""RFC 3339 timestamps as the API servers write them (pure)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime


def parse_timestamp(text):
    """Seconds since the epoch of an RFC 3339 timestamp (2026-11-26T12:00:00Z, fractions, offsets); None if not one."""
    if not isinstance(text, str):
        return None
    value = text.strip().replace("z", "Z")
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    if "." in value:
        # fromisoformat takes at most 6 fractional digits; Go writes up to 9.
        head, rest = value.partition(".")[::2]
        digits = len(rest) - len(rest.lstrip("0123456789"))
        value = head + "." + rest[:min(digits, 6)].ljust(6, "0") + rest[digits:]
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return (moment - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)).total_seconds()

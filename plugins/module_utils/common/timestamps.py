# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""RFC 3339 timestamps as the API servers write them (pure)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import re


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def parse_datetime(text):
    """The aware datetime of an RFC 3339 timestamp (2026-11-26T12:00:00Z, fractions of up to 9 digits, offsets); None
    if not one. Time and MicroTime fields, managedFields times, annotations the collection writes."""
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
    return moment if moment.tzinfo is not None else None


def format_datetime(moment=None):
    """An RFC 3339 time in UTC to the second, as the API server writes Time fields (2026-11-26T12:00:00Z); now
    when no moment (an aware datetime) is given."""
    moment = datetime.datetime.now(datetime.timezone.utc) if moment is None else moment
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(text):
    """Seconds since the epoch of an RFC 3339 timestamp; None if not one."""
    moment = parse_datetime(text)
    return None if moment is None else (moment - EPOCH).total_seconds()


def seconds_since(text, now):
    """Whole seconds from an RFC 3339 timestamp to now (seconds since the epoch), at least 0; None if not one."""
    then = parse_timestamp(text)
    return None if then is None else max(0, int(now - then))


def last_write(obj, manager=None, subresource=None):
    """The latest metadata.managedFields time (RFC 3339, as the API server writes it) of the entries of `manager`
    and of `subresource` (either, both or neither); None when there is none."""
    times = [entry.get("time") for entry in ((obj or {}).get("metadata") or {}).get("managedFields") or []
             if isinstance(entry, dict) and entry.get("time")
             and manager in (None, entry.get("manager")) and subresource in (None, entry.get("subresource"))]
    return max(times) if times else None


DURATION_UNITS = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, u"\u00b5s": 1e-6, "ns": 1e-9}
DURATION = re.compile(u"([0-9]+(?:\\.[0-9]+)?)(ns|us|\u00b5s|ms|s|m|h)")


def duration_seconds(text):
    """A Go duration (time.ParseDuration without a sign: 168h, 1h30m) in seconds; None when it is not one."""
    text = str(text or "")
    parts = DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * DURATION_UNITS[unit] for number, unit in parts)

# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ceph facts the composition relies on: compression modes, replica bounds,
client capabilities and pool quotas."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem

# Ceph's pool compression modes (the XRD's enum for volumePool.compression).
COMPRESSION_MODES = ("none", "passive", "aggressive", "force")

# The XRD's bounds for volumePool.replication; applied to every pool here.
MIN_REPLICATION = 1
MAX_REPLICATION = 5

GIB = 1024 ** 3

# The seed's CephClient caps for OpenStack (Cinder, Glance, Nova).
MON_CAPS = "profile rbd"
MGR_CAPS = "profile rbd"


def quota_bytes(quota_gb):
    """Bytes of a quotaGB value.

    quotaGB has GiB semantics: the seed's status reports quotaGB 10000 as
    quotaBytes 10737418240000 (10000 * 1024**3).
    """
    if isinstance(quota_gb, bool) or not isinstance(quota_gb, int) or quota_gb < 0:
        raise InputError([problem("quotaGB", "must be an integer >= 0, got %r" % (quota_gb,))])
    return quota_gb * GIB


def pool_quotas(quota_gb):
    """CephBlockPool spec.quotas for a quotaGB value, or None for unlimited (0).

    Rook's QuotaSpec takes maxSize, a quantity string matching
    ^[0-9]+[.]?[0-9]*([KMGTPE]i|[kMGTPE])?$; maxBytes is deprecated upstream.
    "<n>Gi" is exactly quota_bytes(n) once Rook parses it.
    """
    if quota_bytes(quota_gb) == 0:
        return None
    return {"maxSize": "%dGi" % quota_gb}


def osd_caps(pools):
    """OSD caps granting RBD access to exactly the given pools, in order."""
    if isinstance(pools, str) or not isinstance(pools, (list, tuple)) or not pools:
        raise InputError([problem("pools", "a Ceph client needs a list of at least one pool name, got %r" % (pools,))])
    return ", ".join("profile rbd pool=%s" % pool for pool in pools)


def client_caps(pools):
    """CephClient spec.caps for an OpenStack client of the given pools."""
    return {"mon": MON_CAPS, "osd": osd_caps(pools), "mgr": MGR_CAPS}

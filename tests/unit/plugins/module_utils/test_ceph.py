# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph

# Rook's QuotaSpec.maxSize kubebuilder pattern.
ROOK_MAX_SIZE = re.compile(r"^[0-9]+[\.]?[0-9]*([KMGTPE]i|[kMGTPE])?$")


def test_quota_has_gib_semantics_as_the_seed_status_shows():
    assert ceph.quota_bytes(10000) == 10737418240000
    assert ceph.quota_bytes(1) == 1073741824
    assert ceph.quota_bytes(0) == 0


@pytest.mark.parametrize("value", [-1, 1.5, "10", True, None])
def test_quota_must_be_a_non_negative_integer(value):
    with pytest.raises(InputError, match="^quotaGB: must be an integer >= 0, got "):
        ceph.quota_bytes(value)


def test_pool_quotas_use_rook_max_size():
    quotas = ceph.pool_quotas(10000)
    assert quotas == {"maxSize": "10000Gi"}
    assert ROOK_MAX_SIZE.match(quotas["maxSize"])
    assert "maxBytes" not in quotas


def test_zero_quota_is_unlimited():
    assert ceph.pool_quotas(0) is None


def test_caps_name_exactly_the_pools_in_order():
    assert ceph.client_caps(["t-volumes", "t-images", "t-ephemeral"]) == {
        "mon": "profile rbd",
        "osd": "profile rbd pool=t-volumes, profile rbd pool=t-images, profile rbd pool=t-ephemeral",
        "mgr": "profile rbd",
    }
    assert ceph.osd_caps(["t-volumes"]) == "profile rbd pool=t-volumes"


def test_a_client_without_pools_is_refused():
    for pools in ([], "t-volumes", None):
        with pytest.raises(InputError, match="^pools: a Ceph client needs a list of at least one pool name"):
            ceph.osd_caps(pools)


def test_compression_modes():
    assert ceph.COMPRESSION_MODES == ("none", "passive", "aggressive", "force")

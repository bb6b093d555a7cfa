# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A storage pool's ceph section, its CephCluster and the parsing of Rook's outputs."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph_cluster
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region

FSID = "1b3bd3b4-37ac-4f2c-9b2d-0ad1e4b0f0d1"


def test_defaults_and_manifest():
    manifest = ceph_cluster.cluster_manifest("st-pool-a", None, "nvme")
    assert (manifest["kind"], manifest["metadata"]["name"], manifest["metadata"]["namespace"]) == (
        "CephCluster", "rook-ceph", "rook-ceph")
    spec = manifest["spec"]
    assert spec["mon"] == {"count": 3, "allowMultiplePerNode": False}
    assert spec["mgr"]["count"] == 2
    assert spec["storage"] == {"useAllNodes": True, "useAllDevices": True,
                               "config": {"osdsPerDevice": "1", "deviceClass": "nvme"}}
    spec = ceph_cluster.cluster_manifest("st", {"mon_count": 1, "device_filter": "^sd[b-z]$",
                                                "device_class": "ssd"}, "hdd", encrypted=True)["spec"]
    assert spec["mon"]["count"] == 1
    assert spec["storage"]["useAllDevices"] is False and spec["storage"]["deviceFilter"] == "^sd[b-z]$"
    assert spec["storage"]["config"] == {"osdsPerDevice": "1", "deviceClass": "ssd", "encryptedDevice": "true"}


def test_every_bad_field_is_named_at_once():
    with pytest.raises(InputError) as err:
        ceph_cluster.defaults({"mon_count": 2, "mgr_count": 9, "device_filter": "([", "osds_per_device": 0,
                               "data_dir_host_path": "/", "colour": "blue", "allow_multiple_mons_per_node": "yes"})
    fields = sorted(p.split(":")[0] for p in err.value.problems)
    assert fields == ["ceph.allow_multiple_mons_per_node", "ceph.colour", "ceph.data_dir_host_path",
                      "ceph.device_filter", "ceph.mgr_count", "ceph.mon_count", "ceph.osds_per_device"]


def test_the_region_model_checks_a_storage_pools_ceph_section():
    with pytest.raises(InputError) as err:
        build_region({"name": "r", "storage_pools": [{"name": "st", "ceph": {"mon_count": 4}}]})
    assert err.value.problems == [
        "region storage_pools[st].ceph.mon_count: must be an odd integer from 1 to 9 (a quorum), got 4"]
    build_region({"name": "r", "storage_pools": [{"name": "st", "ceph": {"mon_count": 5}}]})


def test_mon_endpoints_parse_as_rook_writes_them():
    assert ceph_cluster.parse_mon_endpoints("b=10.0.0.2:6789,a=10.0.0.1:6789,c=[fd00::3]:3300") == [
        {"name": "a", "endpoint": "10.0.0.1:6789"}, {"name": "b", "endpoint": "10.0.0.2:6789"},
        {"name": "c", "endpoint": "[fd00::3]:3300"}]
    # Mon names past z go on with aa, ab: order by length first.
    assert [m["name"] for m in ceph_cluster.parse_mon_endpoints("aa=1.1.1.1:6789,z=1.1.1.2:6789")] == ["z", "aa"]
    with pytest.raises(InputError) as err:
        ceph_cluster.parse_mon_endpoints("a=10.0.0.1,b=10.0.0.2:6789,b=10.0.0.3:6789,=1.2.3.4:6789")
    assert len(err.value.problems) == 3
    with pytest.raises(InputError):
        ceph_cluster.parse_mon_endpoints("")


def secret(fsid):
    return {"data": {"fsid": base64.b64encode(fsid.encode()).decode(), "mon-secret": "c2VjcmV0"}}


def test_cluster_info_from_rooks_outputs():
    cluster = {"status": {"phase": "Ready", "state": "Created", "message": "Cluster created successfully",
                          "ceph": {"health": "HEALTH_WARN", "fsid": FSID,
                                   "details": {"MON_CLOCK_SKEW": {"severity": "HEALTH_WARN", "message": "skew"}}}}}
    config_map = {"data": {"data": "a=10.96.0.10:6789,b=10.96.0.11:6789,c=10.96.0.12:6789"}}
    info = ceph_cluster.cluster_info(cluster, config_map, secret(FSID), "st-pool-a")
    assert info["fsid"] == FSID and info["monitors"] == ["10.96.0.10:6789", "10.96.0.11:6789", "10.96.0.12:6789"]
    assert info["checks"] == {"MON_CLOCK_SKEW": "skew"} and "c2VjcmV0" not in repr(info)
    assert ceph_cluster.health_problems(info, ["HEALTH_OK"], "st-pool-a") == [
        "storage pool st-pool-a: Ceph health is HEALTH_WARN, want HEALTH_OK (MON_CLOCK_SKEW: skew)"]
    assert ceph_cluster.health_problems(info, ["HEALTH_OK", "HEALTH_WARN"]) == []
    with pytest.raises(InputError) as err:
        ceph_cluster.cluster_info(cluster, None, secret("not-a-uuid"), "st-pool-a")
    assert err.value.problems == [
        "storage pool st-pool-a ConfigMap: rook-ceph/rook-ceph-mon-endpoints does not exist "
        "(Rook writes it when it starts the mons)",
        "storage pool st-pool-a Secret rook-ceph-mon: has no valid fsid"]
    with pytest.raises(InputError, match="differs"):
        ceph_cluster.cluster_info(cluster, config_map, secret("2b3bd3b4-37ac-4f2c-9b2d-0ad1e4b0f0d1"))


def test_failure_domain_is_a_crush_bucket_type_and_defaults_to_host():
    assert ceph_cluster.failure_domain(None) == ceph_cluster.failure_domain({}) == "host"
    assert ceph_cluster.failure_domain({"failure_domain": "rack"}) == "rack"
    assert ceph_cluster.validate({"failure_domain": "osd"}) == []
    assert ceph_cluster.validate({"failure_domain": "node"}) == [
        "ceph.failure_domain: must be a CRUSH bucket type (%s), got 'node'" % ", ".join(ceph_cluster.CRUSH_TYPES)]

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ceph_cluster_info: the fsid and monitors from Rook's outputs, never the mon keys, and its refusals."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

from ansible_collections.c5c3.cobaltcore.plugins.modules import ceph_cluster_info

from module_harness import assert_hidden, kubeconfig, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

ROOK = "ceph.rook.io/v1"
FSID = "1b3bd3b4-37ac-4f2c-9b2d-0ad1e4b0f0d1"
MON_KEY = "AQBqiwhrORVYCBAA+sdpdB6cueaQjbGMs57sEA=="
ADMIN_KEY = "AQBqiwhrORVYCBAAzzzzdB6cueaQjbGMs57sEA=="


def b64(text):
    return base64.b64encode(text.encode()).decode()


def rook(kube, health="HEALTH_OK", endpoints="a=10.96.0.10:6789,b=10.96.0.11:6789,c=10.96.0.12:6789"):
    kube.kinds[(ROOK, "CephCluster")] = ("cephclusters", True)
    kube.add({"apiVersion": ROOK, "kind": "CephCluster", "metadata": {"name": "rook-ceph", "namespace": "rook-ceph"},
              "status": {"phase": "Ready", "state": "Created", "message": "Cluster created successfully",
                         "ceph": {"health": health, "fsid": FSID}}})
    kube.add({"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "rook-ceph-mon-endpoints", "namespace": "rook-ceph"}, "data": {"data": endpoints}})
    kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "rook-ceph-mon", "namespace": "rook-ceph"},
              "data": {"fsid": b64(FSID), "mon-secret": b64(MON_KEY), "ceph-username": b64("client.admin"),
                       "ceph-secret": b64(ADMIN_KEY)}})


def test_fsid_and_monitors_never_the_keys(kube):
    rook(kube)
    result, text = run_module(ceph_cluster_info.main, {"kubeconfig": kubeconfig(), "pool": "st-pool-a",
                                                       "require_health": ["HEALTH_OK"]})
    assert not result.get("failed") and not result["changed"]
    assert result["fsid"] == FSID
    assert result["monitors"] == ["10.96.0.10:6789", "10.96.0.11:6789", "10.96.0.12:6789"]
    assert result["health"] == "HEALTH_OK" and result["phase"] == "Ready"
    assert result["requests"] == {"GET": 3}
    assert_hidden(text, MON_KEY, ADMIN_KEY)


def test_health_not_accepted_and_broken_outputs_fail(kube):
    rook(kube, health="HEALTH_WARN", endpoints="a=10.96.0.10")
    result, text = run_module(ceph_cluster_info.main, {"kubeconfig": kubeconfig(), "pool": "st-pool-a"})
    assert result["failed"] and "storage pool st-pool-a ConfigMap rook-ceph-mon-endpoints data" in result["msg"]
    assert_hidden(text, MON_KEY, ADMIN_KEY)
    kube.objects.clear()
    rook(kube, health="HEALTH_WARN")
    result, dummy = run_module(ceph_cluster_info.main, {"kubeconfig": kubeconfig(), "pool": "st-pool-a",
                                                        "require_health": ["HEALTH_OK"]})
    assert result["failed"] and result["msg"] == "storage pool st-pool-a: Ceph health is HEALTH_WARN, want HEALTH_OK"
    calls = len(kube.calls)
    result, dummy = run_module(ceph_cluster_info.main, {"kubeconfig": kubeconfig(), "require_health": ["GREEN"]})
    assert result["failed"] and "require_health: GREEN not one of" in result["msg"]
    assert len(kube.calls) == calls  # refused before the first request

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming


def test_tenant_names_follow_the_seed_conventions():
    assert naming.tenant_names("customer-a-prod") == {
        "name": "customer-a-prod",
        "namespace": "openstack-customer-a-prod",
        "control_plane": "customer-a-prod",
        "volumes_pool": "customer-a-prod-volumes",
        "images_pool": "customer-a-prod-images",
        "ephemeral_pool": "customer-a-prod-ephemeral",
        "ceph_client": "openstack-customer-a-prod",
        "rook_client_secret": "rook-ceph-client-openstack-customer-a-prod",
        "ceph_client_secret": "ceph-client-customer-a-prod",
        "filesystem": "customer-a-prod-cephfs",
        "object_store": "customer-a-prod-rgw",
        "object_store_user": "swift-customer-a-prod",
    }


def test_further_storage_pools_get_their_own_secret_and_backend():
    assert naming.ceph_client_secret("t") == "ceph-client-t"
    assert naming.ceph_client_secret("t", "st-pool-b") == "ceph-client-t-st-pool-b"
    assert naming.cinder_backend() == "ceph-volumes"
    assert naming.cinder_backend("st-pool-b") == "ceph-volumes-st-pool-b"


def test_default_control_plane_cluster():
    assert naming.control_plane_cluster("eu-de-1") == "eu-de-1-control-plane"


def test_claim_name_limit_leaves_room_for_the_namespace_prefix():
    assert naming.CLAIM_NAME_MAX == 53
    assert kube_names.is_dns1123_label(naming.tenant_namespace("a" * 53))
    assert not kube_names.is_dns1123_label(naming.tenant_namespace("a" * 54))


@pytest.mark.parametrize("value, valid", [
    ("a", True), ("a-1", True), ("0abc", True), ("a" * 63, True),
    ("a" * 64, False), ("", False), ("-a", False), ("a-", False), ("A", False),
    ("a.b", False), ("a_b", False), (None, False), (5, False),
])
def test_dns1123_label(value, valid):
    assert kube_names.is_dns1123_label(value) is valid


def test_dns1123_label_without_length_limit():
    assert kube_names.is_dns1123_label("a" * 80, max_length=None)
    assert not kube_names.is_dns1123_label("A" * 3, max_length=None)


@pytest.mark.parametrize("value, valid", [
    ("ceph-client-x", True), ("a.b.c", True), ("a" * 254, False), ("", False), ("a..b", False),
])
def test_dns1123_subdomain(value, valid):
    assert kube_names.is_dns1123_subdomain(value) is valid


@pytest.mark.parametrize("key, valid", [
    ("dedicated", True), ("c5c3.io/openstack-cluster", True), ("app.kubernetes.io/managed-by", True),
    ("Tier_1.x", True), ("/x", False), ("bad prefix/x", False), ("x" * 64, False), ("", False),
])
def test_label_key(key, valid):
    assert kube_names.is_label_key(key) is valid


@pytest.mark.parametrize("value, valid", [
    ("true", True), ("", True), ("sox", True), ("a b", False), ("x" * 64, False), (True, False),
])
def test_label_value(value, valid):
    assert kube_names.is_label_value(value) is valid


def test_tenant_labels():
    assert naming.tenant_labels("t") == {
        "app.kubernetes.io/managed-by": "c5c3.cobaltcore",
        "c5c3.io/openstack-cluster-name": "t",
    }

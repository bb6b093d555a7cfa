# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rook (ceph.rook.io/v1) manifests as the seed composition writes them."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

FAILURE_DOMAIN = "host"


def _rook_object(kind, name, labels, spec):
    return {
        "apiVersion": naming.ROOK_API_VERSION,
        "kind": kind,
        "metadata": {"name": name, "namespace": naming.ROOK_NAMESPACE, "labels": dict(labels)},
        "spec": spec,
    }


def block_pool(name, labels, replication, compression, quota_gb=0, require_safe_replica_size=None,
               failure_domain=FAILURE_DOMAIN):
    """CephBlockPool; require_safe_replica_size None leaves Rook's default."""
    replicated = {"size": replication}
    if require_safe_replica_size is not None:
        replicated["requireSafeReplicaSize"] = require_safe_replica_size
    spec = {
        "failureDomain": failure_domain,
        "replicated": replicated,
        "parameters": {"compression_mode": compression},
    }
    quotas = ceph.pool_quotas(quota_gb)
    if quotas is not None:
        spec["quotas"] = quotas
    return _rook_object("CephBlockPool", name, labels, spec)


def client(name, labels, pools):
    """CephClient with RBD access to exactly the given pools."""
    return _rook_object("CephClient", name, labels, {"caps": ceph.client_caps(pools)})


# A deleted CephFilesystem/CephObjectStore keeps its Ceph pools (Rook's preserve...OnDelete) until a
# tenant's removal with allow_data_loss releases them (RELEASE_DATA).
PRESERVE_ON_DELETE = {
    "CephFilesystem": ("preserveFilesystemOnDelete", "preservePoolsOnDelete"),
    "CephObjectStore": ("preservePoolsOnDelete",),
}


def _preserved(kind, spec, preserve=True):
    spec.update((field, preserve) for field in PRESERVE_ON_DELETE[kind])
    return spec


def _replicated(size, failure_domain):
    return {"failureDomain": failure_domain, "replicated": {"size": size}}


def filesystem(name, labels, data_replication, metadata_replication, failure_domain=FAILURE_DOMAIN):
    """CephFilesystem with one data pool and one active MDS plus a standby; kept in Ceph when deleted. Its pools
    spread their replicas over the storage pool's failure domain, as the block pools do."""
    return _rook_object("CephFilesystem", name, labels, _preserved("CephFilesystem", {
        "metadataPool": _replicated(metadata_replication, failure_domain),
        "dataPools": [dict(_replicated(data_replication, failure_domain), name="data0")],
        "metadataServer": {"activeCount": 1, "activeStandby": True},
    }))


# The object store's metadata pools (bucket indexes, users) keep three replicas whatever the claim says.
OBJECT_STORE_METADATA_REPLICATION = 3
# The gateways serve plain HTTP inside the storage cluster. Seed 002 also writes securePort 443, but without a
# certificate Rook refuses the gateways ("no TLS certificates found"), and there is none to give them here: the
# claim's tls.issuerRef is a cert-manager issuer of the control plane (a storage pool runs no cert-manager), and the
# gateway's only name, rook-ceph-rgw-<store>.rook-ceph.svc, is one no public issuer signs.
OBJECT_STORE_GATEWAY = {"port": 80, "instances": 2}


def object_store(name, labels, data_replication, failure_domain=FAILURE_DOMAIN):
    """CephObjectStore (RadosGW) for the Swift/S3 API; its pools are kept in Ceph when deleted and spread their
    replicas over the storage pool's failure domain."""
    return _rook_object("CephObjectStore", name, labels, _preserved("CephObjectStore", {
        "metadataPool": _replicated(OBJECT_STORE_METADATA_REPLICATION, failure_domain),
        "dataPool": _replicated(data_replication, failure_domain),
        "gateway": dict(OBJECT_STORE_GATEWAY),
    }))


# Rook's annotation (controller/cleanup.go) that lets it delete a CephBlockPool holding RBD images: its clean-up
# Job removes them; without it the pool's deletion stays blocked (PoolDeletionIsBlocked).
FORCE_DELETION = "rook.io/force-deletion"
# The kinds whose data a tenant's removal with allow_data_loss releases before it deletes them.
RELEASED_KINDS = tuple(PRESERVE_ON_DELETE) + ("CephBlockPool",)


def release_data(kind, name):
    """The patch that lets Rook delete the data with the CR: a CephFilesystem's/CephObjectStore's Ceph pools (not
    preserved), a CephBlockPool's images (force deletion)."""
    manifest = {"apiVersion": naming.ROOK_API_VERSION, "kind": kind,
                "metadata": {"name": name, "namespace": naming.ROOK_NAMESPACE}}
    if kind in PRESERVE_ON_DELETE:
        manifest["spec"] = _preserved(kind, {}, preserve=False)
    else:
        manifest["metadata"]["annotations"] = {FORCE_DELETION: "true"}
    return manifest


def object_store_user(name, labels, store, display_name):
    """CephObjectStoreUser with full user and bucket capabilities on its store."""
    return _rook_object("CephObjectStoreUser", name, labels, {
        "store": store,
        "displayName": display_name,
        "capabilities": {"user": "*", "bucket": "*"},
    })

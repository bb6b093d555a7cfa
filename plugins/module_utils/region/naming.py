# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every naming convention of the CobaltCore pool model, defined once.

The conventions come from the seed composition (OpenStackCluster -> ControlPlane
and Rook resources). Nothing else in the collection builds these names.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import collection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.kube_names import DNS1123_LABEL_MAX

# API groups and kinds.
CLAIM_API_VERSION = "c5c3.io/v1alpha1"
CLAIM_KIND = "OpenStackCluster"
CONTROL_PLANE_API_VERSION = "c5c3.io/v1alpha1"
CONTROL_PLANE_KIND = "ControlPlane"
ROOK_API_VERSION = "ceph.rook.io/v1"
ROOK_NAMESPACE = "rook-ceph"

# Labels. The namespace label and its value are the seed's; the other two let a
# later phase find (and remove) exactly one tenant's objects.
OPENSTACK_CLUSTER_LABEL = "c5c3.io/openstack-cluster"
OPENSTACK_CLUSTER_LABEL_VALUE = "true"
OPENSTACK_CLUSTER_NAME_LABEL = "c5c3.io/openstack-cluster-name"
MANAGED_BY_LABEL = collection.MANAGED_BY_LABEL
MANAGED_BY = collection.NAME
# Phases 1-2: which inventory host (cluster) a Shoot plays, which pool a ServerClaim
# serves, and the IronCore machine pool and class of a Server (from its BMC's entry).
CLUSTER_LABEL = "c5c3.io/cluster"
POOL_LABEL = "c5c3.io/pool"
MACHINE_POOL_LABEL = "c5c3.io/machine-pool"
MACHINE_CLASS_LABEL = "c5c3.io/machine-class"
# A Server's availability zone (from its BMC's entry); the cloud-controller-manager copies it to its
# Node (ironcore-dev/cloud-provider-metal), where the hypervisor operator reads it as the Nova zone.
ZONE_LABEL = "topology.kubernetes.io/zone"

# Key of the Ceph key inside the client secrets (Rook writes it, the seed's
# ControlPlane reads it).
CEPH_CLIENT_SECRET_KEY = "userKey"
# The Secrets phase 7 copies the Ceph users' keys into (ceph_client_secret).
CEPH_CLIENT_SECRET_PREFIX = "ceph-client-"
# Key of the Ceph user's name (without client.) in the same Secrets; copied with the key in one write.
CEPH_CLIENT_USER_KEY = "userID"

NAMESPACE_PREFIX = "openstack-"
# The region's own OpenStack cluster (seed 003: ControlPlane in namespace openstack).
REGION_NAMESPACE = "openstack"
# openstack-<name> is a namespace, so it must be a DNS-1123 label itself.
CLAIM_NAME_MAX = DNS1123_LABEL_MAX - len(NAMESPACE_PREFIX)


def tenant_namespace(name):
    """Namespace of an OpenStack cluster in the control-plane cluster."""
    return NAMESPACE_PREFIX + name


def control_plane_name(name):
    """The ControlPlane CR carries the claim's own name."""
    return name


def volumes_pool(name):
    return name + "-volumes"


def images_pool(name):
    return name + "-images"


def ephemeral_pool(name):
    return name + "-ephemeral"


def ceph_client(name, version=0):
    """CephClient CR name, which Rook makes the Ceph user client.<it>: version 0 the seed's openstack-<name>, version
    N openstack-<name>-v<N> (Ceph keeps one key per user, so a new key beside the old one is a new user)."""
    return _versioned("openstack-" + name, version)


def rook_client_secret(name, version=0):
    """Secret Rook writes for the CephClient in the storage cluster."""
    return "rook-ceph-client-" + ceph_client(name, version)


def ceph_client_secret(name, storage_pool=None, version=0):
    """Secret holding the Ceph user and key in the tenant namespace of the control plane.

    The first storage pool keeps the seed's name; every further storage pool
    (tiered pools) has a client of its own, so its copy needs its own name. Each
    client version has its own Secret (-v<N>), so the ControlPlane switches by reference.
    """
    base = CEPH_CLIENT_SECRET_PREFIX + name
    return _versioned(base if storage_pool is None else base + "-" + storage_pool, version)


def filesystem(name):
    return name + "-cephfs"


OBJECT_STORE_SUFFIX = "-rgw"
# Rook refuses a longer CephObjectStore name (objectStoreNameMaxLen, apis/ceph.rook.io/v1/object.go): the store
# stays Progressing, its gateways never made.
ROOK_OBJECT_STORE_NAME_MAX = 38
# So a claim with an object store has at most this many characters.
CLAIM_WITH_OBJECT_STORE_NAME_MAX = ROOK_OBJECT_STORE_NAME_MAX - len(OBJECT_STORE_SUFFIX)


def object_store(name):
    return name + OBJECT_STORE_SUFFIX


def object_store_user(name):
    return "swift-" + name


def object_store_user_display_name(name):
    return "OpenStack Swift User - " + name


def cinder_backend(storage_pool=None):
    """Cinder backend name; the first storage pool keeps the seed's name."""
    return "ceph-volumes" if storage_pool is None else "ceph-volumes-" + storage_pool


def control_plane_cluster(region):
    """Default control-plane cluster of a region (XRD: region-control-plane)."""
    return region + "-control-plane"


def shoot_name(pool):
    """The Shoot of a cluster: its inventory host name unless the pool names one."""
    return (pool.get("gardener") or {}).get("shoot_name") or pool["name"]


def gardener_technical_id(project, shoot):
    """The Shoot's technical ID (its namespace in the seed), as gardener computes it."""
    return "shoot--%s--%s" % (project, shoot)


def server_claim(pool, index):
    """The index-th ServerClaim of a pool (1-based)."""
    return "%s-%d" % (pool, index)


def ignition_secret(pool):
    """The Secret with the ignition of every server a pool claims."""
    return pool + "-ignition"


def bmc_secret(credentials):
    """The BMCSecret holding one set of BMC credentials."""
    return "bmc-" + credentials


def tenant_names(name):
    """All names derived from one claim name, for templates and docs."""
    return {
        "name": name,
        "namespace": tenant_namespace(name),
        "control_plane": control_plane_name(name),
        "volumes_pool": volumes_pool(name),
        "images_pool": images_pool(name),
        "ephemeral_pool": ephemeral_pool(name),
        "ceph_client": ceph_client(name),
        "rook_client_secret": rook_client_secret(name),
        "ceph_client_secret": ceph_client_secret(name),
        "filesystem": filesystem(name),
        "object_store": object_store(name),
        "object_store_user": object_store_user(name),
    }


def tenant_labels(name):
    """Labels on every object composed for one claim."""
    return {
        MANAGED_BY_LABEL: MANAGED_BY,
        OPENSTACK_CLUSTER_NAME_LABEL: name,
    }


# ---------------------------------------------------------------------------
# Keystone bootstrap and the K-ORC catalog (phase 5), per OpenStack cluster. Every
# object lives in the namespace of its OpenStack cluster on the control-plane cluster.

KORC_API_VERSION = "openstack.k-orc.cloud/v1alpha1"
# The Secret K-ORC reads its own credentials from (seed 003), its key (K-ORC's
# CloudCredentialsConfigSecretKey) and the cloud in it.
KORC_CLOUDS_SECRET = "k-orc-clouds-yaml"
KORC_CLOUDS_KEY = "clouds.yaml"
KORC_CLOUD_NAME = "openstack"
# The key of an ApplicationCredential's secretRef Secret that K-ORC v2.6.0 reads the
# credential's secret from (it writes nothing back), and of a User's passwordRef Secret.
KORC_APPLICATION_CREDENTIAL_SECRET_KEY = "value"
KORC_PASSWORD_KEY = "password"


def korc_application_credential_name(namespace):
    """The Keystone application credential minted for K-ORC of one OpenStack cluster."""
    return "k-orc-" + namespace


def korc_object_name(name):
    """K-ORC object name for a Keystone name (Default -> default, a_b -> a-b)."""
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")


def korc_endpoint(service, interface):
    """The K-ORC Endpoint of one interface of a catalog service."""
    return "%s-%s" % (service, interface)


def _versioned(name, version):
    return name + ("-v%d" % version if version else "")


def service_keystone_credentials_secret(service, version=0):
    """Version 0: the application credential Secret a service CR references (seed 003 appCredentialRef), whose
    secret K-ORC also creates the first credential with. Version N: the Secret K-ORC creates that version's
    credential with (<service>-keystone-credentials-v<N>); the service CR's Secret then gets its ID and secret."""
    return _versioned(service + "-keystone-credentials", version)


def service_application_credential(service, version=0):
    """The K-ORC ApplicationCredential (and its Keystone name) of a service's credential version: K-ORC's
    ApplicationCredential is immutable, so each version is an object of its own."""
    return _versioned(service, version)


def service_keystone_user_secret(service, version=0):
    """The service user's Secret: its password (User passwordRef) and its own clouds.yaml. Each version of the
    service passwords has Secrets of its own (K-ORC changes a user's password when its passwordRef names another
    Secret): version 0 is <service>-keystone-user, version N <service>-keystone-user-v<N>."""
    return _versioned(service + "-keystone-user", version)


# ---------------------------------------------------------------------------
# K-ORC's credentials through OpenBao (seed 003), when the region runs OpenBao: korc_credentials
# writes the minted clouds.yaml into KORC_APP_CREDENTIAL_SECRET, a PushSecret copies it into
# OpenBao and an ExternalSecret reads it back into KORC_CLOUDS_SECRET. All three live in the
# namespace of the OpenStack cluster (cloudCredentialsRef names a Secret of its own namespace).

EXTERNAL_SECRETS_GROUP = "external-secrets.io"
PUSH_SECRET_API_VERSION = "external-secrets.io/v1alpha1"
PUSH_SECRET_KIND = "PushSecret"
# Seed 003's version; external-secrets v0.16 serves it beside v1 (stored as v1).
EXTERNAL_SECRET_API_VERSION = "external-secrets.io/v1beta1"
EXTERNAL_SECRET_KIND = "ExternalSecret"
CLUSTER_SECRET_STORE_KIND = "ClusterSecretStore"
SECRET_STORE_KIND = "SecretStore"
SECRET_STORE_KINDS = (CLUSTER_SECRET_STORE_KIND, SECRET_STORE_KIND)
OPENBAO_STORE = "openbao-cluster-store"
# The PushSecret's source Secret (and the PushSecret's own name).
KORC_APP_CREDENTIAL_SECRET = "k-orc-app-credential"
# Where in OpenBao; {namespace} is the OpenStack cluster's namespace (seed: kv-v2/data/openstack/...).
OPENBAO_KORC_REMOTE_KEY = "kv-v2/data/{namespace}/k-orc/app-credential"


def openbao_korc_remote_key(namespace, template=OPENBAO_KORC_REMOTE_KEY):
    """The OpenBao key of one OpenStack cluster's K-ORC credential."""
    return template.format(namespace=namespace)

# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seed composition without Crossplane: an OpenStackCluster claim becomes a
namespace and a ControlPlane in the control-plane cluster and the tenant's Rook
resources in its storage pools.

Placement rules (one place, used by both sides):
- A Ceph pool exists only when the service that uses it is enabled: volumes
  with Cinder, images with Glance, ephemeral with Nova (and ephemeralPool
  enabled).
- The first storage pool hosts images, ephemeral, the CephFilesystem (when
  enabled or Manila is on) and the object store; every storage pool hosts a
  volumes pool (tiered pools) and a CephClient for exactly its own pools.

Keystone's bootstrap settings reach its CR only through the ControlPlane: the c5c3-operator
projects `bootstrap.region` from `global.region` and `bootstrap.publicEndpoint` from the keystone
service's `publicEndpoint` (upstream's ControlPlane field), each the catalog's (the region's public
URL template, `cobaltcore_network.endpoints.public_url_template`, for keystone).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.timestamps import duration_seconds
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph_cluster
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import rook_manifests
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import (
    claim_list, claim_ref, claim_spec_with_defaults, validate_claims)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.services import (
    DEFAULT_SERVICES, identity_public_url)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region, public_url_template_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.size_presets import size_preset


class StoragePlacement(object):
    """What one storage pool hosts for one tenant."""

    def __init__(self, name, spec, cluster, primary, client_version=0):
        services = spec["services"]
        ceph = spec["storage"]["ceph"]
        suffix = None if primary else cluster
        self.cluster = cluster
        self.client_version = client_version
        self.client = naming.ceph_client(name, client_version)
        self.secret = naming.ceph_client_secret(name, suffix, client_version)
        # Lower client versions: retired once the ControlPlane's consumers run the current one.
        self.retired_clients = [naming.ceph_client(name, v) for v in range(client_version)]
        self.retired_secrets = [naming.ceph_client_secret(name, suffix, v) for v in range(client_version)]
        self.cinder_backend = naming.cinder_backend(suffix)
        # role -> Ceph pool name, in the seed's caps order.
        self.pools = {}
        if services["cinder"]:
            self.pools["volumes"] = naming.volumes_pool(name)
        if primary and services["glance"]:
            self.pools["images"] = naming.images_pool(name)
        if primary and services["nova"] and ceph["ephemeralPool"]["enabled"]:
            self.pools["ephemeral"] = naming.ephemeral_pool(name)
        self.filesystem = primary and (ceph["filesystem"]["enabled"] or services["manila"])
        self.object_store = primary and ceph["objectStore"]["enabled"]


def storage_placements(name, spec, client_version=0):
    """One StoragePlacement per storage pool of a defaulted spec, in claim order."""
    return [StoragePlacement(name, spec, cluster, index == 0, client_version)
            for index, cluster in enumerate(spec["storageClusters"])]


def compose_openstack_cluster(claim, region, claims=None, public_url_template=None, ceph_client_version=0):
    """Every manifest of one claim.

    claims, when given, is the region's full claim list (containing claim):
    the rules between claims are then checked too. Raises InputError
    listing every problem when any claim is invalid. public_url_template: the
    region's (None: an inventory-shaped region's own, else the catalog's default).
    ceph_client_version: the version of the tenants' Ceph users (0: the seed's openstack-<name>).
    """
    if claims is None:
        claims = [claim]
    elif not isinstance(claims, (list, tuple)) or claim not in claims:
        raise InputError([problem("claims", "must be a list that holds the claim %s" % claim_ref(claim, 0))])
    template = public_url_template or public_url_template_of(region)
    region = _validated(claims, region)
    version = _client_version(ceph_client_version)
    region = _validated(claims, region)
    _refuse_unplaceable_replicas([(claim, claim_ref(claim, 0))], region)
    return _compose(claim, region, claim_ref(claim, 0), template, version)


def compose_openstack_clusters(claims, region, public_url_template=None, ceph_client_version=0):
    """The compositions of all claims, or InputError if any is invalid."""
    template = public_url_template or public_url_template_of(region)
    version = _client_version(ceph_client_version)
    region = _validated(claims, region)
    refs = [(claim, claim_ref(claim, index)) for index, claim in enumerate(claim_list(claims))]
    _refuse_unplaceable_replicas(refs, region)
    return [_compose(claim, region, ref, template, version) for claim, ref in refs]


def _client_version(version):
    """The Ceph client version as a number, or InputError."""
    if isinstance(version, bool) or not isinstance(version, (int, str)) or not str(version).isdigit():
        raise InputError([problem("ceph_client_version", "must be a whole number >= 0, got %r" % (version,))])
    return int(version)


# Which replication setting a block pool of each role takes.
REPLICATION_FIELDS = {"volumes": "volumePool", "images": "imagePool", "ephemeral": "ephemeralPool"}


def _replicated_pools(spec, placement):
    """[(claim field, replicas)]: every pool the placement puts on its storage pool - block pools, the filesystem's
    and the object store's - by the claim field that sets its replication."""
    ceph = spec["storage"]["ceph"]
    pools = [("spec.storage.ceph.%s.replication" % REPLICATION_FIELDS[role], ceph[REPLICATION_FIELDS[role]]["replication"])
             for role in placement.pools]
    if placement.filesystem:
        pools += [("spec.storage.ceph.filesystem.%s" % field, ceph["filesystem"][field])
                  for field in ("dataPoolReplication", "metadataPoolReplication")]
    if placement.object_store:
        pools += [("spec.storage.ceph.objectStore.dataPoolReplication", ceph["objectStore"]["dataPoolReplication"]),
                  ("spec.storage.ceph.objectStore.enabled (its metadata pools)",
                   rook_manifests.OBJECT_STORE_METADATA_REPLICATION)]
    return pools


def replicas_by_storage_pool(claim):
    """{storage pool: [(claim field, replicas)]} of every pool the claim puts on each of its storage pools."""
    spec = claim_spec_with_defaults(claim["spec"])
    return dict((placement.cluster, _replicated_pools(spec, placement))
                for placement in storage_placements(claim["metadata"]["name"], spec))


def _refuse_unplaceable_replicas(refs, region):
    """A pool whose replicas outnumber its storage pool's hosts, with the replicas spread over hosts: Ceph could
    place only as many as there are hosts, so its placement groups would stay undersized and, below min_size,
    refuse writes. Raises InputError naming every such field."""
    problems = []
    for claim, ref in refs:
        for cluster, pools in replicas_by_storage_pool(claim).items():
            if _failure_domain(region, cluster) != "host":
                continue
            hosts = region.pool(cluster).data.get("workers") or 0
            for field, replicas in pools:
                if hosts and replicas > hosts:
                    problems.append(problem(
                        field,
                        "%d replicas need %d hosts, but storage pool %s has %d (workers; its ceph.failure_domain is "
                        "host): lower the replication or spread the pool's replicas over OSDs"
                        % (replicas, replicas, cluster, hosts), ref))
    if problems:
        raise InputError(problems)


def _validated(claims, region):
    """The built region once every claim (and the region) is valid."""
    problems = validate_claims(claims, region)
    if problems:
        raise InputError(problems)
    return build_region(region)


def _compose(claim, region, ref, public_url_template=None, client_version=0):
    name = claim["metadata"]["name"]
    spec = claim_spec_with_defaults(claim["spec"])
    placements = storage_placements(name, spec, client_version)
    labels = naming.tenant_labels(name)
    return {
        "name": name,
        "claim": ref,
        "namespace": naming.tenant_namespace(name),
        "control_plane_cluster": spec.get("controlPlaneCluster", region.default_control_plane),
        "control_plane": [
            namespace_manifest(name, labels),
            control_plane_manifest(name, spec, placements, labels, public_url_template),
        ],
        "storage": dict((placement.cluster, storage_manifests(name, spec, placement, labels,
                                                              _failure_domain(region, placement.cluster)))
                        for placement in placements),
        "ceph_client_secrets": [ceph_client_secret(name, placement)
                                for placement in placements if placement.pools],
        "retired_ceph_clients": dict(
            (placement.cluster, [_retired(naming.ROOK_API_VERSION, "CephClient", naming.ROOK_NAMESPACE, client)
                                 for client in placement.retired_clients])
            for placement in placements if placement.pools and placement.retired_clients),
        "retired_ceph_client_secrets": [_retired("v1", "Secret", naming.tenant_namespace(name), secret)
                                        for placement in placements if placement.pools
                                        for secret in placement.retired_secrets],
    }


def _retired(api_version, kind, namespace, name):
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}}


def _failure_domain(region, cluster):
    return ceph_cluster.failure_domain(region.pool(cluster).data.get("ceph"))


def namespace_manifest(name, labels):
    namespace_labels = {naming.OPENSTACK_CLUSTER_LABEL: naming.OPENSTACK_CLUSTER_LABEL_VALUE}
    namespace_labels.update(labels)
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": naming.tenant_namespace(name), "labels": namespace_labels},
    }


def ceph_client_secret(name, placement):
    """Where Rook's client Secret is read from and where the ControlPlane expects its user and key."""
    return {
        "storage_cluster": placement.cluster,
        "source": {"namespace": naming.ROOK_NAMESPACE,
                   "name": naming.rook_client_secret(name, placement.client_version)},
        "target": {"namespace": naming.tenant_namespace(name), "name": placement.secret},
        "key": [naming.CEPH_CLIENT_USER_KEY, naming.CEPH_CLIENT_SECRET_KEY],
    }


def storage_manifests(name, spec, placement, labels, failure_domain=rook_manifests.FAILURE_DOMAIN):
    """The Rook resources one storage pool hosts for the tenant; its block pools spread their replicas over the
    storage pool's failure domain."""
    ceph = spec["storage"]["ceph"]
    manifests = [_block_pool(role, pool, ceph, labels, failure_domain) for role, pool in placement.pools.items()]
    if placement.pools:
        manifests.append(rook_manifests.client(placement.client, labels, list(placement.pools.values())))
    if placement.filesystem:
        manifests.append(rook_manifests.filesystem(
            naming.filesystem(name), labels,
            ceph["filesystem"]["dataPoolReplication"],
            ceph["filesystem"]["metadataPoolReplication"], failure_domain))
    if placement.object_store:
        manifests.append(rook_manifests.object_store(
            naming.object_store(name), labels, ceph["objectStore"]["dataPoolReplication"], failure_domain))
        manifests.append(rook_manifests.object_store_user(
            naming.object_store_user(name), labels, naming.object_store(name),
            naming.object_store_user_display_name(name)))
    return manifests


def _block_pool(role, pool, ceph, labels, failure_domain):
    if role == "volumes":
        settings = ceph["volumePool"]
        replication = settings["replication"]
        # Rook refuses requireSafeReplicaSize with a single replica.
        return rook_manifests.block_pool(
            pool, labels, replication, settings["compression"],
            quota_gb=settings.get("quotaGB", 0),
            require_safe_replica_size=replication > 1, failure_domain=failure_domain)
    if role == "images":
        settings = ceph["imagePool"]
        return rook_manifests.block_pool(
            pool, labels, settings["replication"], settings["compression"], failure_domain=failure_domain)
    # Ephemeral disks: fewer replicas, no compression (performance over space).
    return rook_manifests.block_pool(pool, labels, ceph["ephemeralPool"]["replication"], "none",
                                     failure_domain=failure_domain)


def control_plane_manifest(name, spec, placements, labels, public_url_template=None):
    """The ControlPlane CR: the composition's base and patches plus the seed's
    "Ceph Integration in c5c3-operator" sections, and the region and Keystone public endpoint
    the c5c3-operator projects into the Keystone CR's bootstrap."""
    preset = size_preset(spec["size"])
    storage = {"storageClusters": list(spec["storageClusters"])}
    ceph = _ceph_section(placements[0], name)
    if ceph:
        storage["ceph"] = ceph
    return {
        "apiVersion": naming.CONTROL_PLANE_API_VERSION,
        "kind": naming.CONTROL_PLANE_KIND,
        "metadata": {
            "name": naming.control_plane_name(name),
            "namespace": naming.tenant_namespace(name),
            "labels": dict(labels),
        },
        "spec": {
            "compute": {"hypervisorClusters": list(spec["hypervisorClusters"])},
            "storage": storage,
            "infrastructure": _infrastructure(preset),
            "openstack": _openstack_section(name, spec, placements, preset, public_url_template),
            "network": dict(spec["network"]),
            "cortex": _enabled_section(spec["cortex"], {"pipelines": list(spec["cortex"]["pipelines"])}),
            "tls": _enabled_section(spec["tls"], _present(spec["tls"], "issuerRef")),
            "global": {"region": spec["region"]},
        },
    }


def _infrastructure(preset):
    return {
        "mariadb": {"replicas": preset["mariadb"], "storageSize": "100Gi"},
        "rabbitmq": {"replicas": 3},
        "valkey": {"replicas": 3, "sentinel": {"enabled": True}},
        "memcached": {"replicas": 3},
    }


def _ceph_section(primary, name):
    ceph = {}
    if primary.pools:
        ceph["secretRef"] = {"name": primary.secret, "key": naming.CEPH_CLIENT_SECRET_KEY}
        ceph["user"] = primary.client
        ceph["pools"] = dict(primary.pools)
    if primary.filesystem:
        ceph["filesystem"] = {"name": naming.filesystem(name)}
    return ceph


def _enabled_section(settings, details):
    """{enabled: ...} plus details only when enabled: a disabled part gets no settings."""
    section = {"enabled": settings["enabled"]}
    if settings["enabled"]:
        section.update(details)
    return section


def _present(settings, *keys):
    """The given keys of settings that the claim sets (they have no default)."""
    return dict((key, settings[key]) for key in keys if key in settings)


def _openstack_section(name, spec, placements, preset, public_url_template=None):
    services = spec["services"]
    primary = placements[0]

    def service(flag, details):
        return _enabled_section({"enabled": services[flag]}, details)

    nova = {
        "api": {"replicas": preset["nova_api"]},
        "scheduler": {"replicas": 2},
        "conductor": {"replicas": 3},
    }
    if "ephemeral" in primary.pools:
        nova["ephemeral"] = {"backend": "rbd", "pool": primary.pools["ephemeral"]}
    glance = {"replicas": 2}
    if "images" in primary.pools:
        glance["backend"] = {"type": "rbd", "pool": primary.pools["images"]}
    return {
        "keystone": {"replicas": preset["keystone"], "publicEndpoint": identity_public_url(
            public_url_template, naming.tenant_namespace(name), spec["region"], name)},
        "nova": service("nova", nova),
        "neutron": service("neutron", {"api": {"replicas": 3}, "server": {"replicas": 3}}),
        "glance": service("glance", glance),
        "cinder": service("cinder", _cinder(placements)),
        "octavia": service("octavia", {}),
        "manila": service("manila", {"backends": [
            {"name": "cephfs", "type": "cephfs", "filesystem": naming.filesystem(name)}]}),
    }


def _cinder(placements):
    """One RBD backend and one volume type per storage pool (tiered pools)."""
    backends = []
    volume_types = []
    for placement in placements:
        if "volumes" not in placement.pools:
            continue
        backends.append({
            "name": placement.cinder_backend,
            "type": "rbd",
            "pool": placement.pools["volumes"],
            "secretRef": placement.secret,
            "user": placement.client,
            "storageCluster": placement.cluster,
        })
        volume_types.append({"name": placement.cluster, "backend": placement.cinder_backend})
    cinder = {"api": {"replicas": 2}, "scheduler": {"replicas": 2}, "backends": backends,
              "volumeTypes": volume_types}
    if volume_types:
        cinder["defaultVolumeType"] = volume_types[0]["name"]
    return cinder


# The region's own OpenStack cluster: seed 003's ControlPlane example, for the region's pools.
REGION_SERVICES = ("keystone", "glance", "placement", "nova", "neutron", "cinder", "octavia", "manila", "horizon")
KORC_BOOTSTRAP_RESOURCES = ("domains", "projects")


def key_rotation_interval_problems(interval):
    """The ControlPlane's services.keystone.rotationInterval as upstream's webhook accepts it: whole days."""
    seconds = duration_seconds(interval)
    if seconds is None or seconds <= 0 or seconds % 86400:
        return [problem("key_rotation_interval", "%r must be a positive whole number of days as a duration "
                        "(e.g. 24h, 168h); only daily and weekly Fernet rotation schedules are supported"
                        % (interval,))]
    return []


def region_control_plane(region, services=None, size="medium", public_url_template=None, key_rotation_interval=None):
    """The ControlPlane of the region's own OpenStack cluster (namespace openstack, named after the
    region), running on all of the region's hypervisor and storage pools; services None: the
    seed's six, the ones the Keystone catalog registers by default. Keystone's public endpoint is
    the region's public URL template's (None: the catalog's default) for the cluster named after
    the region, as phase 5's catalog renders it; key_rotation_interval (a duration of whole days)
    is the interval of Keystone's fernet and credential key rotation (None: upstream's weekly default)."""
    problems = []
    if key_rotation_interval is not None:
        problems.extend(key_rotation_interval_problems(key_rotation_interval))
    names = list(DEFAULT_SERVICES if services is None else services)
    unknown = [n for n in names if n not in REGION_SERVICES]
    if unknown:
        problems.append(problem("services", "unknown %s (known: %s)"
                                % (", ".join(map(str, unknown)), ", ".join(REGION_SERVICES))))
    if "keystone" not in names:
        problems.append(problem("services", "keystone is required (every OpenStack cluster has its own)"))
    try:
        preset = size_preset(size)
    except InputError as error:
        problems.extend(error.problems)
    if not kube_names.is_dns1123_label(str(region.get("name") or "")):
        problems.append(problem("name", "%r is not a DNS-1123 label (it names the ControlPlane)" % (region.get("name"),),
                                "region"))
    if problems:
        raise InputError(problems)
    enabled = dict((n, {"enabled": n in names}) for n in REGION_SERVICES)
    enabled["keystone"]["replicas"] = preset["keystone"]
    enabled["keystone"]["publicEndpoint"] = identity_public_url(public_url_template, naming.REGION_NAMESPACE,
                                                                region["name"], region["name"])
    if key_rotation_interval is not None:
        enabled["keystone"]["rotationInterval"] = str(key_rotation_interval)
    labels = {naming.OPENSTACK_CLUSTER_NAME_LABEL: region["name"], naming.MANAGED_BY_LABEL: naming.MANAGED_BY}
    return {
        "apiVersion": naming.CONTROL_PLANE_API_VERSION,
        "kind": naming.CONTROL_PLANE_KIND,
        "metadata": {"name": region["name"], "namespace": naming.REGION_NAMESPACE, "labels": labels},
        "spec": {
            "infrastructure": _infrastructure(preset),
            "services": enabled,
            "compute": {"hypervisorClusters": [p["name"] for p in region.get("hypervisor_pools") or []]},
            "storage": {"storageClusters": [p["name"] for p in region.get("storage_pools") or []]},
            "korc": {"enabled": True, "bootstrapResources": list(KORC_BOOTSTRAP_RESOURCES)},
            "global": {"region": region["name"]},
        },
    }

"""Rook stand-in: status of the ceph.rook.io/v1 kinds as rook-ceph v1.17.9 writes it.

Run from the gardenlet stand-in's loop over the storage-pool clusters (no process of its own),
once the rook-ceph chart (phase 3, the real chart through the real Flux) serves the CRDs. Modelled
on github.com/rook/rook v1.17.9, pkg/operator/ceph:

- cluster/cluster.go, controller/conditions.go: CephCluster phase Progressing (state Creating)
  "Detecting Ceph version" -> "Configuring the Ceph cluster" -> "Configuring Ceph Mons" ->
  "Configuring Ceph OSDs" -> phase Ready (state Created) "Cluster created successfully", reason
  ClusterCreated. The transient Progressing condition is dropped when Ready is written; Ready
  (ClusterCreated) is kept on later reconciles. status.observedGeneration is written only with
  Ready. A failed orchestration writes Progressing with status False, state Error and the error
  as message (Rook wraps it: "failed to perform validation before cluster creation: ...",
  "failed to create cluster: ...") and a Warning event ReconcileFailed; Rook retries.
  preClusterStartValidation: mon.count > Nodes without mon.allowMultiplePerNode is refused.
- cluster/osd/create.go, k8sutil/node.go: after the bootstrap, a valid Node (not cordoned) without OSDs gets its
  devices' OSDs; a Node that is gone takes its OSD daemons with it (what Ceph records of them stays, down).
- cluster/cephstatus.go: status.ceph {health, fsid, lastChecked, details, previousHealth,
  lastChanged}; an unreachable cluster gives HEALTH_ERR with details.error (severity Urgent).
- cluster/mon/mon.go, controller/cluster_info.go: Secret rook-ceph-mon (type kubernetes.io/rook,
  finalizer ceph.rook.io/disaster-protection, keys fsid, mon-secret, ceph-username
  (client.admin), ceph-secret), ConfigMap rook-ceph-mon-endpoints (data "a=<ip>:6789,...",
  mapping {"node": {"a": {"Name", "Hostname", "Address"}}}, maxMonId, outOfQuorum,
  externalMons, csi-cluster-config-json). Mon endpoints are the mon Services' ClusterIPs upstream (the
  lab derives stable addresses in 10.96.0.0/12 from the cluster and mon name), or with spec.network.provider
  host the Nodes' addresses (mon/node.go: annotation network.rook.io/mon-ip, InternalIP, ExternalIP); port
  6789, 3300 with network.connections.requireMsgr2. The fsid and keys
  are generated once and kept (read back from the Secret); they are never logged.
- controller/controller_utils.go IsReadyToReconcile: the children reconcile only once the
  namespace's CephCluster reports ceph.health HEALTH_OK or HEALTH_WARN.
- pool/: CephBlockPool Progressing on creation, Ready with observedGeneration, info {type,
  failureDomain}, poolID; Failure (no observedGeneration) and a ReconcileFailed event
  'failed to reconcile CephBlockPool "<ns>/<name>". failed to create pool "<name>".: <error>'.
- client/: CephClient Progressing, Ready with info.secretName and observedGeneration; Secret
  rook-ceph-client-<name> (or spec.secretName; type kubernetes.io/rook) with keys <name> (the
  key), userID, userKey, adminID, adminKey. The key is made once per CephClient (uid): a CephClient
  deleted and created again gets a new one.
- file/: CephFilesystem Progressing, Ready with observedGeneration (info only with mirroring: none), once
  createFilesystem ran against Ceph: MDS daemons <fs>-a, <fs>-b, ... (activeCount, doubled with activeStandby; extra
  ones scaled down), the pools <fs>-metadata and <fs>-<data pool name or data<i>> (application cephfs), `fs new`, the
  further data pools, allow_standby_replay and standby_count_wanted, max_mds above one, the subvolume group csi.
- object/: CephObjectStore Progressing, Ready with observedGeneration once its pools (<store>.rgw.*, .rgw.root; the
  rgw application), its realm, zone group and zone (named as the store, the advertised endpoint) and its gateways
  (one radosgw per instance) are made; info (buildStatusInfo: with port and securePort, secureEndpoint is the advertised
  endpoint - https only with a certificate - and endpoint http at port), endpoints {insecure, secure}. Refused as
  Rook refuses it: by validateStore (ValidateObjectSpec: a name longer than 38 characters, no port) before anything
  is made - it stays Progressing, the error in a ReconcileFailed event; by createDeployment when a securePort has no
  certificate (sslCertificateRef, whose Secret must exist, or the service serving-cert annotation) - after the pools
  and realm, phase Failure, "... failed to create rgw deployment: no TLS certificates found".
  object/user/: CephObjectStoreUser "ReconcileFailed" while its store is not Ready or no gateway answers (with Rook's
  event when the store or its gateways are missing), then "Ready" with info.secretName and the Secret
  rook-ceph-object-user-<store>-<name> (the RGW user's AccessKey and SecretKey, the advertised Endpoint).

Ceph is real (lab/regionlab/ceph.py): the CephCluster's daemons, its status from `ceph status`, a CephBlockPool's pool,
a CephClient's user, a CephFilesystem's filesystem and MDS daemons, a CephObjectStore's realm and gateways, a
CephObjectStoreUser's RGW user. Deletion: every child kind carries Rook's finalizer.
- A pool that holds RBD images is deleted only with the rook.io/force-deletion annotation, and not while
  CephBlockPoolRadosNamespaces name it, force or not (pool/controller.go handleDeletionBlocked, dependents.go).
- A filesystem whose subvolume groups hold subvolumes, or that a CephFilesystemSubVolumeGroup names, stays, with
  DeletionIsBlocked ObjectHasDependents (file/dependent.go); otherwise it loses its MDS daemons and keys, is failed,
  and - unless preserveFilesystemOnDelete - removed with its pools (unless preservePoolsOnDelete).
- An object store with buckets or CephObjectStoreUsers stays (DeletionIsBlocked); otherwise it loses its gateways,
  realm, zone group and zone and - unless preservePoolsOnDelete - its pools. A user's RGW user is removed without its
  data (RGW refuses while it owns buckets, and the deletion is retried).
- The Secrets carry owner references for the garbage collector.
Not played: CephFilesystemSubVolumeGroup's and CephBlockPoolRadosNamespace's own reconcilers (so no RADOS namespace
exists in the lab's Ceph, and none holds images), external and multisite object stores, the RGW bucket health check,
mirroring, upgrades, a CephCluster's deletion blocked by dependents.

Each step waits the `rook` delay. Failures from standins.yaml `failures`, keyed `<Kind>`,
`<Kind>/<namespace>` or `<Kind>/<namespace>/<name>`: {message} (the error Rook reports); for a
CephCluster also {health: HEALTH_WARN|HEALTH_ERR, checks: {<CHECK>: <message>}}, a Ready cluster
whose Ceph reports that health. Objects whose status another field manager writes are left alone.
"""

import base64
import copy
import errno
import hashlib
import ipaddress
import json
import os
import struct
import threading
import time
import uuid

from .. import ceph, processes
from . import loop
from .client import ApiError, path

GV = "ceph.rook.io/v1"
MANAGER = "lab-rook-ceph-operator"
OPERATOR = "rook-ceph-operator"   # its Deployment (deployments.py)
CEPH_VERSION = "19.2.3-0 squid"
CEPH_IMAGE = "quay.io/ceph/ceph:v19.2.3"
ROOK_TYPE = "kubernetes.io/rook"
DISASTER_FINALIZER = "ceph.rook.io/disaster-protection"
MON_SECRET = "rook-ceph-mon"
MON_ENDPOINTS = "rook-ceph-mon-endpoints"
MON_PORT = 6789
MSGR2_PORT = 3300
MON_IP_ANNOTATION = "network.rook.io/mon-ip"
HEALTHY = ("HEALTH_OK", "HEALTH_WARN")
SERVICE_NET = ipaddress.ip_network("10.96.0.0/12")

# kind -> (plural, controller name of its events)
KINDS = {
    "CephCluster": ("cephclusters", "rook-ceph-cluster-controller"),
    "CephBlockPool": ("cephblockpools", "ceph-block-pool-controller"),
    "CephClient": ("cephclients", "ceph-client-controller"),
    "CephFilesystem": ("cephfilesystems", "ceph-file-controller"),
    "CephObjectStore": ("cephobjectstores", "rook-ceph-object-controller"),
    "CephObjectStoreUser": ("cephobjectstoreusers", "ceph-object-store-user-controller"),
}
CHILDREN = ["CephBlockPool", "CephClient", "CephFilesystem", "CephObjectStore", "CephObjectStoreUser"]
CLUSTER_STEPS = ["Detecting Ceph version", "Configuring the Ceph cluster", "Configuring Ceph Mons",
                 "Configuring Ceph OSDs"]
MONS_STEP = 2
# The error a failure without a message reports, per kind (Rook's wrapping).
DEFAULT_ERRORS = {
    "CephCluster": "failed to create cluster: failed to start ceph monitors: failed to assign pods to mons: "
                   "failed to schedule mons",
    "CephBlockPool": "failed to create pool \"%(name)s\".: failed to configure pool \"%(name)s\".: "
                     "failed to initialize pool \"%(name)s\" for RBD use.: exit status 1",
    "CephClient": "failed to create or update client \"%(name)s\": failed to create client \"%(name)s\": exit status 1",
    "CephFilesystem": "failed to create filesystem \"%(name)s\": failed to create pools for filesystem: exit status 1",
    "CephObjectStore": "failed to create object store deployments: failed to create object pools: exit status 1",
    "CephObjectStoreUser": "failed to create or update object store user \"%(name)s\": exit status 1",
}
FAILED_PHASE = {"CephObjectStoreUser": "ReconcileFailed"}
# How Rook wraps the error of a Ceph command it ran for the kind.
CEPH_ERROR_PREFIX = {"CephBlockPool": "failed to create pool \"%(name)s\".: ",
                     "CephClient": "failed to create or update client \"%(name)s\": ",
                     "CephFilesystem": "failed to create filesystem \"%(name)s\": ",
                     "CephObjectStore": "failed to create object store deployments: ",
                     "CephObjectStoreUser": "failed to create or update object store user \"%(name)s\": "}
MONS = "abcdefghijklmnopqrstuvwxyz"
# The disks of a lab storage machine: Rook's useAllDevices makes an OSD (times osdsPerDevice) on each.
LAB_DEVICES_PER_NODE = 3
# Rook's health checker period (spec.healthCheck.daemonHealth.status.interval, 60 s).
STATUS_REFRESH = 60
# controller/finalizer.go buildFinalizerName: "<kind lowercased>.ceph.rook.io"; the kinds whose deletion the lab
# plays against Ceph (pool/controller.go, client/controller.go).
FINALIZED = {"CephBlockPool": "cephblockpool.ceph.rook.io", "CephClient": "cephclient.ceph.rook.io",
             "CephFilesystem": "cephfilesystem.ceph.rook.io", "CephObjectStore": "cephobjectstore.ceph.rook.io",
             "CephObjectStoreUser": "cephobjectstoreuser.ceph.rook.io"}
# controller/cleanup.go RESOURCE_CLEANUP_ANNOTATION: a pool that holds images is deleted with them only with it
# (ForceDeleteRequested: the value "true" in any case).
FORCE_DELETION = "rook.io/force-deletion"
# pool/dependents.go: the CephBlockPoolRadosNamespaces that name a pool hold its deletion, force or not.
RADOS_NAMESPACES = "cephblockpoolradosnamespaces"
RADOS_NAMESPACE_DEPENDENTS = "CephBlockPoolRadosNamespaces"
# apis/ceph.rook.io/v1/object.go objectStoreNameMaxLen: the ConfigMap rook-ceph-rgw-<store>-mime-types must stay a
# 63-character name; ServiceServingCertKey, the annotation that stands for a certificate.
OBJECT_STORE_NAME_MAX = 38
SERVING_CERT_ANNOTATION = "service.beta.openshift.io/serving-cert-secret-name"


class ReconcileError(Exception):
    """An error of Rook's own (not a Ceph command's) that fails a reconcile, worded as Rook wraps it."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


def url(kind, namespace=None, name=None, subresource=None):
    return path(GV, KINDS[kind][0], namespace, name, subresource)


SECRETS = path("v1", "secrets")
CONFIG_MAPS = path("v1", "configmaps")
NODES = path("v1", "nodes")
PODS = path("v1", "pods", "rook-ceph")


def cephx_key():
    """A new cephx key as `ceph auth get-or-create` prints it (base64 of type, created, length, secret)."""
    now = time.time()
    header = struct.pack("<hIIh", 1, int(now), int((now % 1) * 1e9), 16)
    return base64.b64encode(header + os.urandom(16)).decode()


def mon_address(cluster, namespace, mon):
    """A stable ClusterIP-like address for a mon Service (upstream: the Service's ClusterIP)."""
    digest = int(hashlib.sha256(("%s/%s/%s" % (cluster, namespace, mon)).encode()).hexdigest(), 16)
    return str(SERVICE_NET[1 + digest % (SERVICE_NET.num_addresses - 2)])


def node_address(node):
    """The address a mon on this Node binds with host networking (Rook mon/node.go: the network.rook.io/mon-ip
    annotation, else the Node's InternalIP, else its ExternalIP)."""
    annotated = ((node.get("metadata") or {}).get("annotations") or {}).get(MON_IP_ANNOTATION)
    if annotated:
        return annotated
    addresses = (node.get("status") or {}).get("addresses") or []
    for kind in ("InternalIP", "ExternalIP"):
        found = next((a.get("address") for a in addresses if a.get("type") == kind and a.get("address")), None)
        if found:
            return found
    return ""


def mon_placement(cluster, nodes):
    """[(mon, Node)]: the mons spread over the Nodes in name order (Node None without any)."""
    ordered = sorted(nodes, key=lambda n: n["metadata"]["name"])
    return [(m, ordered[i % len(ordered)] if ordered else None) for i, m in enumerate(mon_names(mon_count(cluster)))]


def mon_endpoints(cluster_name, cluster, nodes):
    """[(mon, "ip:port")]: with network.provider host each mon's Node's address (mon_placement), else a Service's
    ClusterIP-like address; port 3300 when msgr2 is required, else 6789."""
    network = (cluster.get("spec") or {}).get("network") or {}
    port = MSGR2_PORT if (network.get("connections") or {}).get("requireMsgr2") else MON_PORT
    if network.get("provider") == "host" and nodes:
        return [(m, "%s:%d" % (node_address(node), port)) for m, node in mon_placement(cluster, nodes)]
    namespace = cluster["metadata"]["namespace"]
    return [(m, "%s:%d" % (mon_address(cluster_name, namespace, m), port)) for m in mon_names(mon_count(cluster))]


def flatten_endpoints(mons):
    """The `data` key of rook-ceph-mon-endpoints: "a=10.0.0.1:6789,b=..."."""
    return ",".join("%s=%s" % (name, endpoint) for name, endpoint in mons)


def mon_names(count):
    return [MONS[i] for i in range(count)]


def mon_count(cluster):
    count = ((cluster.get("spec") or {}).get("mon") or {}).get("count") or 0
    return count if count > 0 else 3  # Rook's DefaultMonCount for 0


def validation_error(cluster, node_count):
    """preClusterStartValidation's refusal, or None."""
    mon = (cluster.get("spec") or {}).get("mon") or {}
    count = mon_count(cluster)
    if not mon.get("allowMultiplePerNode") and node_count < count:
        return ("failed to perform validation before cluster creation: cannot start %d mons on %d node(s) when "
                "allowMultiplePerNode is false" % (count, node_count))
    return None


def endpoints_config_map(namespace, owner, mons, nodes):
    """rook-ceph-mon-endpoints for mons [(name, "ip:port")], spread over nodes [(name, address)]."""
    mapping = {"node": {}}
    for index, name in enumerate(name for name, dummy in mons):
        if nodes:
            node_name, address = nodes[index % len(nodes)]
            mapping["node"][name] = {"Name": node_name, "Hostname": node_name, "Address": address}
    csi = [{"clusterID": namespace, "monitors": [endpoint for dummy, endpoint in mons], "namespace": namespace}]
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": MON_ENDPOINTS, "namespace": namespace, "finalizers": [DISASTER_FINALIZER],
                         "ownerReferences": [owner]},
            "data": {"data": flatten_endpoints(mons), "externalMons": "", "maxMonId": str(len(mons) - 1),
                     "mapping": json.dumps(mapping, separators=(",", ":"), sort_keys=True), "outOfQuorum": "",
                     "csi-cluster-config-json": json.dumps(csi, separators=(",", ":"))}}


def mon_secret(namespace, owner, fsid):
    data = {"fsid": fsid, "mon-secret": cephx_key(), "ceph-username": "client.admin", "ceph-secret": cephx_key()}
    return {"apiVersion": "v1", "kind": "Secret", "type": ROOK_TYPE,
            "metadata": {"name": MON_SECRET, "namespace": namespace, "finalizers": [DISASTER_FINALIZER],
                         "ownerReferences": [owner]},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def client_secret_name(client):
    return (client.get("spec") or {}).get("secretName") or "rook-ceph-client-%s" % client["metadata"]["name"]


def client_secret(client, key):
    name = client["metadata"]["name"]
    data = {name: key, "userID": name, "userKey": key, "adminID": name, "adminKey": key}
    return {"apiVersion": "v1", "kind": "Secret", "type": ROOK_TYPE,
            "metadata": {"name": client_secret_name(client), "namespace": client["metadata"]["namespace"],
                         "ownerReferences": [loop.owner_reference(client)]},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def object_store_domain(store):
    return "rook-ceph-rgw-%s.%s.svc" % (store["metadata"]["name"], store["metadata"]["namespace"])


def serving_cert(store):
    """GetServiceServingCert: the Secret the service serving-cert annotation names (OpenShift makes it), or None."""
    service = ((store.get("spec") or {}).get("gateway") or {}).get("service") or {}
    return (service.get("annotations") or {}).get(SERVING_CERT_ANNOTATION)


def object_store_tls(store):
    """IsTLSEnabled: a securePort with a certificate (sslCertificateRef, or a service serving cert annotation)."""
    gateway = (store.get("spec") or {}).get("gateway") or {}
    return bool(gateway.get("securePort") and (gateway.get("sslCertificateRef") or serving_cert(store)))


def object_store_spec_error(store):
    """ValidateObjectSpec's refusals (apis/ceph.rook.io/v1/object.go, run by validateStore before anything is made),
    or None."""
    gateway = (store.get("spec") or {}).get("gateway") or {}
    secure = gateway.get("securePort") or 0
    if not gateway.get("externalRgwEndpoints") and len(store["metadata"]["name"]) > OBJECT_STORE_NAME_MAX:
        return "object store name cannot be longer than %d characters" % OBJECT_STORE_NAME_MAX
    if secure < 0 or secure > 65535:
        return "securePort value of %d must be between 0 and 65535" % secure
    if (gateway.get("port") or 0) <= 0 and secure <= 0:
        return "invalid create: either of port or securePort fields should be not be zero"
    return None


def gateway_deployment_error(store, cause):
    """How Rook wraps an error of the gateways' Deployment (createOrUpdateStore, startRGWPods, createDeployment)."""
    return "failed to create object store \"%s\": failed to start rgw pods: failed to create rgw deployment: %s" % (
        store["metadata"]["name"], cause)


def advertise_endpoint(store):
    """GetAdvertiseEndpointUrl: https at securePort with TLS, else http at port - a securePort without a certificate
    is advertised as http."""
    gateway = (store.get("spec") or {}).get("gateway") or {}
    if object_store_tls(store):
        return "https://%s:%d" % (object_store_domain(store), gateway["securePort"])
    return "http://%s:%d" % (object_store_domain(store), gateway.get("port") or 0)


def object_store_info(store):
    """buildStatusInfo: with port and securePort, secureEndpoint the advertised endpoint and endpoint http at port;
    else endpoint the advertised one."""
    gateway = (store.get("spec") or {}).get("gateway") or {}
    if gateway.get("port") and gateway.get("securePort"):
        return {"secureEndpoint": advertise_endpoint(store),
                "endpoint": "http://%s:%d" % (object_store_domain(store), gateway["port"])}
    return {"endpoint": advertise_endpoint(store)}


def object_store_endpoints(store):
    gateway = (store.get("spec") or {}).get("gateway") or {}
    domain = object_store_domain(store)
    return {"insecure": ["http://%s:%d" % (domain, gateway["port"])] if gateway.get("port") else [],
            "secure": ["https://%s:%d" % (domain, gateway["securePort"])] if gateway.get("securePort") else []}


# object/objectstore.go: a store's pools (<store>.<name>, .rgw.root shared by the stores), its application.
RGW_METADATA_POOLS = ("rgw.control", "rgw.meta", "rgw.log", "rgw.buckets.index", "rgw.buckets.non-ec", "rgw.otp")
RGW_DATA_POOL = "rgw.buckets.data"
RGW_ROOT_POOL = ".rgw.root"
RGW_APPLICATION = "rgw"
BUCKET_DEPENDENTS = "buckets in the object store (could be from ObjectBucketClaims or COSI Buckets)"
# object/user: the CR's capabilities as RGW names them; every user may own this many buckets.
USER_CAPS = {"user": "users", "users": "users", "bucket": "buckets", "buckets": "buckets", "metadata": "metadata",
             "usage": "usage", "zone": "zone", "roles": "roles", "info": "info", "amz-cache": "amz-cache",
             "bilog": "bilog", "mdlog": "mdlog", "datalog": "datalog", "user-policy": "user-policy",
             "oidc-provider": "oidc-provider", "ratelimit": "ratelimit"}
USER_MAX_BUCKETS = 1000


def object_store_pools(store, last=False):
    """[(pool name, pool spec)]: the metadata pools (and .rgw.root) with metadataPool, the data pool with dataPool;
    .rgw.root only for the last store when deleting."""
    spec, name = store.get("spec") or {}, store["metadata"]["name"]
    metadata = spec.get("metadataPool") or {}
    pools = [("%s.%s" % (name, pool), metadata) for pool in RGW_METADATA_POOLS]
    pools.append(("%s.%s" % (name, RGW_DATA_POOL), spec.get("dataPool") or {}))
    return pools + ([(RGW_ROOT_POOL, metadata)] if last else [])


def rgw_daemons(store):
    """The gateways of a store: rgw.<store with dots>.<a, b, ...> (generateCephXUser), one per instance (Rook runs the
    instances as replicas sharing the first; each lab gateway has its own)."""
    instances = ((store.get("spec") or {}).get("gateway") or {}).get("instances") or 1
    return ["%s.%s" % (store["metadata"]["name"].replace("-", "."), MONS[i]) for i in range(instances)]


def realm_args(name):
    """A single-site store's realm, zone group and zone: all named as the store."""
    return ["--rgw-realm=%s" % name, "--rgw-zonegroup=%s" % name, "--rgw-zone=%s" % name]


def user_caps(user):
    """The RGW caps string of a CephObjectStoreUser (generateUserConfig): "buckets=*;users=*"."""
    capabilities = (user.get("spec") or {}).get("capabilities") or {}
    return ";".join(sorted("%s=%s" % (USER_CAPS[k], v) for k, v in capabilities.items() if k in USER_CAPS and v))


def user_store_error(user, store, gateways):
    """Why Rook's user controller cannot reach the user's store yet (initializeObjectStoreContext): the store missing,
    or none of its gateways running; None otherwise."""
    name, meta = (user.get("spec") or {}).get("store") or "", user["metadata"]
    if store is None:
        cause = 'could not find CephObjectStore "%s" referenced by CephObjectStoreUser "%s/%s"' % (
            name, meta["namespace"], meta["name"])
    elif not gateways:
        cause = "no rgw pod found"
    else:
        return None
    return 'failed to detect if object store "%s" is initialized: %s' % (name, cause)


def user_secret_name(user):
    return "rook-ceph-object-user-%s-%s" % ((user.get("spec") or {}).get("store") or "", user["metadata"]["name"])


def user_secret(user, store, keys):
    """Rook's Secret of an object store user: its S3 keys (the RGW user's) and the store's advertised endpoint."""
    data = {"AccessKey": keys["access_key"], "SecretKey": keys["secret_key"], "Endpoint": advertise_endpoint(store)}
    return {"apiVersion": "v1", "kind": "Secret", "type": ROOK_TYPE,
            "metadata": {"name": user_secret_name(user), "namespace": user["metadata"]["namespace"],
                         "labels": {"app": "rook-ceph-rgw", "rook_cluster": user["metadata"]["namespace"],
                                    "rook_object_store": store["metadata"]["name"], "user": user["metadata"]["name"]},
                         "ownerReferences": [loop.owner_reference(user)]},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def pool_info(pool):
    spec = pool.get("spec") or {}
    return {"type": "Erasure Coded" if spec.get("erasureCoded") and not spec.get("replicated") else "Replicated",
            "failureDomain": spec.get("failureDomain") or "host"}


def pool_error(pool):
    """validatePool's refusals the lab plays (replica size, compression mode), or None."""
    spec = pool.get("spec") or {}
    replicated = spec.get("replicated") or {}
    if replicated and spec.get("erasureCoded") and replicated.get("size") and \
            (spec["erasureCoded"].get("codingChunks") or spec["erasureCoded"].get("dataChunks")):
        return "both replication and erasure code settings cannot be specified"
    if replicated.get("size") == 1 and replicated.get("requireSafeReplicaSize"):
        return "error pool size is 1 and requireSafeReplicaSize is true, must be false"
    compression = (spec.get("parameters") or {}).get("compression_mode")
    if compression is not None and compression not in ("none", "passive", "aggressive", "force"):
        return "failed to validate pool spec unknown compression mode \"%s\"" % compression
    return None


def pool_crush_rule(name, spec):
    """The CRUSH rule Rook makes for a replicated pool: over its failure domain."""
    return "%s_%s" % (name, (spec or {}).get("failureDomain") or "host")


def crush_rule(pool):
    return pool_crush_rule(pool["metadata"]["name"], pool.get("spec"))


# file/filesystem.go: a filesystem's pools' names; cephclient's default subvolume group for CSI.
CEPHFS_APPLICATION = "cephfs"
CSI_SUBVOLUME_GROUP = "csi"
# file/dependent.go ignoredDependentSubvolumeGroups, and its name for subvolumes outside a group.
IGNORED_SUBVOLUME_GROUPS = ("_nogroup", "_index", "_legacy", "_deleting")
NO_GROUP = "<no group>"
SUBVOLUME_GROUPS = "cephfilesystemsubvolumegroups"
SUBVOLUME_DEPENDENTS = "filesystem subvolume groups that contain subvolumes (could be from CephFilesystem PVCs or " \
                       "CephNFS exports)"


def filesystem_pools(fs):
    """[(pool name, pool spec)]: the metadata pool, then the data pools (generateMetaDataPoolName,
    generateDataPoolNames)."""
    spec, name = fs.get("spec") or {}, fs["metadata"]["name"]
    metadata = spec.get("metadataPool") or {}
    preserve = spec.get("preservePoolNames")
    pools = [(metadata["name"] if preserve and metadata.get("name") else "%s-metadata" % name, metadata)]
    for index, pool in enumerate(spec.get("dataPools") or []):
        if not pool.get("name"):
            pools.append(("%s-data%d" % (name, index), pool))
        else:
            pools.append((pool["name"] if preserve else "%s-%s" % (name, pool["name"]), pool))
    return pools


def mds_daemons(fs, every=False):
    """The MDS daemon names <fs>-a, <fs>-b, ...: activeCount, doubled with activeStandby (mds.go); every=True gives
    the activeCount * 2 whose keys a deletion removes (deleteFilesystem)."""
    server = (fs.get("spec") or {}).get("metadataServer") or {}
    active = server.get("activeCount") or 1
    count = active * 2 if every or server.get("activeStandby") else active
    return ["%s-%s" % (fs["metadata"]["name"], MONS[i]) for i in range(count)]


def filesystems(pool_ceph):
    """The names of the filesystems in a pool's Ceph."""
    return [f["name"] for f in pool_ceph.command("fs ls")]


def place_daemons(pool_ceph, wanted, prefix, running, add, remove):
    """The Deployments of a filesystem's MDS daemons or a store's gateways: each wanted daemon added on the pool's
    Nodes in turn (add(daemon, address)), then the running() ones of that prefix and a letter that are not wanted any
    more removed (scaleDownDeployments)."""
    addresses = pool_ceph.node_addresses()
    for index, daemon in enumerate(wanted):
        add(daemon, addresses[index % len(addresses)])
    for daemon in running():
        if daemon.startswith(prefix) and len(daemon) == len(prefix) + 1 and daemon not in wanted:
            remove(daemon)


def blocked_by_dependents(kind, obj, dependents):
    """GenerateConditionBlockedDueToDependents's message: dependents {plural kind: [names]}."""
    listed = ", ".join("%s: [%s]" % (k, " ".join(v)) for k, v in sorted(dependents.items()))
    return '%s "%s/%s" will not be deleted until all dependents are removed: %s' % (
        kind, obj["metadata"]["namespace"], obj["metadata"]["name"], listed)


def dependents_condition(kind, obj, dependents):
    """(status, reason, message) of DeletionIsBlocked (util/dependents DeletionBlockedDueToDependentsCondition)."""
    if dependents:
        return "True", "ObjectHasDependents", blocked_by_dependents(kind, obj, dependents)
    return "False", "ObjectHasNoDependents", '%s "%s/%s" has no dependent custom resources blocking deletion' % (
        kind, obj["metadata"]["namespace"], obj["metadata"]["name"])


def block_pool_dependents(pool, rados_namespaces):
    """cephBlockPoolDependents: {CephBlockPoolRadosNamespaces: [names in Ceph]} of the CRs naming the pool (the
    Ceph name is spec.name, else the CR's; <implicit> is the pool's default namespace, "")."""
    names = []
    for namespace in rados_namespaces:
        spec = namespace.get("spec") or {}
        if spec.get("blockPoolName") == pool["metadata"]["name"]:
            named = spec.get("name") or namespace["metadata"]["name"]
            names.append("" if named == "<implicit>" else named)
    return {RADOS_NAMESPACE_DEPENDENTS: names} if names else {}


def force_deletion_requested(obj):
    """ForceDeleteRequested: rook.io/force-deletion is "true", in any case."""
    return str(((obj["metadata"].get("annotations") or {}).get(FORCE_DELETION)) or "").lower() == "true"


def pool_detail(pool_ceph, name):
    """`osd pool ls detail` of one pool, or None."""
    return next((p for p in pool_ceph.command("osd pool ls", detail="detail") if p["pool_name"] == name), None)


QUANTITY = {"": 1, "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18,
            "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}


def quantity_bytes(quantity):
    """Bytes of a Kubernetes quantity such as 10Gi (Rook's QuotaSpec.MaxSize through resource.ParseQuantity)."""
    text = str(quantity).strip()
    digits = text.rstrip("kMGTPEi")
    return int(float(digits) * QUANTITY[text[len(digits):]])


def ensure_ceph_pool(pool_ceph, name, spec, application):
    """A replicated pool as Rook's CreatePool makes it (pool/pool.go createReplicatedPoolForApp): a CRUSH rule over its
    failure domain (and device class), the pool, its size, compression, quota and application; returns its id."""
    size = int((spec.get("replicated") or {}).get("size") or 3)
    rule = pool_crush_rule(name, spec)
    if rule not in pool_ceph.command("osd crush rule ls"):
        args = {"name": rule, "root": "default", "type": spec.get("failureDomain") or "host"}
        if spec.get("deviceClass"):
            args["class"] = spec["deviceClass"]
        pool_ceph.command("osd crush rule create-replicated", **args)
    live = pool_detail(pool_ceph, name)
    if live is None:
        pool_ceph.command("osd pool create", pool=name, pool_type="replicated", rule=rule)
        live = pool_detail(pool_ceph, name)
    rules = {r["rule_id"]: r["rule_name"] for r in pool_ceph.command("osd crush rule dump")}
    settings = [("crush_rule", rule, rules.get(live.get("crush_rule"))), ("size", str(size), str(live.get("size")))]
    compression = (spec.get("parameters") or {}).get("compression_mode")
    if compression:
        have = ((live.get("options") or {}).get("compression_mode"))
        settings.append(("compression_mode", compression, have))
    for var, value, have in settings:
        if value != have:
            pool_ceph.command("osd pool set", pool=name, var=var, val=value, yes_i_really_mean_it=True)
    if application not in (live.get("application_metadata") or {}):
        pool_ceph.command("osd pool application enable", pool=name, app=application)
    quota = quantity_bytes(((spec.get("quotas") or {}).get("maxSize")) or "0")
    if quota != live.get("quota_max_bytes", 0):
        pool_ceph.command("osd pool set-quota", pool=name, field="max_bytes", val=str(quota))
    return live["pool_id"]


def remove_ceph_pool(pool_ceph, name, spec):
    """DeletePool: the pool and its CRUSH rule, if present."""
    if pool_detail(pool_ceph, name) is None:
        return False
    pool_ceph.command("osd pool rm", pool=name, pool2=name, yes_i_really_really_mean_it=True)
    rule = pool_crush_rule(name, spec)
    if rule in pool_ceph.command("osd crush rule ls"):
        pool_ceph.command("osd crush rule rm", name=rule)
    return True


def failure_message(kind, obj, failure):
    return failure.get("message") or DEFAULT_ERRORS[kind] % {"name": obj["metadata"]["name"]}


def cluster_conditions(status, ctype, cstatus, reason, message, now):
    """UpdateClusterCondition: keep only the persisted conditions (reason ClusterCreated), upsert ctype."""
    kept = [c for c in copy.deepcopy(status.get("conditions") or [])
            if c.get("reason") == "ClusterCreated" or c.get("type") in ("Deleting", "DeletionIsBlocked")]
    current = next((c for c in kept if c.get("type") == ctype), None)
    if current is None:
        kept.append({"type": ctype, "status": cstatus, "reason": reason, "message": message,
                     "lastTransitionTime": now, "lastHeartbeatTime": now})
    else:
        if (current.get("status"), current.get("message")) != (cstatus, message):
            current["lastTransitionTime"] = now
            current["lastHeartbeatTime"] = now
        current.update(status=cstatus, reason=reason, message=message)
    return kept


def cluster_status(status, ctype, cstatus, reason, message, now, observed_generation=None):
    """The status fields UpdateClusterCondition writes (phase, state, message, conditions)."""
    state = "Error" if cstatus == "False" else {"Progressing": "Creating", "Ready": "Created"}.get(ctype)
    wanted = {"conditions": cluster_conditions(status, ctype, cstatus, reason, message, now), "phase": ctype,
              "message": message}
    if state:
        wanted["state"] = state
    if observed_generation is not None and ctype == "Ready":
        wanted["observedGeneration"] = observed_generation
    return wanted


def ceph_status(previous, report, now):
    """toCustomResourceStatus for Ceph's `status` report: health, its checks (details, each with Ceph's severity and
    summary), fsid and capacity; previousHealth and lastChanged when the health changed."""
    health = report["health"]
    pgmap = report.get("pgmap") or {}
    ceph_report = {"health": health["status"], "fsid": report["fsid"], "lastChecked": now,
                   "versions": {"mon": {"ceph version %s (stable)" % CEPH_VERSION: 1},
                                "overall": {"ceph version %s (stable)" % CEPH_VERSION: 1}}}
    checks = health.get("checks") or {}
    if checks:
        ceph_report["details"] = {name: {"severity": check.get("severity"),
                                         "message": (check.get("summary") or {}).get("message")}
                                  for name, check in sorted(checks.items())}
    if pgmap.get("bytes_total"):
        ceph_report["capacity"] = {"bytesTotal": pgmap["bytes_total"], "bytesUsed": pgmap.get("bytes_used", 0),
                                   "bytesAvailable": pgmap.get("bytes_avail", 0), "lastUpdated": now}
    previous = previous or {}
    ceph_report["previousHealth"] = previous.get("previousHealth")
    ceph_report["lastChanged"] = previous.get("lastChanged")
    if previous.get("health") and previous.get("health") != ceph_report["health"]:
        ceph_report["previousHealth"] = previous["health"]
        ceph_report["lastChanged"] = now
    return {k: v for k, v in ceph_report.items() if v is not None}


def health_changed(previous, current):
    """Whether a new report says something the CR's status does not: health, checks or fsid."""
    previous = previous or {}
    return any(previous.get(k) != current.get(k) for k in ("health", "fsid", "details"))


def osd_count(cluster):
    config = ((cluster.get("spec") or {}).get("storage") or {}).get("config") or {}
    try:
        per_device = max(1, int(config.get("osdsPerDevice") or 1))
    except ValueError:
        per_device = 1
    return LAB_DEVICES_PER_NODE * per_device, config.get("deviceClass")


def _decode(secret, key):
    value = (secret.get("data") or {}).get(key)
    return base64.b64decode(value).decode() if value else None


class RookOperator:
    """One pass over the storage-pool clusters, driven by the gardenlet stand-in's loop."""

    def __init__(self, ctl, kubes):
        """kubes: {cluster name: Kube writing as MANAGER}."""
        self.ctl = ctl
        self.kubes = kubes
        self.events = set()
        # The storage pools' Ceph (lab/regionlab/ceph.py), its bootstraps running beside the passes.
        self.cephs = {name: ceph.Cluster(name) for name in kubes}
        self.bootstraps = {}
        self.preparing = {}
        self.brought_back = set()
        self.checked = {}
        self.refreshed = {}

    def reconcile(self):
        live = set()
        for name, kube in self.kubes.items():
            try:
                if not self.ctl.operators[name].runs(OPERATOR):
                    continue  # before phase 3 installed the rook-ceph chart, or scaled to zero
                live |= self.reconcile_cluster(name, kube)
            except ApiError as exc:
                if exc.code not in (429, 503):
                    raise
                # A CRD just installed: "storage is (re)initializing"; the other clusters go on.
                self.ctl.log("Rook %s: %s; again on the next pass" % (name, exc))
                self.ctl.next_due = min(self.ctl.next_due, 1.0)
        self.events = {e for e in self.events if e[0] in live}
        return live

    def failure(self, kind, obj):
        meta = obj["metadata"]
        return self.ctl.settings.get().failure(kind, meta["namespace"], meta["name"])

    def reconcile_cluster(self, cluster_name, kube):
        live = set()
        clusters = kube.list(url("CephCluster"))
        self.bring_back(cluster_name, clusters)
        healthy = {}
        for cluster in clusters:
            meta = cluster["metadata"]
            live.add(meta["uid"])
            if meta.get("deletionTimestamp") or loop.foreign(cluster, MANAGER):
                continue
            self.reconcile_ceph_cluster(cluster_name, kube, cluster)
        # IsReadyToReconcile: the first CephCluster of the namespace, with a usable health.
        for cluster in kube.list(url("CephCluster")):
            ns = cluster["metadata"]["namespace"]
            health = ((cluster.get("status") or {}).get("ceph") or {}).get("health")
            healthy.setdefault(ns, health in HEALTHY)
        self.release_mon_outputs(kube, clusters)
        stores = {}
        for kind in CHILDREN:
            for obj in kube.list(url(kind)):
                live.add(obj["metadata"]["uid"])
                if kind == "CephObjectStore":
                    stores[(obj["metadata"]["namespace"], obj["metadata"]["name"])] = obj
                if loop.foreign(obj, MANAGER):
                    continue
                if obj["metadata"].get("deletionTimestamp"):
                    if kind in FINALIZED:
                        self.finalize(cluster_name, kube, kind, obj, clusters)
                    continue
                self.reconcile_child(cluster_name, kube, kind, obj, healthy.get(obj["metadata"]["namespace"], False),
                                     stores)
        return live

    # CephCluster ---------------------------------------------------------------

    def reconcile_ceph_cluster(self, cluster_name, kube, cluster):
        meta, status = cluster["metadata"], cluster.get("status") or {}
        uid, gen, now = meta["uid"], meta.get("generation"), loop.now_rfc3339()
        target = url("CephCluster", meta["namespace"], meta["name"])
        delay = self.ctl.delay("rook")
        done = status.get("phase") == "Ready" and status.get("observedGeneration") == gen
        failure = self.failure("CephCluster", cluster)
        nodes = kube.list(NODES)
        error = validation_error(cluster, len(nodes))
        if failure:
            error = error or failure_message("CephCluster", cluster, failure)
        if error:
            wanted = cluster_status(status, "Progressing", "False", "ClusterProgressing", error, now)
            self.patch_status(kube, target, cluster, wanted, "CephCluster %s/%s: %s" % (
                cluster_name, meta["name"], error))
            self.event(kube, "CephCluster", cluster, 'failed to reconcile CephCluster "%s/%s". failed to reconcile '
                       'cluster "%s": failed to configure local ceph cluster: %s' % (
                           meta["namespace"], meta["name"], meta["name"], error))
            return
        if not done:
            step = CLUSTER_STEPS.index(status.get("message")) + 1 if status.get("message") in CLUSTER_STEPS \
                and status.get("phase") == "Progressing" else 0
            if step > MONS_STEP:
                self.ensure_mons(cluster_name, kube, cluster, nodes)
            if step < len(CLUSTER_STEPS):
                if step == 0 or self.ctl.after((uid, "cluster", gen, step), delay):
                    wanted = cluster_status(status, "Progressing", "True", "ClusterProgressing",
                                            CLUSTER_STEPS[step], now)
                    self.patch_status(kube, target, cluster, wanted, "CephCluster %s/%s: Progressing %s" % (
                        cluster_name, meta["name"], CLUSTER_STEPS[step]))
                return
            if not self.ctl.after((uid, "cluster", gen, step), delay):
                return
            report, error = self.orchestrate(cluster_name, kube, cluster, nodes)
            if error:
                wanted = cluster_status(status, "Progressing", "False", "ClusterProgressing", error, now)
                self.patch_status(kube, target, cluster, wanted, "CephCluster %s/%s: %s" % (
                    cluster_name, meta["name"], error))
                return
            if report is None:
                return  # the OSDs are being made
            wanted = cluster_status(status, "Ready", "True", "ClusterCreated", "Cluster created successfully", now, gen)
            wanted["ceph"] = ceph_status(status.get("ceph"), report, now)
            wanted["version"] = {"image": CEPH_IMAGE, "version": CEPH_VERSION.split(" ")[0]}
            wanted["storage"] = {"osd": {"storeType": {"bluestore": report["osdmap"]["num_osds"]}}}
            self.checked[uid] = self.refreshed[uid] = time.monotonic()
            self.patch_status(kube, target, cluster, wanted, "CephCluster %s/%s: Ready, %s" % (
                cluster_name, meta["name"], wanted["ceph"]["health"]))
            return
        self.follow_nodes(cluster_name, cluster, nodes)
        # Created: the health checker reports Ceph's status every ceph_status seconds (Rook: every 60 s).
        left = self.checked.get(uid, 0) + self.ctl.delay("ceph_status") - time.monotonic()
        if left > 0:
            self.ctl.next_due = min(self.ctl.next_due, left)
            return
        self.checked[uid] = time.monotonic()
        ceph_now = status.get("ceph") or {}
        try:
            wanted = {"ceph": ceph_status(ceph_now, self.cephs[cluster_name].status(), now)}
        except (ceph.CephError, OSError, RuntimeError) as exc:
            # cephstatus.go: an unreachable cluster is HEALTH_ERR with the error in details.error.
            wanted = {"ceph": dict(ceph_now, health="HEALTH_ERR", lastChecked=now,
                                   details={"error": {"severity": "Urgent", "message": str(exc)}})}
        # A changed health at once (the lab checks every ceph_status seconds); capacity and lastChecked at Rook's own
        # period, so that a converged region's CephCluster is not rewritten every few seconds.
        due = time.monotonic() - self.refreshed.get(uid, 0) >= STATUS_REFRESH
        if health_changed(ceph_now, wanted["ceph"]) or due:
            self.refreshed[uid] = time.monotonic()
            if "details" not in wanted["ceph"] and ceph_now.get("details"):
                wanted["ceph"]["details"] = None  # merge patch: drop the old checks
            self.patch_status(kube, target, cluster, wanted, "CephCluster %s/%s: %s" % (
                cluster_name, meta["name"], wanted["ceph"]["health"]))

    def orchestrate(self, cluster_name, kube, cluster, nodes):
        """(Ceph's status report, None) once the pool's Ceph runs with the mon Secret's fsid and keys; (None, None)
        while its bootstrap (beside the passes) makes it; (None, error) when that failed (tried again later)."""
        meta = cluster["metadata"]
        secret = kube.get(path("v1", "secrets", meta["namespace"], MON_SECRET))
        fsid = _decode(secret, "fsid")
        pool_ceph = self.cephs[cluster_name]
        if pool_ceph.complete(fsid) and cluster_name not in self.bootstraps:
            return pool_ceph.status(), None
        running = self.bootstraps.get(cluster_name)
        if running is None or (running["fsid"] != fsid and not running["thread"].is_alive()):
            mons = mon_endpoints(cluster_name, cluster, nodes)
            hosts = sorted((n["metadata"]["name"], node_address(n)) for n in nodes)
            # Each mon binds its Node's address; with host networking that is also the address it publishes.
            binds = [(m, node_address(node)) for m, node in mon_placement(cluster, nodes)]
            per_node, device_class = osd_count(cluster)
            running = {"fsid": fsid, "error": None}

            def bootstrap():
                try:
                    pool_ceph.bootstrap(fsid, _decode(secret, "mon-secret"), _decode(secret, "ceph-secret"), binds,
                                        hosts, per_node, device_class)
                    self.ctl.log("Ceph %s: mons %s, %d OSDs up (fsid and keys not logged)" % (
                        cluster_name, flatten_endpoints(mons), per_node * len(hosts)))
                except Exception as exc:  # noqa: BLE001 -- a thread's end: every failure is the orchestration's error
                    running["error"] = "failed to create cluster: failed to start ceph daemons: %s" % exc
                self.ctl.wake.set()

            running["thread"] = threading.Thread(target=bootstrap, name="ceph-" + cluster_name, daemon=True)
            self.bootstraps[cluster_name] = running
            running["thread"].start()
        if running["thread"].is_alive():
            self.ctl.next_due = min(self.ctl.next_due, 1.0)
            return None, None
        del self.bootstraps[cluster_name]
        if running["error"]:
            self.ctl.log("Ceph %s: %s" % (cluster_name, running["error"]))
            return None, running["error"]
        return pool_ceph.status(), None

    def follow_nodes(self, cluster_name, cluster, nodes):
        """After the bootstrap, Rook's OSD orchestration on each reconcile (useAllNodes): OSDs are prepared on a valid
        Node without any - one that is schedulable (k8sutil GetValidNodes leaves a cordoned Node out) - one Node at a
        time beside the passes; the OSD daemons of a Node that is gone (its server released) stop with it."""
        pool_ceph = self.cephs[cluster_name]
        if cluster_name in self.bootstraps or not pool_ceph.complete():
            return
        present = dict((n["metadata"]["name"], n) for n in nodes)
        for host in pool_ceph.hosts():
            if host not in present:
                pool_ceph.remove_host(host)
                self.ctl.log("Ceph %s: the OSD daemons of Node %s stopped (the Node is gone)" % (cluster_name, host))
        running = self.preparing.get(cluster_name)
        if running is not None and running.is_alive():
            self.ctl.next_due = min(self.ctl.next_due, 1.0)
            return
        have = set(pool_ceph.hosts())
        joined = sorted(name for name, n in present.items() if name not in have and node_address(n)
                        and not (n.get("spec") or {}).get("unschedulable"))
        if not joined:
            return
        host, address = joined[0], node_address(present[joined[0]])
        per_node, device_class = osd_count(cluster)

        def prepare():
            try:
                made = pool_ceph.add_host(host, address, per_node, device_class)
                self.ctl.log("Ceph %s: OSDs %s up on Node %s" % (cluster_name, made, host))
            except Exception as exc:  # noqa: BLE001 -- a thread's end: logged, tried again on a later pass
                self.ctl.log("Ceph %s: OSDs on Node %s: %s" % (cluster_name, host, exc))
            self.ctl.wake.set()

        self.preparing[cluster_name] = threading.Thread(target=prepare, name="ceph-osds-" + host, daemon=True)
        self.preparing[cluster_name].start()
        self.ctl.next_due = min(self.ctl.next_due, 1.0)

    def bring_back(self, cluster_name, clusters):
        """At the stand-in's first pass (a lab start), the daemons of a Ceph that exists; a Ceph whose CephCluster is
        gone is removed (its hosts cleaned). Daemons that stop later stay stopped, as a failed Node's."""
        pool_ceph = self.cephs[cluster_name]
        alive = [c for c in clusters if not c["metadata"].get("deletionTimestamp")]
        if not alive and pool_ceph.state() is not None and cluster_name not in self.bootstraps:
            pool_ceph.destroy()
            self.ctl.log("Ceph %s: removed (its CephCluster is gone)" % cluster_name)
        if cluster_name not in self.brought_back:
            self.brought_back.add(cluster_name)
            if alive and pool_ceph.complete():
                pool_ceph.start()

    def release_mon_outputs(self, kube, clusters):
        """reconcileDelete's removeFinalizers: a deleted CephCluster's mon Secret and endpoints ConfigMap lose
        the disaster-protection finalizer (their owner reference lets the garbage collector remove them)."""
        alive = {c["metadata"]["uid"] for c in clusters if not c["metadata"].get("deletionTimestamp")}
        for collection, plural, name in ((SECRETS, "secrets", MON_SECRET), (CONFIG_MAPS, "configmaps", MON_ENDPOINTS)):
            for item in kube.list(collection):
                meta = item["metadata"]
                owners = {ref.get("uid") for ref in meta.get("ownerReferences") or []}
                if meta["name"] != name or DISASTER_FINALIZER not in (meta.get("finalizers") or []) or owners & alive:
                    continue
                kept = [f for f in meta["finalizers"] if f != DISASTER_FINALIZER]
                if kube.patch(path("v1", plural, meta["namespace"], name), item,
                              {"metadata": {"finalizers": kept or None}}) is not None:
                    self.ctl.log("%s %s/%s: finalizer %s removed (its CephCluster is gone)" % (
                        plural[:-1], meta["namespace"], name, DISASTER_FINALIZER))

    def fsid(self, kube, namespace):
        secret = kube.get(path("v1", "secrets", namespace, MON_SECRET))
        return _decode(secret, "fsid") if secret else None

    def ensure_mons(self, cluster_name, kube, cluster, nodes):
        """The mon Secret (fsid and keys made once) and the endpoints ConfigMap."""
        meta = cluster["metadata"]
        ns, owner = meta["namespace"], loop.owner_reference(cluster)
        if kube.get(path("v1", "secrets", ns, MON_SECRET)) is None:
            if kube.create(path("v1", "secrets", ns), mon_secret(ns, owner, str(uuid.uuid4()))) is not None:
                self.ctl.log("Secret %s/%s/%s created (fsid and keys not logged)" % (cluster_name, ns, MON_SECRET))
        if kube.get(path("v1", "configmaps", ns, MON_ENDPOINTS)) is None:
            mons = mon_endpoints(cluster_name, cluster, nodes)
            placed = sorted((n["metadata"]["name"], next((a.get("address") for a in (n.get("status") or {}).get(
                "addresses") or [] if a.get("type") == "InternalIP"), "")) for n in nodes)
            wanted = endpoints_config_map(ns, owner, mons, placed)
            if kube.create(path("v1", "configmaps", ns), wanted) is not None:
                self.ctl.log("ConfigMap %s/%s/%s: %s" % (cluster_name, ns, MON_ENDPOINTS, flatten_endpoints(mons)))

    # The children --------------------------------------------------------------

    def reconcile_child(self, cluster_name, kube, kind, obj, cluster_ready, stores):
        meta, status = obj["metadata"], obj.get("status") or {}
        target = url(kind, meta["namespace"], meta["name"])
        label = "%s %s/%s/%s" % (kind, cluster_name, meta["namespace"], meta["name"])
        gen = meta.get("generation")
        if kind in FINALIZED and FINALIZED[kind] not in (meta.get("finalizers") or []):
            # AddFinalizerIfNotPresent, before anything else.
            kube.patch(target, obj, {"metadata": {"finalizers": list(meta.get("finalizers") or []) + [FINALIZED[kind]]}})
            return
        if not status and kind != "CephObjectStoreUser":
            # A new CR: Progressing before anything else (Rook checks its CephCluster after that).
            wanted = {"phase": "Progressing"}
            if kind == "CephObjectStore":
                wanted.update(info={}, endpoints={"insecure": [], "secure": []})
            self.patch_status(kube, target, obj, wanted, label + ": Progressing")
            return
        if not cluster_ready:
            return  # Rook waits for its CephCluster (no status change)
        invalid = pool_error(obj) if kind == "CephBlockPool" else None
        if invalid:  # validatePool: no status change, the error only in the event, retried at once
            self.event(kube, kind, obj, 'failed to reconcile %s "%s/%s". invalid pool CR "%s" spec: %s' % (
                kind, meta["namespace"], meta["name"], meta["name"], invalid))
            return
        invalid = object_store_spec_error(obj) if kind == "CephObjectStore" else None
        if invalid:  # validateStore: the Progressing every reconcile starts with stays; the error only in the event
            self.patch_status(kube, target, obj, {"phase": "Progressing", "info": object_store_info(obj),
                                                  "endpoints": object_store_endpoints(obj)}, label + ": " + invalid)
            self.event(kube, kind, obj, 'failed to reconcile %s "%s/%s". invalid object store "%s" arguments: %s' % (
                kind, meta["namespace"], meta["name"], meta["name"], invalid))
            return
        failure = self.failure(kind, obj)
        if failure:
            self.fail(kube, kind, obj, label, failure_message(kind, obj, failure))
            return
        if status.get("phase") == "Ready" and status.get("observedGeneration") == gen and self.outputs_present(kube, kind, obj):
            return
        if kind == "CephObjectStoreUser":
            store = stores.get((meta["namespace"], (obj.get("spec") or {}).get("store")))
            if store is None or (store.get("status") or {}).get("phase") != "Ready":
                if status.get("phase") != "ReconcileFailed":
                    self.patch_status(kube, target, obj, {"phase": "ReconcileFailed"}, label + ": ReconcileFailed")
                cause = user_store_error(obj, store, store is not None and self.gateways(cluster_name, store))
                if cause:
                    self.event(kube, kind, obj, 'failed to reconcile %s "%s/%s". %s' % (
                        kind, meta["namespace"], meta["name"], cause))
                return
        if not self.ctl.after((meta["uid"], kind, gen), self.ctl.delay("rook")):
            return
        wanted = {"phase": "Ready", "observedGeneration": gen}
        try:
            if kind == "CephBlockPool":
                wanted.update(info=pool_info(obj), poolID=self.ensure_pool(cluster_name, obj))
            elif kind == "CephClient":
                self.ensure_client_secret(cluster_name, kube, obj, self.ensure_client(cluster_name, obj))
                wanted["info"] = {"secretName": client_secret_name(obj)}
            elif kind == "CephFilesystem":
                self.ensure_filesystem(cluster_name, obj)
            elif kind == "CephObjectStore":
                self.ensure_object_store(cluster_name, kube, obj)
                wanted.update(info=object_store_info(obj), endpoints=object_store_endpoints(obj))
            elif kind == "CephObjectStoreUser":
                store = stores[(meta["namespace"], obj["spec"]["store"])]
                keys = self.ensure_object_user(cluster_name, obj, store)
                self.ensure_user_secret(cluster_name, kube, obj, store, keys)
                wanted["info"] = {"secretName": user_secret_name(obj)}
        except (ceph.CephError, ReconcileError) as exc:
            self.fail(kube, kind, obj, label, CEPH_ERROR_PREFIX[kind] % {"name": meta["name"]} + exc.message)
            self.ctl.next_due = min(self.ctl.next_due, 5.0)
            return
        self.patch_status(kube, target, obj, wanted, label + ": Ready")

    def fail(self, kube, kind, obj, label, message):
        """A failed reconcile: the kind's failed phase (setFailedStatus; an object store's info emptied, its endpoints
        from the spec) and the Warning event."""
        meta = obj["metadata"]
        wanted = {"phase": FAILED_PHASE.get(kind, "Failure")}
        if kind == "CephObjectStore":
            wanted.update(info=None, endpoints=object_store_endpoints(obj))
        self.patch_status(kube, url(kind, meta["namespace"], meta["name"]), obj, wanted, "%s: %s %s" % (
            label, wanted["phase"], message))
        self.event(kube, kind, obj, 'failed to reconcile %s "%s/%s". %s' % (
            kind, meta["namespace"], meta["name"], message))

    def outputs_present(self, kube, kind, obj):
        """A Ready CephClient/CephObjectStoreUser whose Secret is gone or not its own gets it back."""
        if kind == "CephClient":
            secret = kube.get(path("v1", "secrets", obj["metadata"]["namespace"], client_secret_name(obj)))
            return secret is not None and self.owned_by(secret, obj)
        if kind == "CephObjectStoreUser":
            secret = kube.get(path("v1", "secrets", obj["metadata"]["namespace"], user_secret_name(obj)))
            return secret is not None and self.owned_by(secret, obj)
        return True

    @staticmethod
    def owned_by(secret, obj):
        return any(ref.get("uid") == obj["metadata"]["uid"] for ref in secret["metadata"].get("ownerReferences") or [])

    # Ceph: what Rook's pool and client controllers run ------------------------

    def ensure_pool(self, cluster_name, pool):
        """The CephBlockPool's pool in Ceph with the rbd application; returns its id."""
        return ensure_ceph_pool(self.cephs[cluster_name], pool["metadata"]["name"], pool.get("spec") or {}, "rbd")

    def ensure_filesystem(self, cluster_name, fs):
        """createFilesystem (file/filesystem.go) against the pool's Ceph: the MDS daemons first, on the pool's Nodes,
        then the pools, the filesystem, its settings and the CSI subvolume group."""
        spec, name = fs.get("spec") or {}, fs["metadata"]["name"]
        server = spec.get("metadataServer") or {}
        active, standby = server.get("activeCount") or 1, bool(server.get("activeStandby"))
        pool_ceph = self.cephs[cluster_name]
        place_daemons(pool_ceph, mds_daemons(fs), name + "-", pool_ceph.mds_ids,
                      lambda daemon, address: pool_ceph.add_mds(daemon, address, name), pool_ceph.remove_mds)
        pools = filesystem_pools(fs)
        if len(pools) > 1:  # without data pools Rook expects the filesystem to exist already
            exists = name in filesystems(pool_ceph)
            for pool_name, pool_spec in pools:
                ensure_ceph_pool(pool_ceph, pool_name, pool_spec, CEPHFS_APPLICATION)
            if exists:  # updateFilesystem
                pool_ceph.command("fs set", fs_name=name, var="max_mds", val=str(active))
            else:
                pool_ceph.command("fs flag set", flag_name="enable_multiple", val="true", yes_i_really_mean_it=True)
                pool_ceph.command("fs new", fs_name=name, metadata=pools[0][0], data=pools[1][0])
            for pool_name, dummy in pools[1 if exists else 2:]:
                try:
                    pool_ceph.command("fs add_data_pool", fs_name=name, pool=pool_name)
                except ceph.CephError as exc:
                    if exc.code != -errno.EINVAL:  # already one of the filesystem's
                        raise
        pool_ceph.command("fs set", fs_name=name, var="allow_standby_replay", val=str(standby).lower())
        pool_ceph.command("fs set", fs_name=name, var="standby_count_wanted", val=str(active if standby else 0))
        if active > 1:
            pool_ceph.command("fs set", fs_name=name, var="max_mds", val=str(active))
        pool_ceph.mgr_command("fs subvolumegroup create", vol_name=name, group_name=CSI_SUBVOLUME_GROUP)

    def filesystem_dependents(self, cluster_name, kube, fs):
        """cephFilesystemDependents: {plural kind: [names]} - the subvolume groups holding subvolumes (when the
        filesystem exists in Ceph) and the CephFilesystemSubVolumeGroups of the filesystem."""
        pool_ceph, meta = self.cephs[cluster_name], fs["metadata"]
        dependents = {}
        if meta["name"] in filesystems(pool_ceph):
            groups = [g["name"] for g in pool_ceph.mgr_command("fs subvolumegroup ls", vol_name=meta["name"])]
            holding = []
            for group in groups + [None]:
                if group in IGNORED_SUBVOLUME_GROUPS:
                    continue
                args = {"vol_name": meta["name"]}
                if group:
                    args["group_name"] = group
                if pool_ceph.mgr_command("fs subvolume ls", **args):
                    holding.append(group or NO_GROUP)
            if holding:
                dependents[SUBVOLUME_DEPENDENTS] = holding
        crs = [g["metadata"]["name"] for g in kube.list(path(GV, SUBVOLUME_GROUPS, meta["namespace"]))
               if (g.get("spec") or {}).get("filesystemName") == meta["name"]]
        if crs:
            dependents["CephFilesystemSubVolumeGroups"] = crs
        return dependents

    def delete_filesystem(self, cluster_name, kube, fs, target, label):
        """The CephFilesystem's deletion (file/controller.go, filesystem.go deleteFilesystem); False while blocked."""
        meta, spec = fs["metadata"], fs.get("spec") or {}
        pool_ceph = self.cephs[cluster_name]
        dependents = self.filesystem_dependents(cluster_name, kube, fs)
        if not self.report_dependents(kube, "CephFilesystem", fs, target, label, dependents):
            return False
        for daemon in mds_daemons(fs, every=True):
            if daemon in pool_ceph.mds_ids():
                pool_ceph.remove_mds(daemon)
        present = meta["name"] in filesystems(pool_ceph)
        if present:
            pool_ceph.command("fs fail", fs_name=meta["name"])
        if present and spec.get("dataPools") and not spec.get("preserveFilesystemOnDelete"):
            pool_ceph.command("fs rm", fs_name=meta["name"], yes_i_really_mean_it=True)
            if not spec.get("preservePoolsOnDelete"):
                for pool_name, pool_spec in filesystem_pools(fs):
                    remove_ceph_pool(pool_ceph, pool_name, pool_spec)
            self.ctl.log("%s: filesystem removed in Ceph%s" % (
                label, " (pools kept)" if spec.get("preservePoolsOnDelete") else ", with its pools"))
        else:
            self.ctl.log("%s: MDS daemons removed, filesystem kept in Ceph" % label)
        return True

    def ensure_object_store(self, cluster_name, kube, store):
        """A single-site object store as Rook makes it (object/objectstore.go, rgw.go): its pools, the realm, zone
        group and zone named as the store with the advertised endpoint, the period committed, then the gateways -
        which a securePort without a certificate it can read refuses (ReconcileError)."""
        name, pool_ceph = store["metadata"]["name"], self.cephs[cluster_name]
        for pool_name, pool_spec in object_store_pools(store):
            ensure_ceph_pool(pool_ceph, pool_name, pool_spec, RGW_APPLICATION)
        if pool_detail(pool_ceph, RGW_ROOT_POOL) is None:
            ensure_ceph_pool(pool_ceph, RGW_ROOT_POOL, (store.get("spec") or {}).get("metadataPool") or {},
                             RGW_APPLICATION)
        endpoint = "--endpoints=%s" % advertise_endpoint(store)
        realm, zonegroup, zone = realm_args(name)
        created = False
        for level, get, create in (("realm", [realm], [realm]),
                                   ("zonegroup", [zonegroup, realm], ["--master", realm, endpoint, zonegroup]),
                                   ("zone", [zone], ["--master", endpoint, realm, zonegroup, zone])):
            try:
                pool_ceph.rgw_admin(level, "get", *get)
            except ceph.CephError as exc:
                if exc.code != -errno.ENOENT:
                    raise
                pool_ceph.rgw_admin(level, "create", *create)
                created = True
        if created:
            pool_ceph.rgw_admin("period", "update", "--commit", realm, zonegroup, zone)
        refused = self.gateway_certificate_error(kube, store)
        if refused:
            raise ReconcileError(gateway_deployment_error(store, refused))
        place_daemons(pool_ceph, rgw_daemons(store), name.replace("-", ".") + ".", pool_ceph.rgws,
                      lambda daemon, address: pool_ceph.add_rgw(daemon, address, name, name, name),
                      pool_ceph.remove_rgw)

    @staticmethod
    def gateway_certificate_error(kube, store):
        """generateVolumeSourceWithTLSSecret's refusal of a securePort (spec.go): no certificate at all, or an
        sslCertificateRef whose Secret cannot be read; None otherwise."""
        gateway = (store.get("spec") or {}).get("gateway") or {}
        if not gateway.get("securePort"):
            return None
        reference = gateway.get("sslCertificateRef")
        if reference:
            if kube.get(path("v1", "secrets", store["metadata"]["namespace"], reference)) is None:
                return 'failed to get Kubernetes secrets referring the TLS certificates: secrets "%s" not found' % (
                    reference)
            return None
        return None if serving_cert(store) else "no TLS certificates found"

    def gateways(self, cluster_name, store):
        """[(address, port)] of the store's gateways."""
        known = self.cephs[cluster_name].rgws()
        return [known[d] for d in rgw_daemons(store) if d in known]

    def ensure_object_user(self, cluster_name, user, store):
        """The RGW user of a CephObjectStoreUser (object/user/controller.go, through the store's admin API - so a
        gateway must answer), its display name, bucket limit and exactly the CR's caps; its S3 keys."""
        pool_ceph, uid = self.cephs[cluster_name], user["metadata"]["name"]
        if not any(processes.port_open(port, address) for address, port in self.gateways(cluster_name, store)):
            raise ceph.CephError("user info", -errno.ECONNREFUSED, "failed to get details from ceph object user \"%s\": "
                                 "no gateway of object store \"%s\" answers" % (uid, store["metadata"]["name"]))
        where = realm_args(store["metadata"]["name"])
        if uid in (pool_ceph.rgw_admin("user", "list", *where) or []):
            found = pool_ceph.rgw_admin("user", "info", "--uid=%s" % uid, *where)
        else:
            display = (user.get("spec") or {}).get("displayName") or uid
            found = pool_ceph.rgw_admin("user", "create", "--uid=%s" % uid, "--display-name=%s" % display,
                                        "--max-buckets=%d" % USER_MAX_BUCKETS, *where)
        have = ";".join(sorted("%s=%s" % (c["type"], c["perm"]) for c in found.get("caps") or []))
        wanted = user_caps(user)
        if have != wanted:
            if have:
                pool_ceph.rgw_admin("caps", "rm", "--uid=%s" % uid, "--caps=%s" % have, *where)
            if wanted:
                pool_ceph.rgw_admin("caps", "add", "--uid=%s" % uid, "--caps=%s" % wanted, *where)
        return found["keys"][0]

    def delete_object_user(self, cluster_name, user):
        """deleteUser: the RGW user, without its data - RGW refuses a user who owns buckets, and Rook retries."""
        pool_ceph, where = self.cephs[cluster_name], realm_args((user.get("spec") or {}).get("store") or "")
        if user["metadata"]["name"] in (pool_ceph.rgw_admin("user", "list", *where) or []):
            pool_ceph.rgw_admin("user", "rm", "--uid=%s" % user["metadata"]["name"], *where)

    def object_store_dependents(self, cluster_name, kube, store):
        """CephObjectStoreDependents: its buckets (when its pools exist) and the CephObjectStoreUsers of it."""
        pool_ceph, meta = self.cephs[cluster_name], store["metadata"]
        dependents = {}
        if all(pool_detail(pool_ceph, name) is not None for name, dummy in object_store_pools(store)):
            buckets = pool_ceph.rgw_admin("bucket", "list", *realm_args(meta["name"])) or []
            if buckets:
                dependents[BUCKET_DEPENDENTS] = list(buckets)
        users = [u["metadata"]["name"] for u in kube.list(url("CephObjectStoreUser", meta["namespace"]))
                 if (u.get("spec") or {}).get("store") == meta["name"]]
        if users:
            dependents["CephObjectStoreUsers"] = users
        return dependents

    def delete_object_store(self, cluster_name, kube, store, target, label):
        """The CephObjectStore's deletion (object/controller.go, objectstore.go deleteSingleSiteRealmAndPools); False
        while dependents block it."""
        meta, spec = store["metadata"], store.get("spec") or {}
        pool_ceph = self.cephs[cluster_name]
        dependents = self.object_store_dependents(cluster_name, kube, store)
        if not self.report_dependents(kube, "CephObjectStore", store, target, label, dependents):
            return False
        for daemon in rgw_daemons(store):
            if daemon in pool_ceph.rgws():
                pool_ceph.remove_rgw(daemon)
        realm, zonegroup, zone = realm_args(meta["name"])
        stores = self.realms(pool_ceph)
        if meta["name"] in stores:
            for args in (("realm", "delete", realm), ("zonegroup", "delete", realm, zonegroup),
                         ("zone", "delete", realm, zonegroup, zone)):
                try:
                    pool_ceph.rgw_admin(*args)
                except ceph.CephError as exc:  # Rook only warns
                    self.ctl.log("%s: radosgw-admin %s %s: %s" % (label, args[0], args[1], exc.message))
            if not spec.get("preservePoolsOnDelete"):
                for pool_name, pool_spec in object_store_pools(store, last=stores == [meta["name"]]):
                    remove_ceph_pool(pool_ceph, pool_name, pool_spec)
        self.ctl.log("%s: gateways and realm removed in Ceph%s" % (
            label, " (pools kept)" if spec.get("preservePoolsOnDelete") else ", with the pools"))
        return True

    @staticmethod
    def realms(pool_ceph):
        """The object stores' realms; none without .rgw.root (the last store's deletion removed it)."""
        if pool_detail(pool_ceph, RGW_ROOT_POOL) is None:
            return []
        return (pool_ceph.rgw_admin("realm", "list") or {}).get("realms") or []

    def report_dependents(self, kube, kind, obj, target, label, dependents):
        """ReportDeletionBlockedDueToDependents / ...NotBlocked...: the DeletionIsBlocked condition; True when the
        deletion may go on."""
        conditions = copy.deepcopy((obj.get("status") or {}).get("conditions") or [])
        if loop.set_condition(conditions, "DeletionIsBlocked", *dependents_condition(kind, obj, dependents)):
            self.patch_conditions(kube, target, obj, conditions)
            if dependents:
                self.ctl.log("%s: %s" % (label, blocked_by_dependents(kind, obj, dependents)))
        if dependents:
            self.ctl.next_due = min(self.ctl.next_due, 5.0)
            return False
        return True

    def ensure_client(self, cluster_name, client):
        """client.<name> in Ceph with exactly the CR's caps (client/client.go: get-or-create, then caps); its key."""
        entity = "client.%s" % client["metadata"]["name"]
        caps = []
        for service, value in sorted(((client.get("spec") or {}).get("caps") or {}).items()):
            caps += [service, value]
        pool_ceph = self.cephs[cluster_name]
        found = pool_ceph.command("auth get-or-create", entity=entity, caps=caps)[0]
        if found.get("caps") != dict(zip(caps[::2], caps[1::2])):
            pool_ceph.command("auth caps", entity=entity, caps=caps)
        return found["key"]

    def finalize(self, cluster_name, kube, kind, obj, clusters):
        """A deleted CephBlockPool, CephClient or CephFilesystem (pool/, client/, file/controller.go): without a
        CephCluster the finalizer goes at once; a pool that holds RBD images or snapshots stays, with
        PoolDeletionIsBlocked, unless the rook.io/force-deletion annotation is "true" (then Rook's clean-up Job removes
        them first), and a pool that CephBlockPoolRadosNamespaces name, or a filesystem with subvolumes, stays with
        DeletionIsBlocked; otherwise Ceph's pool, user or filesystem is deleted, then the finalizer."""
        meta = obj["metadata"]
        if FINALIZED[kind] not in (meta.get("finalizers") or []):
            return
        target = url(kind, meta["namespace"], meta["name"])
        label = "%s %s/%s/%s" % (kind, cluster_name, meta["namespace"], meta["name"])
        alive = [c for c in clusters if c["metadata"]["namespace"] == meta["namespace"]
                 and not c["metadata"].get("deletionTimestamp")]
        pool_ceph = self.cephs[cluster_name]
        if alive and not pool_ceph.complete():
            return  # the cluster's Ceph is not up yet: Rook waits for it
        if alive:
            try:
                if kind == "CephBlockPool" and not self.delete_pool(cluster_name, kube, obj, target, label):
                    return
                if kind == "CephFilesystem" and not self.delete_filesystem(cluster_name, kube, obj, target, label):
                    return
                if kind == "CephObjectStore" and not self.delete_object_store(cluster_name, kube, obj, target, label):
                    return
                if kind == "CephObjectStoreUser":
                    self.delete_object_user(cluster_name, obj)
                if kind == "CephClient":
                    self.delete_client(cluster_name, obj)
            except ceph.CephError as exc:
                self.ctl.log("%s: deletion failed, again later: %s" % (label, exc))
                self.ctl.next_due = min(self.ctl.next_due, 5.0)
                return
        kept = [f for f in meta.get("finalizers") or [] if f != FINALIZED[kind]]
        if kube.patch(target, obj, {"metadata": {"finalizers": kept or None}}) is not None:
            self.ctl.log("%s: finalizer %s removed" % (label, FINALIZED[kind]))

    def delete_pool(self, cluster_name, kube, pool, target, label):
        """handleDeletionBlocked, then deletePool; False while the deletion is blocked: by images or snapshots in the
        pool (only these does rook.io/force-deletion remove) or by CephBlockPoolRadosNamespaces that name it."""
        meta = pool["metadata"]
        pool_ceph = self.cephs[cluster_name]
        present = pool_detail(pool_ceph, meta["name"]) is not None
        images, snapshots = pool_ceph.rbd_usage(meta["name"]) if present else (0, 0)
        if images or snapshots:
            empty = ("True", "PoolNotEmpty", 'pool "%s" contains images or snapshots and cannot be deleted' % meta["name"])
        elif present:
            empty = ("False", "PoolEmpty", 'pool "%s" is empty and can be deleted' % meta["name"])
        else:
            empty = ("False", "PoolEmpty", 'pool "%s" is not found in cluster' % meta["name"])
        dependents = block_pool_dependents(pool, kube.list(path(GV, RADOS_NAMESPACES, meta["namespace"])))
        conditions = copy.deepcopy((pool.get("status") or {}).get("conditions") or [])
        changed = loop.set_condition(conditions, "PoolDeletionIsBlocked", *empty)
        changed = loop.set_condition(conditions, "DeletionIsBlocked", *dependents_condition(
            "CephBlockPool", pool, dependents)) or changed
        if changed:
            self.patch_conditions(kube, target, pool, conditions)
            held = "; " + blocked_by_dependents("CephBlockPool", pool, dependents) if dependents else ""
            self.ctl.log("%s: PoolDeletionIsBlocked %s (%s)%s" % (label, empty[0], empty[2], held))
        if empty[0] == "True" and force_deletion_requested(pool) and \
                self.ctl.after((meta["uid"], "cleanup"), self.ctl.delay("rook")):
            removed = pool_ceph.remove_images(meta["name"])
            self.ctl.log("%s: force deletion removed %d images (Rook's clean-up Job)" % (label, removed))
            self.ctl.next_due = min(self.ctl.next_due, 0.5)
        if empty[0] == "True" or dependents:
            self.ctl.next_due = min(self.ctl.next_due, 5.0)
            return False
        if remove_ceph_pool(pool_ceph, meta["name"], pool.get("spec")):
            self.ctl.log("%s: pool deleted in Ceph" % label)
        return True

    @staticmethod
    def patch_conditions(kube, target, obj, conditions):
        """The deleted object's conditions written; obj takes the new resourceVersion, so that the finalizer's removal
        in the same pass is not refused as a conflict."""
        updated = kube.patch(target, obj, {"status": {"conditions": conditions}}, "status")
        if updated is not None:
            obj["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]

    def delete_client(self, cluster_name, client):
        try:
            self.cephs[cluster_name].command("auth del", entity="client.%s" % client["metadata"]["name"])
        except ceph.CephError as exc:
            if exc.code != -errno.ENOENT:
                raise

    def ensure_client_secret(self, cluster_name, kube, client, key):
        """The client's Secret with the Ceph user's key (a recreated CephClient is a new Ceph user, a new key)."""
        meta = client["metadata"]
        secret_url = path("v1", "secrets", meta["namespace"], client_secret_name(client))
        secret = kube.get(secret_url)
        if secret is not None and self.owned_by(secret, client) and _decode(secret, "userKey") == key:
            return
        wanted = client_secret(client, key)
        if secret is None:
            kube.create(path("v1", "secrets", meta["namespace"]), wanted)
        else:  # left over from a deleted CephClient of the same name: a new Ceph user, a new key
            kube.patch(secret_url, secret, {"metadata": {"ownerReferences": wanted["metadata"]["ownerReferences"]},
                                            "data": wanted["data"]})
        self.ctl.log("Secret %s/%s/%s written (key not logged)" % (cluster_name, meta["namespace"],
                                                                   client_secret_name(client)))

    def ensure_user_secret(self, cluster_name, kube, user, store, keys):
        meta = user["metadata"]
        secret_url = path("v1", "secrets", meta["namespace"], user_secret_name(user))
        secret = kube.get(secret_url)
        wanted = user_secret(user, store, keys)
        if secret is not None and self.owned_by(secret, user) and secret.get("data") == wanted["data"]:
            return
        if secret is None:
            kube.create(path("v1", "secrets", meta["namespace"]), wanted)
        else:
            kube.patch(secret_url, secret, {"metadata": {"ownerReferences": wanted["metadata"]["ownerReferences"]},
                                            "data": wanted["data"]})
        self.ctl.log("Secret %s/%s/%s written (keys not logged)" % (cluster_name, meta["namespace"],
                                                                    user_secret_name(user)))

    # Writes --------------------------------------------------------------------

    def patch_status(self, kube, target, obj, wanted, message):
        status = obj.get("status") or {}
        patch = {k: v for k, v in wanted.items() if status.get(k) != v}
        if not patch:
            return False
        if kube.patch(target, obj, {"status": patch}, "status") is not None:
            self.ctl.log(message)
            return True
        return False

    def event(self, kube, kind, obj, message):
        """A Warning event ReconcileFailed, once per object, generation and message."""
        meta = obj["metadata"]
        key = (meta["uid"], meta.get("generation"), message)
        if key in self.events:
            return
        self.events.add(key)
        loop.event(kube, dict(obj, apiVersion=GV, kind=kind), "ReconcileFailed", message, "Warning", KINDS[kind][1],
                   name="%s.%s" % (meta["name"], hashlib.sha256(repr(key).encode()).hexdigest()[:16]))

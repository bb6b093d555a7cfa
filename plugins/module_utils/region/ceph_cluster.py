# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A storage pool's Ceph cluster: its inventory section, its CephCluster and Rook's outputs.

Pure Python (no Kubernetes client, no Ansible). The storage pools' play (phase 6, docs/storage.md)
builds the pool's CephCluster (ceph.rook.io/v1, namespace rook-ceph) from `cobaltcore_pool.ceph`
with defaults(), applies it and waits for it, then reads what Rook wrote:

- CephCluster status.ceph.fsid and status.ceph.health (rook/rook pkg/operator/ceph/cluster/cephstatus.go);
- ConfigMap rook-ceph-mon-endpoints, key `data`: "a=10.0.0.1:6789,b=10.0.0.2:6789" (mon/endpoint.go
  flattenMonEndpoints; controller/cluster_info.go ParseMonEndpoints splits it the same way);
- Secret rook-ceph-mon, key `fsid` only (its other keys are the mon and admin keys: never read).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem, within
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

CLUSTER_NAME = "rook-ceph"
MON_ENDPOINTS = "rook-ceph-mon-endpoints"
MON_SECRET = "rook-ceph-mon"
MON_SECRET_FSID = "fsid"
HEALTHS = ("HEALTH_OK", "HEALTH_WARN", "HEALTH_ERR")

# Rook's CRD bounds: spec.mon.count 0-9 (0 means 3), spec.mgr.count 0-5.
MAX_MONS = 9
MAX_MGRS = 5

DEFAULTS = {
    "mon_count": 3,
    "allow_multiple_mons_per_node": False,
    "mgr_count": 2,
    "image": "quay.io/ceph/ceph:v19.2.3",
    "data_dir_host_path": "/var/lib/rook",
    "device_filter": None,
    "device_class": None,
    "osds_per_device": 1,
    "failure_domain": "host",
}
# CRUSH's default bucket types: what a CephBlockPool's failureDomain may name.
CRUSH_TYPES = ("osd", "host", "chassis", "rack", "row", "pdu", "pod", "room", "datacenter", "zone", "region")
KEYS = tuple(DEFAULTS)

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_ENDPOINT = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[0-9A-Za-z.:-]+?):([0-9]{1,5})$")
_IMAGE = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._/:@-]*$")


def _int(value, low, high):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def validate(section, field="ceph"):
    """Problems of a storage pool's `ceph` section (not defaulted yet), as (field, message) problems."""
    if section is None:
        return []
    if not isinstance(section, dict):
        return [problem(field, "must be a mapping, got %r" % (section,))]
    problems = []
    for key in sorted(set(section) - set(KEYS)):
        problems.append(problem("%s.%s" % (field, key), "unknown key (known: %s)" % ", ".join(KEYS)))
    value = section.get("mon_count", DEFAULTS["mon_count"])
    if not _int(value, 1, MAX_MONS) or value % 2 == 0:
        problems.append(problem(field + ".mon_count", "must be an odd integer from 1 to %d (a quorum), got %r"
                                % (MAX_MONS, value)))
    value = section.get("mgr_count", DEFAULTS["mgr_count"])
    if not _int(value, 1, MAX_MGRS):
        problems.append(problem(field + ".mgr_count", "must be an integer from 1 to %d, got %r" % (MAX_MGRS, value)))
    value = section.get("osds_per_device", DEFAULTS["osds_per_device"])
    if not _int(value, 1, 8):
        problems.append(problem(field + ".osds_per_device", "must be an integer from 1 to 8, got %r" % (value,)))
    value = section.get("allow_multiple_mons_per_node", False)
    if not isinstance(value, bool):
        problems.append(problem(field + ".allow_multiple_mons_per_node", "must be a boolean, got %r" % (value,)))
    for key in ("image", "data_dir_host_path"):
        value = section.get(key, DEFAULTS[key])
        if not isinstance(value, str) or not value:
            problems.append(problem("%s.%s" % (field, key), "must be a non-empty string, got %r" % (value,)))
    image = section.get("image")
    if isinstance(image, str) and image and not _IMAGE.match(image):
        problems.append(problem(field + ".image", "%r is not an image reference" % image))
    host_path = section.get("data_dir_host_path")
    if isinstance(host_path, str) and host_path and (not host_path.startswith("/") or host_path.rstrip("/") in (
            "", "/var/lib/rook/rook-ceph")):
        problems.append(problem(field + ".data_dir_host_path", "must be an absolute path other than / (Rook refuses "
                                                               "it), got %r" % host_path))
    device_filter = section.get("device_filter")
    if device_filter is not None:
        if not isinstance(device_filter, str) or not device_filter:
            problems.append(problem(field + ".device_filter", "must be a regular expression, got %r" % (device_filter,)))
        else:
            try:
                re.compile(device_filter)
            except re.error as exc:
                problems.append(problem(field + ".device_filter", "%r is not a regular expression: %s"
                                        % (device_filter, exc)))
    value = section.get("failure_domain", DEFAULTS["failure_domain"])
    if value not in CRUSH_TYPES:
        problems.append(problem(field + ".failure_domain", "must be a CRUSH bucket type (%s), got %r"
                                % (", ".join(CRUSH_TYPES), value)))
    device_class = section.get("device_class")
    valid_class = isinstance(device_class, str) and re.match(r"^[a-z0-9][a-z0-9_-]*$", device_class)
    if device_class is not None and not valid_class:
        problems.append(problem(field + ".device_class", "must be a Ceph device class such as nvme, got %r"
                                % (device_class,)))
    return problems


def defaults(section, media=None):
    """The section with every default filled in; the device class defaults to the pool's media."""
    problems = validate(section)
    if problems:
        raise InputError(problems)
    result = dict(DEFAULTS)
    result.update(section or {})
    if result["device_class"] is None and media:
        result["device_class"] = media
    return result


def failure_domain(section):
    """The CRUSH bucket type over which the pool's CephBlockPools spread their replicas (Rook's failureDomain)."""
    return (section or {}).get("failure_domain") or DEFAULTS["failure_domain"]


def cluster_manifest(pool_name, section, media=None, encrypted=False, public_network=None):
    """The pool's CephCluster. public_network: the pool's network.public, where the other clusters reach the
    monitors: the mons and OSDs then run on the Nodes' network (Rook's network.provider host, addressRanges.public
    as Ceph's public_network), so each mon's address is its Node's, not a Service's cluster-internal one."""
    ceph = defaults(section, media)
    config = {"osdsPerDevice": str(ceph["osds_per_device"])}
    if ceph["device_class"]:
        config["deviceClass"] = ceph["device_class"]
    if encrypted:
        config["encryptedDevice"] = "true"
    storage = {"useAllNodes": True, "useAllDevices": ceph["device_filter"] is None, "config": config}
    if ceph["device_filter"] is not None:
        storage["deviceFilter"] = ceph["device_filter"]
    manifest = {
        "apiVersion": naming.ROOK_API_VERSION,
        "kind": "CephCluster",
        "metadata": {"name": CLUSTER_NAME, "namespace": naming.ROOK_NAMESPACE,
                     "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY, "c5c3.io/storage-pool": pool_name}},
        "spec": {
            "cephVersion": {"image": ceph["image"]},
            "dataDirHostPath": ceph["data_dir_host_path"],
            "mon": {"count": ceph["mon_count"], "allowMultiplePerNode": ceph["allow_multiple_mons_per_node"]},
            "mgr": {"count": ceph["mgr_count"], "allowMultiplePerNode": ceph["allow_multiple_mons_per_node"]},
            "dashboard": {"enabled": False},
            "storage": storage,
        },
    }
    if public_network:
        manifest["spec"]["network"] = {"provider": "host", "addressRanges": {"public": [public_network]}}
    return manifest


def parse_mon_endpoints(data):
    """Monitors of a rook-ceph-mon-endpoints `data` value, in mon name order: [{name, endpoint}].

    Raises InputError naming every malformed entry (Rook itself skips them with a warning; a
    fact for phase 7 must not silently lose a monitor).
    """
    if not isinstance(data, str) or not data.strip():
        raise InputError([problem("data", "the ConfigMap %s lists no monitors" % MON_ENDPOINTS)])
    mons, problems = {}, []
    for raw in data.split(","):
        parts = raw.strip().split("=")
        if len(parts) != 2 or not parts[0] or not _ENDPOINT.match(parts[1]) or not 0 < int(
                _ENDPOINT.match(parts[1]).group(2)) < 65536:
            problems.append(problem("data", "%r is not <mon>=<address>:<port>" % raw))
            continue
        if parts[0] in mons:
            problems.append(problem("data", "monitor %s is listed twice" % parts[0]))
            continue
        mons[parts[0]] = parts[1]
    if problems:
        raise InputError(problems)
    return [{"name": name, "endpoint": mons[name]} for name in sorted(mons, key=lambda n: (len(n), n))]


def secret_fsid(secret):
    """The fsid of the rook-ceph-mon Secret (its only key read), or None."""
    value = ((secret or {}).get("data") or {}).get(MON_SECRET_FSID)
    if not value:
        return None
    try:
        return base64.b64decode(value).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def cluster_info(cluster, config_map, secret, pool=None):
    """The fact phase 7 needs, from Rook's outputs; InputError naming every inconsistency.

    Returns {fsid, monitors: ["ip:port", ...], mons: [{name, endpoint}], health, checks, phase, state, message}.
    """
    subject = "storage pool %s" % pool if pool else None
    problems = []
    status = (cluster or {}).get("status") or {}
    ceph = status.get("ceph") or {}
    if cluster is None:
        problems.append(problem("CephCluster", "%s/%s does not exist" % (naming.ROOK_NAMESPACE, CLUSTER_NAME), subject))
    mons = []
    if config_map is None:
        problems.append(problem("ConfigMap", "%s/%s does not exist (Rook writes it when it starts the mons)"
                                % (naming.ROOK_NAMESPACE, MON_ENDPOINTS), subject))
    else:
        try:
            mons = parse_mon_endpoints((config_map.get("data") or {}).get("data"))
        except InputError as exc:
            problems.extend(within(("%s ConfigMap %s" % (subject, MON_ENDPOINTS)) if subject
                                   else "ConfigMap %s" % MON_ENDPOINTS, exc.problems))
    fsid = secret_fsid(secret)
    if secret is None:
        problems.append(problem("Secret", "%s/%s does not exist" % (naming.ROOK_NAMESPACE, MON_SECRET), subject))
    elif not fsid or not _UUID.match(fsid):
        problems.append(problem("Secret %s" % MON_SECRET, "has no valid fsid", subject))
    reported = ceph.get("fsid")
    if cluster is not None and fsid and _UUID.match(fsid) and reported and reported != fsid:
        problems.append(problem("CephCluster", "status.ceph.fsid %s differs from the fsid of Secret %s (%s)"
                                % (reported, MON_SECRET, fsid), subject))
    if problems:
        raise InputError(problems)
    details = ceph.get("details") or {}
    return {
        "fsid": fsid,
        "monitors": [m["endpoint"] for m in mons],
        "mons": mons,
        "health": ceph.get("health"),
        "checks": dict((name, (check or {}).get("message") or "") for name, check in sorted(details.items())),
        "phase": status.get("phase"),
        "state": status.get("state"),
        "message": status.get("message"),
    }


def health_problems(info, accepted, pool=None):
    """Why the cluster's health is not accepted (one line), or []."""
    if info.get("health") in accepted:
        return []
    checks = "; ".join("%s: %s" % (k, v) if v else k for k, v in sorted((info.get("checks") or {}).items()))
    return ["storage pool %s: Ceph health is %s, want %s%s" % (
        pool or "?", info.get("health") or "not reported", " or ".join(accepted), " (%s)" % checks if checks else "")]

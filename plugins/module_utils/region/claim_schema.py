# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStackCluster claim schema: the seed XRD's spec, plus the stricter
constraints the XRD leaves out, and the claim's CRD for the management cluster.

XRD_SPEC_SCHEMA is a transcription of the XRD (descriptions dropped). The
stricter constraints are kept apart in STRICTER_CONSTRAINTS so that each rule
can be traced to its source; SPEC_SCHEMA is both merged. crd() is the
CustomResourceDefinition of the claims built from XRD_SPEC_SCHEMA, so the API
server admits exactly what the XRD admits; the stricter rules are reported in
each claim's status instead.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.ceph import (
    COMPRESSION_MODES, MAX_REPLICATION, MIN_REPLICATION)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.size_presets import SIZES


def _boolean(default):
    return {"type": "boolean", "default": default}


def _integer(default=None):
    schema = {"type": "integer"}
    if default is not None:
        schema["default"] = default
    return schema


def _object(properties, required=None):
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


_STRING = {"type": "string"}
_POOL_LIST = {"type": "array", "minItems": 1, "items": _STRING}

XRD_SPEC_SCHEMA = _object(
    required=("region", "size", "hypervisorClusters", "storageClusters"),
    properties={
        "region": _STRING,
        "size": {"type": "string", "enum": list(SIZES)},
        "hypervisorClusters": _POOL_LIST,
        "storageClusters": _POOL_LIST,
        "controlPlaneCluster": _STRING,
        "services": _object({
            "nova": _boolean(True),
            "neutron": _boolean(True),
            "cinder": _boolean(True),
            "glance": _boolean(True),
            "octavia": _boolean(False),
            "manila": _boolean(False),
        }),
        "cortex": _object({
            "enabled": _boolean(True),
            "pipelines": {"type": "array", "items": _STRING, "default": ["nova", "cinder"]},
        }),
        "tls": _object({
            "enabled": _boolean(True),
            "issuerRef": _STRING,
        }),
        "network": _object({
            "externalNetwork": _STRING,
            "mtu": _integer(1500),
        }),
        "storage": _object({
            "ceph": _object({
                "volumePool": _object({
                    "replication": dict(_integer(3), minimum=MIN_REPLICATION,
                                        maximum=MAX_REPLICATION),
                    "compression": {"type": "string", "enum": list(COMPRESSION_MODES),
                                    "default": "aggressive"},
                    "quotaGB": _integer(),
                }),
                "imagePool": _object({
                    "replication": _integer(3),
                    "compression": {"type": "string", "default": "aggressive"},
                }),
                "ephemeralPool": _object({
                    "enabled": _boolean(True),
                    "replication": _integer(2),
                }),
                "filesystem": _object({
                    "enabled": _boolean(False),
                    "dataPoolReplication": _integer(3),
                    "metadataPoolReplication": _integer(3),
                }),
                "objectStore": _object({
                    "enabled": _boolean(False),
                    "dataPoolReplication": _integer(3),
                }),
            }),
        }),
    },
)

_REPLICATION = {"minimum": MIN_REPLICATION, "maximum": MAX_REPLICATION}

# Field path (dotted, below spec) -> constraints the XRD does not state.
STRICTER_CONSTRAINTS = {
    # A negative quota has no meaning; 0 is "unlimited" (XRD description).
    "storage.ceph.volumePool.quotaGB": {"minimum": 0},
    # Ceph accepts only these modes, for every pool.
    "storage.ceph.imagePool.compression": {"enum": list(COMPRESSION_MODES)},
    # The volume pool's replica bounds hold for every pool.
    "storage.ceph.imagePool.replication": _REPLICATION,
    "storage.ceph.ephemeralPool.replication": _REPLICATION,
    "storage.ceph.filesystem.dataPoolReplication": _REPLICATION,
    "storage.ceph.filesystem.metadataPoolReplication": _REPLICATION,
    "storage.ceph.objectStore.dataPoolReplication": _REPLICATION,
}


def _merge_constraints(schema, constraints):
    merged = copy.deepcopy(schema)
    for path, extra in constraints.items():
        node = merged
        for key in path.split("."):
            node = node["properties"][key]
        node.update(copy.deepcopy(extra))
    return merged


SPEC_SCHEMA = _merge_constraints(XRD_SPEC_SCHEMA, STRICTER_CONSTRAINTS)


# The claim's CRD (what Crossplane would make of the XRD's claimNames): c5c3.io/v1alpha1, namespaced.
CLAIM_GROUP, CLAIM_VERSION = naming.CLAIM_API_VERSION.split("/")
CLAIM_PLURAL = "openstackclusters"
CRD_NAME = "%s.%s" % (CLAIM_PLURAL, CLAIM_GROUP)

# Crossplane's Condition (crossplane-runtime apis/common/v1): type, status, reason, message,
# lastTransitionTime, observedGeneration; one condition per type.
CONDITION_SCHEMA = _object(
    required=("type", "status", "reason", "lastTransitionTime"),
    properties={
        "type": _STRING,
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "reason": _STRING,
        "message": _STRING,
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
    },
)
STATUS_SCHEMA = _object({
    "conditions": {"type": "array", "items": CONDITION_SCHEMA,
                   "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
})


def _condition_column(name, condition):
    return {"name": name, "type": "string", "jsonPath": ".status.conditions[?(@.type=='%s')].status" % condition}


PRINTER_COLUMNS = [
    {"name": "REGION", "type": "string", "jsonPath": ".spec.region"},
    {"name": "SIZE", "type": "string", "jsonPath": ".spec.size"},
    _condition_column("SYNCED", "Synced"),
    _condition_column("READY", "Ready"),
    {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


def crd():
    """The CustomResourceDefinition of the OpenStackCluster claims (status subresource, printer columns)."""
    schema = _object(
        required=("spec",),
        properties={
            "apiVersion": _STRING,
            "kind": _STRING,
            "metadata": {"type": "object"},
            "spec": copy.deepcopy(XRD_SPEC_SCHEMA),
            "status": copy.deepcopy(STATUS_SCHEMA),
        },
    )
    kind = naming.CLAIM_KIND
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME, "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY}},
        "spec": {
            "group": CLAIM_GROUP,
            "names": {"kind": kind, "listKind": kind + "List", "plural": CLAIM_PLURAL,
                      "singular": kind.lower()},
            "scope": "Namespaced",
            "versions": [{
                "name": CLAIM_VERSION,
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": schema},
                "subresources": {"status": {}},
                "additionalPrinterColumns": copy.deepcopy(PRINTER_COLUMNS),
            }],
        },
    }

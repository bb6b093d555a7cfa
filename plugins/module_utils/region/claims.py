# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenStackCluster claims: loading, validation and defaults.

validate_claims() applies every rule of the seed XRD and the rules the XRD
cannot express (pool references, derived names, conflicts between claims). It
collects all problems of all claims and never raises, whatever it is given;
each problem reads "<namespace>/<name> <field>: <message>" (errors.InputError).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
from collections.abc import Mapping

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claim_schema import SPEC_SCHEMA
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.openapi_schema import (
    index_path, join_path, type_name, validate, with_defaults)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import (
    CONTROL_PLANE, HYPERVISOR, KIND_NAMES, STORAGE, build_region)

# Top-level and metadata fields a claim may carry.
CLAIM_FIELDS = ("apiVersion", "kind", "metadata", "spec")
METADATA_FIELDS = ("name", "namespace", "labels", "annotations")

_POOL_KINDS = (("hypervisorClusters", HYPERVISOR), ("storageClusters", STORAGE))


def claim_ref(claim, index):
    """'<namespace>/<name>' of a claim; its position stands in for what is missing."""
    metadata = claim.get("metadata") if isinstance(claim, Mapping) else None
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name = metadata.get("name")
    namespace = metadata.get("namespace")
    name = name if isinstance(name, str) and name else "#%d" % index
    namespace = namespace if isinstance(namespace, str) and namespace else "?"
    return "%s/%s" % (namespace, name)


def validate_claims(claims, region):
    """Every problem of every claim, as '<namespace>/<name> <field>: <message>' strings.

    claims is a list of claim mappings (a single mapping counts as one claim,
    None as none); region is anything build_region() accepts (its problems read
    'region <field>: <message>'). An empty list means every claim is valid and
    may be composed.
    """
    try:
        region = build_region(region)
    except InputError as error:
        return error.problems
    claim_items = claim_list(claims)
    if claim_items is None:
        return [problem("claims", "must be a list of OpenStackCluster claims, got %s" % type_name(claims))]
    claims = claim_items
    problems = []
    for index, claim in enumerate(claims):
        problems.extend(_validate_claim(claim, claim_ref(claim, index), region))
    problems.extend(_validate_between_claims(claims, region))
    return problems


def claim_list(claims):
    """claims as a list (a mapping is one claim, None is none); None if neither."""
    if claims is None:
        return []
    if isinstance(claims, Mapping):
        return [claims]
    if isinstance(claims, (list, tuple)):
        return list(claims)
    return None


def _validate_claim(claim, ref, region):
    if not isinstance(claim, Mapping):
        return [problem("", "a claim must be a mapping, got %s" % type_name(claim), ref)]
    problems = []
    for key in claim:
        if key not in CLAIM_FIELDS:
            problems.append(problem(str(key), "unknown field", ref))
    if claim.get("apiVersion") != naming.CLAIM_API_VERSION:
        problems.append(problem("apiVersion", "must be %s, got %r" % (
            naming.CLAIM_API_VERSION, claim.get("apiVersion")), ref))
    if claim.get("kind") != naming.CLAIM_KIND:
        problems.append(problem("kind", "must be %s, got %r" % (
            naming.CLAIM_KIND, claim.get("kind")), ref))
    problems.extend(_metadata_problems(claim.get("metadata"), ref))
    spec = claim.get("spec")
    if spec is None:
        problems.append(problem("spec", "is required", ref))
        return problems
    spec_problems = validate(SPEC_SCHEMA, spec, "spec", ref)
    problems.extend(spec_problems)
    if isinstance(spec, Mapping):
        problems.extend(_region_problems(spec, region, ref))
        if not spec_problems:
            problems.extend(_service_problems(spec, ref))
        problems.extend(_object_store_name_problems(_valid_name(claim), spec, ref))
    return problems


def _metadata_problems(metadata, ref):
    if not isinstance(metadata, Mapping):
        return [problem("metadata", "must be a mapping with name and namespace, got %s"
                        % type_name(metadata), ref)]
    problems = []
    for key in metadata:
        if key not in METADATA_FIELDS:
            problems.append(problem(join_path("metadata", str(key)), "unknown field", ref))
    problems.extend(claim_name_problems(metadata.get("name"), subject=ref))
    namespace = metadata.get("namespace")
    if namespace is None:
        problems.append(problem("metadata.namespace", "is required: claims live in a tenant namespace", ref))
    elif not kube_names.is_dns1123_label(namespace):
        problems.append(problem("metadata.namespace", "%r is not a valid namespace name "
                                "(DNS-1123 label)" % (namespace,), ref))
    return problems


def claim_name_problems(name, field="metadata.name", subject=None):
    """Why name cannot name an OpenStackCluster claim, as problems of field (of subject)."""
    if name is None:
        return [problem(field, "is required", subject)]
    if not isinstance(name, str):
        return [problem(field, "must be a string, got %s" % type_name(name), subject)]
    problems = []
    if not kube_names.is_dns1123_label(name, max_length=None):
        problems.append(problem(field, "%r is not a DNS-1123 label (lowercase letters, "
                                "digits, '-'; starting and ending with a letter or digit)" % (name,), subject))
    if len(name) > naming.CLAIM_NAME_MAX:
        problems.append(problem(field, "is %d characters long; at most %d fit, so that "
                                "namespace %s stays within %d" % (
                                    len(name), naming.CLAIM_NAME_MAX, naming.tenant_namespace("<name>"),
                                    kube_names.DNS1123_LABEL_MAX), subject))
    return problems


def _region_problems(spec, region, ref):
    """Rules that need the region: its name, its pools, its control planes."""
    problems = []
    spec_region = spec.get("region")
    if isinstance(spec_region, str) and spec_region != region.name:
        problems.append(problem("spec.region", "is %s, but the claims are validated for region %s"
                                % (spec_region, region.name), ref))
    for field, kind in _POOL_KINDS:
        pools = spec.get(field)
        if isinstance(pools, (list, tuple)):
            problems.extend(_pool_reference_problems(pools, kind, region, "spec." + field, ref))
    control_plane = spec.get("controlPlaneCluster", region.default_control_plane)
    if isinstance(control_plane, str):
        cluster = region.pool(control_plane)
        if cluster is None or cluster.kind != CONTROL_PLANE:
            known = ", ".join(pool.name for pool in region.control_planes) or "none"
            problems.append(problem("spec.controlPlaneCluster", "%s%s is not a control-plane cluster "
                                    "of region %s (known: %s)" % (
                                        "" if "controlPlaneCluster" in spec else "the default ",
                                        control_plane, region.name, known), ref))
    return problems


def _pool_reference_problems(pools, kind, region, path, ref):
    problems = []
    first_index = {}
    for index, name in enumerate(pools):
        if not isinstance(name, str):
            continue
        item_path = index_path(path, index)
        if name in first_index:
            problems.append(problem(item_path, "lists %s twice (also at index %d)"
                                    % (name, first_index[name]), ref))
            continue
        first_index[name] = index
        pool = region.pool(name)
        if pool is None:
            known = ", ".join(item.name for item in region.pools(kind)) or "none"
            problems.append(problem(item_path, "%s is not a %s of region %s (known: %s)" % (
                name, KIND_NAMES[kind], region.name, known), ref))
        elif pool.kind != kind:
            problems.append(problem(item_path, "%s is a %s, not a %s" % (
                name, KIND_NAMES[pool.kind], KIND_NAMES[kind]), ref))
    return problems


def _service_problems(spec, ref):
    """Rules between services and the Ceph resources they need."""
    manila = claim_spec_with_defaults(spec)["services"]["manila"]
    # Manila turns the filesystem on (seed 002), unless the claim explicitly turns it off.
    filesystem = spec.get("storage", {}).get("ceph", {}).get("filesystem", {})
    if manila and filesystem.get("enabled") is False:
        return [problem("spec.storage.ceph.filesystem.enabled",
                        "is false, but services.manila needs the CephFilesystem", ref)]
    return []


def _object_store_name_problems(name, spec, ref):
    """The claim's CephObjectStore <name>-rgw must be a name Rook accepts; checked beside the spec's other problems
    (the object store is off by default: only an explicit true turns it on), a name invalid anyway is reported as
    such."""
    enabled = spec
    for key in ("storage", "ceph", "objectStore", "enabled"):
        enabled = enabled.get(key) if isinstance(enabled, Mapping) else None
    if name is None or enabled is not True:
        return []
    store = naming.object_store(name)
    if len(store) <= naming.ROOK_OBJECT_STORE_NAME_MAX:
        return []
    return [problem("metadata.name", "is %d characters long; with spec.storage.ceph.objectStore.enabled at most %d fit, "
                    "because Rook refuses its CephObjectStore %s (%d characters, more than %d): shorten the name or "
                    "turn the object store off" % (len(name), naming.CLAIM_WITH_OBJECT_STORE_NAME_MAX, store, len(store),
                                                   naming.ROOK_OBJECT_STORE_NAME_MAX), ref)]


def _validate_between_claims(claims, region):
    """Two claims must not share a namespace or a dedicated pool."""
    problems = []
    namespaces = {}
    dedicated = {}
    for index, claim in enumerate(claims):
        name = _valid_name(claim)
        if name is None:
            continue
        ref = claim_ref(claim, index)
        namespace = naming.tenant_namespace(name)
        if namespace in namespaces:
            problems.append(problem("metadata.name", "maps to namespace %s, as claim %s does"
                                    % (namespace, namespaces[namespace]), ref))
        else:
            namespaces[namespace] = ref
        for path, pool_name in _referenced_pools(claim):
            pool = region.pool(pool_name)
            if pool is None or not pool.dedicated:
                continue
            if dedicated.setdefault(pool_name, ref) != ref:
                problems.append(problem(path, "%s is dedicated to claim %s" % (
                    pool_name, dedicated[pool_name]), ref))
    return problems


def _valid_name(claim):
    metadata = claim.get("metadata") if isinstance(claim, Mapping) else None
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) and not claim_name_problems(name) else None


def _referenced_pools(claim):
    spec = claim.get("spec")
    if not isinstance(spec, Mapping):
        return
    for field, _kind in _POOL_KINDS:
        pools = spec.get(field)
        if isinstance(pools, (list, tuple)):
            for index, name in enumerate(pools):
                if isinstance(name, str):
                    yield index_path("spec." + field, index), name


def claims_named(claims, name):
    """The claims whose metadata.name is name (malformed ones are skipped)."""
    return [claim for claim in claim_list(claims) or []
            if isinstance(claim, Mapping) and isinstance(claim.get("metadata"), Mapping)
            and claim["metadata"].get("name") == name]


def claim_spec_with_defaults(spec):
    """The claim's spec with every XRD default filled in (spec must be valid)."""
    return with_defaults(SPEC_SCHEMA, spec)


def load_claims(text):
    """The claims of one YAML text; '---' separates several, empty documents are skipped."""
    import yaml  # only loading files needs PyYAML; validation does not

    return [document for document in yaml.safe_load_all(text) if document is not None]


def load_claim_files(directory):
    """The claims of every *.yaml and *.yml file of a directory, files in name order (none: no directory)."""
    claims = []
    paths = glob.glob(os.path.join(directory, "*.yaml")) + glob.glob(os.path.join(directory, "*.yml"))
    for path in sorted(paths):
        with open(path) as handle:
            claims.extend(load_claims(handle.read()))
    return claims

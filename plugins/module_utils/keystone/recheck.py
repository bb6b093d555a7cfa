# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phases 5 and 7, pure logic: when an OpenStack cluster's Keystone needs no calls in a run.

Every Keystone step of the bootstrap (the bootstrap check, K-ORC's credentials, endpoint
regions, role assignments, the verification) authenticates against each cluster's Keystone;
with many tenants a run that changes nothing spends most of its time there. After a run
verified a cluster, the role records a digest of everything the Keystone steps depend on
that Kubernetes shows: the cluster's settings, its Keystone CR (uid, generation, endpoint),
its Secrets but the Ceph keys' copies (resourceVersions, never values) and its K-ORC objects (uid, generation, the
OpenStack ID K-ORC reports). A later run whose digest equals the record skips those calls
for that cluster; any difference (a new service, a rotated Secret, a K-ORC object that was
re-created) brings them back. What the digest cannot see is a change made in Keystone
directly: ``recheck: always`` (or a run with it now and then) verifies every cluster.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import json

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

# The ConfigMap in each cluster's namespace that holds the last verified digest.
RECORD_NAME = "keystone-bootstrap-verified"
DIGEST_KEY = "digest"
VERIFIED_AT_KEY = "verified-at"
KORC_KEY = "korc"
# What of korc_credentials' result the catalog steps need; no secret among them.
KORC_FIELDS = ("application_credential_id", "auth_url", "admin_auth_url", "region")
# The K-ORC kinds the bootstrap imports or manages (keystone/catalog.py).
KORC_KINDS = ("Domain", "Project", "Role", "Service", "Endpoint", "User", "ApplicationCredential")


def _canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _meta(obj):
    return (obj or {}).get("metadata") or {}


def digest(settings, keystone, secrets, korc_objects):
    """The digest of what one cluster's Keystone steps depend on, as Kubernetes shows it.

    settings: the cluster's settings (no secret values in them); keystone: its Keystone CR or None;
    secrets: its Secrets (only names and resourceVersions are read; the copies of the Ceph keys, which no Keystone
    step reads, are left out); korc_objects: its K-ORC objects.
    """
    keystone_meta = _meta(keystone)
    state = {
        "settings": settings,
        "keystone": None if keystone is None else [
            keystone_meta.get("uid"), keystone_meta.get("generation"),
            ((keystone or {}).get("status") or {}).get("endpoint")],
        "secrets": sorted([_meta(s).get("name"), _meta(s).get("resourceVersion")] for s in secrets or []
                          if not str(_meta(s).get("name")).startswith(naming.CEPH_CLIENT_SECRET_PREFIX)),
        "korc": sorted([o.get("kind"), _meta(o).get("name"), _meta(o).get("uid"), _meta(o).get("generation"),
                        ((o.get("status") or {}).get("id"))] for o in korc_objects or []),
    }
    return "sha256:" + hashlib.sha256(_canonical(state).encode("utf-8")).hexdigest()


def recorded(config_map):
    """(digest, korc fields) of a record ConfigMap; (None, None) when there is none or it is unreadable."""
    data = (config_map or {}).get("data") or {}
    if not data.get(DIGEST_KEY):
        return None, None
    try:
        korc = json.loads(data.get(KORC_KEY) or "null")
    except ValueError:
        return None, None
    if korc is not None and not isinstance(korc, dict):
        return None, None
    return data[DIGEST_KEY], korc


def korc_fields(result):
    """The parts of a korc_credentials result kept in the record."""
    return dict((key, (result or {}).get(key)) for key in KORC_FIELDS)


def record_manifest(name, namespace, digest_value, korc, verified_at):
    """The record ConfigMap of one cluster after its verification passed."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": RECORD_NAME, "namespace": namespace, "labels": {
                naming.MANAGED_BY_LABEL: naming.MANAGED_BY, naming.OPENSTACK_CLUSTER_NAME_LABEL: name}},
            "data": {DIGEST_KEY: digest_value, VERIFIED_AT_KEY: verified_at,
                     KORC_KEY: _canonical(korc_fields(korc))}}


def check_clusters(clusters):
    """Validate the module's clusters: [{name, namespace, settings, keystone}]; raises InputError."""
    problems = []
    if not isinstance(clusters, list):
        raise InputError([problem("clusters", "must be a list")])
    for index, entry in enumerate(clusters):
        where = "clusters[%d]" % index
        if not isinstance(entry, dict):
            problems.append(problem(where, "must be a mapping"))
            continue
        for key in ("name", "namespace"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                problems.append(problem("%s.%s" % (where, key), "must be a non-empty string"))
        if not isinstance(entry.get("settings"), dict):
            problems.append(problem("%s.settings" % where, "must be a mapping"))
        keystone = entry.get("keystone")
        if keystone is not None and not (isinstance(keystone, dict) and keystone.get("name")
                                         and keystone.get("api_version") and keystone.get("kind")):
            problems.append(problem("%s.keystone" % where, "must name api_version, kind and name"))
    names = [e.get("name") for e in clusters if isinstance(e, dict)]
    problems.extend(problem("clusters", "name %s is listed more than once" % n)
                    for n in sorted(set(n for n in names if n and names.count(n) > 1)))
    if problems:
        raise InputError(problems)


def verdict(entry, current, record):
    """One cluster's result: its digest, whether it is as last verified, the recorded K-ORC fields."""
    recorded_digest, korc = recorded(record)
    unchanged = recorded_digest is not None and recorded_digest == current
    return {"name": entry["name"], "namespace": entry["namespace"], "digest": current,
            "recorded_digest": recorded_digest, "unchanged": unchanged,
            "korc": korc if unchanged else None}


def _unchanged(state):
    """The unchanged clusters' names of a keystone_verification_state result; none when it was skipped."""
    if not isinstance(state, dict) or state.get("skipped"):
        return set()
    return set(state.get("unchanged") or [])


def pending(entries, state):
    """The entries of a Keystone step (each with a name) whose cluster needs Keystone calls."""
    unchanged = _unchanged(state)
    return [e for e in entries or [] if e.get("name") not in unchanged]


def korc_results(minted, state):
    """{cluster name: K-ORC credential fields}: korc_credentials' result, the record for the unchanged ones."""
    result = {}
    if isinstance(state, dict) and not state.get("skipped"):
        for cluster in state.get("clusters") or []:
            if cluster.get("unchanged") and cluster.get("korc") is not None:
                result[cluster["name"]] = cluster["korc"]
    if isinstance(minted, dict) and not minted.get("skipped"):
        for cluster in minted.get("clusters") or []:
            result[cluster["name"]] = cluster
    return result


def records(state, korc, verified_at):
    """The record ConfigMaps of the clusters a run verified (those not unchanged in the state)."""
    if not isinstance(state, dict) or state.get("skipped"):
        return []
    return [record_manifest(c["name"], c["namespace"], c["digest"], (korc or {}).get(c["name"]), verified_at)
            for c in state.get("clusters") or [] if not c.get("unchanged")]

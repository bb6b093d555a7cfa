# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phases 5 and 7, pure logic: the Keystone bootstrap of many OpenStack clusters as one batch.

The keystone_bootstrap role makes one module call per step for all its clusters (the
region's one in phase 5, every tenant's in phase 7). ``batch(clusters, defaults, ...)``
validates every cluster first (one InputError naming each cluster's problems) and
returns each step's input: the manifests of all clusters in one list, and for the
Keystone modules one ``clusters`` entry per cluster (its name, its bootstrap admin as
``secret_auth`` and its ``params``). It is called again as the run learns each
Keystone's endpoint (after the bootstrap wait) and K-ORC's credentials (after
korc_credentials); the catalog steps need both.

``tenant_clusters(tenants, control_planes)`` turns phase 7's plan into the role's
clusters: each tenant's namespace and the catalog services its ControlPlane enables.

The Keystone CR's ``bootstrap`` is not written here: the c5c3-operator projects it from the
ControlPlane (region, public endpoint; the admin password Secret by its own naming rule) and owns
it, so the batch only ensures the Secrets the CR names, which the keystone-operator's SecretsReady
waits for: the admin password and the database credentials (``username``, ``password``).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import hashlib
import json

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone.catalog import catalog_plan, refs_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import openbao
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

# What an entry of clusters may set; everything else is the role's, the same for every cluster.
CLUSTER_KEYS = ("name", "namespace", "services", "region", "public_url", "internal_url", "admin_url",
                "admin_interface", "korc_auth_url", "consumer_auth_url")
# Before K-ORC's credentials exist the admin cloud's URL is not known: a stand-in lets every other setting be checked.
KNOWN_URL = "https://keystone.invalid/v3"
CATALOG_KEYS = ("namespace", "region", "services", "public_url_template", "internal_url_template", "domain",
                "admin_project", "service_project", "service_project_policy", "roles", "service_roles", "korc_secret",
                "korc_cloud", "korc_interface", "consumer_interface", "service_password_version",
                "service_credential_version")
OPENSTACK_CLUSTER_LABEL = "c5c3.io/openstack-cluster"
# The Secrets the c5c3-operator's Keystone CR names (upstream: <keystone>-admin-credentials, <keystone>-db-credentials).
ADMIN_SECRET = "keystone-admin-credentials"
DB_SECRET = "keystone-db-credentials"
DB_USER = "keystone"


def _clusters(clusters, defaults):
    """[settings of each cluster]: its entry over the defaults; the defaults' own cluster when there are none."""
    if clusters in (None, [], ()):
        return [dict(defaults)], []
    if not isinstance(clusters, (list, tuple)):
        return [], [problem("clusters", "must be a list of OpenStack clusters")]
    problems, result = [], []
    for index, entry in enumerate(clusters):
        if not isinstance(entry, dict) or not isinstance(entry.get("namespace"), str) or not entry["namespace"]:
            problems.append(problem("clusters[%d]" % index, "must be a mapping with a namespace"))
            continue
        unknown = sorted(str(k) for k in entry if k not in CLUSTER_KEYS)
        if unknown:
            problems.append(problem("clusters[%d]" % index, "unknown keys %s (known: %s)"
                                    % (", ".join(unknown), ", ".join(CLUSTER_KEYS))))
        settings = dict(defaults)
        settings.update((key, value) for key, value in entry.items() if key in CLUSTER_KEYS and value is not None)
        settings["name"] = entry.get("name") or entry["namespace"]
        result.append(settings)
    for key in ("name", "namespace"):
        values = [c[key] for c in result]
        problems.extend(problem("clusters", "%s %s is listed more than once" % (key, value))
                        for value in sorted(set(v for v in values if values.count(v) > 1)))
    if len(result) > 1 and not (defaults.get("keystone_cr", True) and defaults.get("secret_auth", True)):
        problems.append(problem("clusters", "a given admin cloud (keystone_cr false, a cloud or an auth dict) is one "
                                            "Keystone's, so one cluster only"))
    return result, problems


def _catalog_settings(c, public, internal, korc_auth_url=None, consumer_auth_url=None):
    settings = dict((key, c.get(key)) for key in CATALOG_KEYS if c.get(key) is not None)
    settings.update(cluster=c["name"], keystone_public_url=public, keystone_internal_url=internal)
    if korc_auth_url:
        settings["korc_auth_url"] = korc_auth_url
    if consumer_auth_url:
        settings["consumer_auth_url"] = consumer_auth_url
    return settings


def _plan(c, settings):
    try:
        return catalog_plan(settings), []
    except InputError as error:
        return None, ["OpenStack cluster %s: %s" % (c["name"], p) for p in error.problems]


def _labels(c):
    return {naming.OPENSTACK_CLUSTER_NAME_LABEL: c["name"]}


def _secret_auth(c, endpoint):
    if not (c.get("keystone_cr", True) and c.get("secret_auth", True)):
        return None  # the module's own cloud or auth
    # The CR's status.endpoint is the internal URL: identity calls after the token go to the same interface.
    interface = c.get("admin_interface") or ("public" if c.get("admin_url") else "internal")
    return {"auth_url": c.get("admin_url") or endpoint, "interface": interface,
            "username": c.get("admin_user") or "admin",
            "project_name": c.get("admin_project") or "admin", "domain_name": c.get("domain") or "Default",
            "secret_namespace": c["namespace"], "secret_name": c.get("admin_secret") or ADMIN_SECRET}


def _entry(c, endpoint, params):
    entry = {"name": c["name"], "params": params}
    auth = _secret_auth(c, endpoint)
    if auth is not None:
        entry["secret_auth"] = auth
    return entry


def _first(*values):
    return next((v for v in values if v), None)


def _identity_urls(c, endpoint, admin_auth_url=None):
    """(public, internal) URLs of a cluster's identity service; None: the catalog's template.

    With a Keystone CR the public URL is the given one or the public template's (where users reach the
    region, seed 004), never the CR's status.endpoint, which is cluster-internal; the internal URL is the
    given one or status.endpoint. An existing Keystone (no CR) keeps the URLs its admin cloud reaches.
    """
    if c.get("keystone_cr", True):
        return c.get("public_url") or None, _first(c.get("internal_url"), endpoint)
    public = _first(c.get("public_url"), endpoint, admin_auth_url)
    return public, _first(c.get("internal_url"), public)


def _secret_problems(c):
    """The database credentials' settings (role-wide), checked before anything is written."""
    problems = []
    if not kube_names.is_dns1123_subdomain(c.get("db_secret") or DB_SECRET):
        problems.append(problem("db_secret", "%r is not a valid Secret name" % (c.get("db_secret"),)))
    if not isinstance(c.get("db_user") or DB_USER, str):
        problems.append(problem("db_user", "must be a string"))
    return problems


def _keystone_secrets(c):
    """The Secrets SecretsReady waits for: the admin password and the database credentials, generated once."""
    return [{"name": c.get("admin_secret") or ADMIN_SECRET, "namespace": c["namespace"],
             "generate": [{"key": "password", "length": c.get("admin_password_length") or 32}], "labels": _labels(c)},
            {"name": c.get("db_secret") or DB_SECRET, "namespace": c["namespace"],
             "generate": [{"key": "password", "length": c.get("db_password_length") or 32}],
             "values": {"username": c.get("db_user") or DB_USER}, "labels": _labels(c)}]


def batch(clusters, defaults, endpoints=None, korc=None, settled=None):
    """Every step's input for all clusters; raises InputError naming each cluster's problems.

    defaults: the role's settings (CATALOG_KEYS, keystone_cr, secret_auth, admin_user, admin_secret,
    admin_password_length, db_secret, db_user, db_password_length, keystone_name, keystone_api_version,
    korc_roles, cacert, openbao and openbao_* , the CLUSTER_KEYS' role-wide values). endpoints:
    {namespace: the Keystone CR's status.endpoint}; korc: {cluster name: korc_credentials' result for
    it}. settled: names of the clusters whose Kubernetes state is as their last verified run left it
    (keystone_verification_state); they get no catalog steps, since their K-ORC objects and Secrets are
    what this plan would write (the state's digest covers the plan, see plan_digest).
    """
    if not isinstance(defaults, dict):
        raise InputError([problem("defaults", "must be a mapping")])
    endpoints = endpoints or {}
    korc = korc or {}
    settled = set(settled or [])
    found, problems = _clusters(clusters, defaults)
    problems.extend(_secret_problems(defaults))
    digests = {}
    for c in found:
        public, internal = _identity_urls(c, endpoints.get(c["namespace"]), KNOWN_URL)
        plan, found_problems = _plan(c, _catalog_settings(c, public, internal or KNOWN_URL))
        problems.extend(found_problems)
        digests[c["name"]] = plan_digest(plan)
        if c.get("openbao"):
            problems.extend(_openbao(c, None)[1])
    if problems:
        raise InputError(problems)
    result = {
        "clusters": found,
        "namespaces": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": c["namespace"], "labels": dict(
            _labels(c), **{OPENSTACK_CLUSTER_LABEL: "true"})}} for c in found],
        "keystone_secrets": [s for c in found for s in _keystone_secrets(c)],
        "keystones": [dict(_keystone_ref(c), namespace=c["namespace"]) for c in found],
        # keystone_verification_state: what each cluster's Keystone steps depend on.
        # (How long a replaced K-ORC credential is kept changes nothing in Keystone.)
        "state": [dict({"name": c["name"], "namespace": c["namespace"],
                        "settings": dict(((k, v) for k, v in c.items() if k != "korc_replaced_grace"),
                                         plan_digest=digests[c["name"]])},
                       **({"keystone": _keystone_ref(c)} if c.get("keystone_cr", True) else {})) for c in found],
    }
    # The admin's Keystone: the CR's endpoint (or the admin URL); without CRs the module's own cloud.
    ready = [c for c in found if not c.get("keystone_cr", True) or c.get("admin_url") or endpoints.get(c["namespace"])]
    result["check"] = [_entry(c, endpoints.get(c["namespace"]), {
        "domain": c.get("domain") or "Default",
        "projects": [c.get("admin_project") or "admin"] + (
            [c.get("service_project") or "service"] if c.get("service_project_policy") == "unmanaged" else []),
        "roles": list(c.get("roles") or ["admin", "member", "reader", "service"]),
        "admin_user": c.get("admin_user") or "admin"}) for c in ready if c.get("keystone_cr", True)]
    result["korc"] = [_entry(c, endpoints.get(c["namespace"]), _korc_params(c, endpoints.get(c["namespace"])))
                      for c in ready]
    plans = []
    for c in found:
        if c["name"] not in korc or c["name"] in settled:
            continue
        minted = korc[c["name"]] or {}
        endpoint = endpoints.get(c["namespace"])
        public, internal = _identity_urls(c, endpoint, minted.get("admin_auth_url"))
        plan, found_problems = _plan(c, _catalog_settings(
            c, public, internal, korc_auth_url=minted.get("auth_url"),
            consumer_auth_url=_first(c.get("consumer_auth_url"), internal, public)))
        problems.extend(found_problems)
        plans.append((c, plan, minted))
    if problems:
        raise InputError(problems)
    if plans or korc or settled:
        result.update(_catalog_steps(plans, endpoints))
    return result


def plan_digest(plan):
    """The digest of a cluster's catalog plan (its manifests with the Keystone's URL, before K-ORC's credential is
    known): a collection that would write other manifests for the same settings changes it."""
    return "sha256:" + hashlib.sha256(json.dumps(plan, sort_keys=True, separators=(",", ":"), default=str)
                                      .encode("utf-8")).hexdigest()


def _keystone_ref(c):
    return {"api_version": c.get("keystone_api_version") or "keystone.openstack.c5c3.io/v1alpha1",
            "kind": "Keystone", "name": c.get("keystone_name") or "keystone"}


def _openbao(c, credential_id):
    """(PushSecret and ExternalSecret of K-ORC's credential, problems naming the cluster)."""
    try:
        # A new credential changes the annotation, which makes ESO sync both at once.
        return openbao.korc_credential_sync({
            "namespace": c["namespace"], "store_name": c.get("openbao_store"),
            "store_kind": c.get("openbao_store_kind"), "remote_key": c.get("openbao_remote_key"),
            "source_secret": c.get("openbao_source_secret"), "target_secret": c.get("korc_secret"),
            "labels": _labels(c), "annotations": {"force-sync": credential_id or "pending"}}), []
    except InputError as error:
        return [], ["OpenStack cluster %s: openbao %s" % (c["name"], p) for p in error.problems]


def _korc_params(c, endpoint):
    openbao_path = bool(c.get("openbao"))
    params = {
        "namespace": c["namespace"],
        # Through OpenBao: the PushSecret's source; K-ORC's Secret is then the ExternalSecret's target.
        "secret_name": (c.get("openbao_source_secret") or "k-orc-app-credential") if openbao_path
        else c.get("korc_secret") or naming.KORC_CLOUDS_SECRET,
        "cloud_name": c.get("korc_cloud") or naming.KORC_CLOUD_NAME,
        "roles": list(c.get("korc_roles") or ["admin"]),
        "region": c["region"],
        "endpoint_interface": c.get("korc_interface") or "internal",
        "labels": _labels(c),
        "version": int(c.get("korc_credential_version") or 0),
    }
    if c.get("korc_replaced_grace") not in (None, ""):  # else korc_credentials' own default
        params["replaced_grace"] = int(c["korc_replaced_grace"])
    auth_url = _first(c.get("korc_auth_url"), c.get("internal_url"), endpoint, c.get("public_url"))
    if auth_url:
        params["auth_url"] = auth_url
    if c.get("cacert"):
        params["korc_ca_cert"] = c["cacert"]
    if openbao_path:
        params["synced_secret"] = c.get("korc_secret") or naming.KORC_CLOUDS_SECRET
    return params


def _catalog_steps(plans, endpoints):
    steps = dict((key, []) for key in ("openbao", "imports", "secrets", "catalog", "application_credentials",
                                       "credential_secrets", "retired_secrets", "retired_credentials",
                                       "endpoint_regions",
                                       "role_assignments", "verify"))
    for c, plan, minted in plans:
        endpoint = endpoints.get(c["namespace"])
        if c.get("openbao"):
            steps["openbao"].extend(_openbao(c, minted.get("application_credential_id"))[0])
        steps["imports"].extend(plan["imports"])
        steps["secrets"].extend(plan["secrets"])
        steps["catalog"].extend(plan["catalog"] + plan["users"])
        steps["application_credentials"].extend(plan["application_credentials"])
        steps["credential_secrets"].extend(plan["credential_secrets"])
        steps["retired_secrets"].extend(plan["retired_secrets"])
        steps["retired_credentials"].extend(plan["retired_credentials"])
        steps["endpoint_regions"].append(_entry(c, endpoint, {"region": c["region"], "endpoints": plan["endpoints"]}))
        if plan["role_assignments"]:
            steps["role_assignments"].append(_entry(c, endpoint, {"assignments": plan["role_assignments"]}))
        steps["verify"].append(_entry(c, endpoint, {
            "namespace": c["namespace"], "region": c["region"], "domain": plan["settings"]["domain"],
            "project": plan["settings"]["service_project"], "services": plan["services"],
            "korc_secret": plan["settings"]["korc_secret"], "korc_cloud": plan["settings"]["korc_cloud"]}))
    steps["import_refs"] = refs_of(steps["imports"])
    # Waited for apart: the role grants need the users only, while K-ORC (one worker per kind) still registers
    # the services and endpoints.
    steps["user_refs"] = refs_of([m for m in steps["catalog"] if m["kind"] == "User"])
    steps["catalog_refs"] = refs_of([m for m in steps["catalog"] if m["kind"] != "User"])
    return steps


# ---------------------------------------------------------------------------
# Phase 7: the tenants' clusters.

# The catalog services a tenant's ControlPlane runs (spec.openstack.<service>.enabled); nova brings
# placement, which it needs; cortex is its own section (spec.cortex).
CONTROL_PLANE_SERVICES = ("glance", "nova", "neutron", "cinder", "octavia", "manila")


def control_plane_services(control_plane):
    """The catalog services of a ControlPlane manifest, in the catalog's order: keystone first."""
    spec = (control_plane or {}).get("spec") or {}
    openstack = spec.get("openstack") or {}
    services = ["keystone"]
    for name in CONTROL_PLANE_SERVICES:
        if (openstack.get(name) or {}).get("enabled"):
            services.append(name)
            if name == "nova":
                services.append("placement")
    if (spec.get("cortex") or {}).get("enabled"):
        services.append("cortex")
    return services


def tenant_clusters(tenants, control_planes):
    """keystone_bootstrap's clusters for phase 7: each tenant on this control-plane cluster.

    tenants: the tenant_plan filter's tenants; control_planes: this control-plane cluster's manifests
    (its entry of the plan's control_plane), where each tenant's ControlPlane says what runs.
    """
    by_namespace = dict((m["metadata"].get("namespace"), m) for m in control_planes or []
                        if m.get("kind") == naming.CONTROL_PLANE_KIND)
    return [{"name": t["name"], "namespace": t["namespace"],
             "services": control_plane_services(by_namespace[t["namespace"]])}
            for t in tenants or [] if t["namespace"] in by_namespace]

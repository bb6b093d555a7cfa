# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Gardener (core.gardener.cloud/v1beta1): Shoots from the region model, update rules, admin kubeconfigs.

Pure Python: the filter gardener_shoots and the modules gardener_shoot and
gardener_kubeconfig are thin wrappers over these functions.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import calendar
import datetime
import re

try:
    import yaml
except ImportError:  # the modules report it when they need it
    yaml = None

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names, timestamps
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.mappings import deep_merge, plain_copy
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import flux
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem

API_VERSION = "core.gardener.cloud/v1beta1"
DELETION_CONFIRMATION = "confirmation.gardener.cloud/deletion"
ADMIN_KUBECONFIG_API_VERSION = "authentication.gardener.cloud/v1alpha1"
ADMIN_KUBECONFIG_KIND = "AdminKubeconfigRequest"
# Gardener: len(project name) + len(shoot name) <= 21, so the technical ID fits the seed's limits.
PROJECT_AND_SHOOT_NAME_MAX = 21
PROJECT_NAME_MAX = 10
WORKER_NAME_MAX = 15
DEFAULT_WORKER = "worker"

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


# ---------------------------------------------------------------------------
# Shoots from the region model

def _pools(region):
    for key in ("control_planes", "hypervisor_pools", "storage_pools"):
        yield from region.get(key) or []


def worker_zones(pool):
    """The Shoot worker's zones: the pool's zone (Gardener places a MachineDeployment per zone)."""
    return [pool["zone"]] if pool.get("zone") else []


def settings_problems(settings):
    problems = []
    for key in ("project", "cloud_profile", "credentials_binding", "provider_type", "machine_image"):
        if not settings.get(key):
            problems.append(problem("gardener.%s" % key, "is required"))
    project = settings.get("project")
    if project and (not kube_names.is_dns1123_label(project, PROJECT_NAME_MAX) or "--" in project):
        problems.append(problem("gardener.project", "%r is not a DNS-1123 label of at most %d characters"
                                % (project, PROJECT_NAME_MAX)))
    image = settings.get("machine_image") or {}
    if image and not image.get("name"):
        problems.append(problem("gardener.machine_image.name", "is required"))
    if settings.get("flux") not in (None, False) and not isinstance(settings.get("flux"), dict):
        problems.append(problem("gardener.flux", "must be a mapping (version, registry, namespace) or false"))
    if settings.get("kubernetes_version") and not _VERSION.match(str(settings["kubernetes_version"])):
        problems.append(problem("gardener.kubernetes_version", "%r is not <major>.<minor>[.<patch>]"
                                % (settings["kubernetes_version"],)))
    return problems


def _nodes_network(pool):
    network = pool.get("network") or {}
    return network.get("underlay") or network.get("public")


def _cloud_profile(value):
    if isinstance(value, dict):
        return {"kind": value.get("kind") or "CloudProfile", "name": value["name"]}
    return {"kind": "CloudProfile", "name": value}


def shoot_cloud_profile(spec):
    """{kind, name} of the cloud profile a Shoot spec names (spec.cloudProfile, or the deprecated cloudProfileName)."""
    spec = spec or {}
    return _cloud_profile(spec["cloudProfile"]) if spec.get("cloudProfile") else _cloud_profile(spec.get("cloudProfileName"))


def shoot_spec(pool, settings, region_name):
    """The Shoot spec of one cluster of the region: the garden's settings, then the pool's own."""
    own = pool.get("gardener") or {}
    image = deep_merge(settings["machine_image"], own.get("machine_image"))
    machine = {"type": (pool.get("ironcore") or {}).get("machine_class") or own.get("machine_type"),
               "image": dict((k, image[k]) for k in ("name", "version") if image.get(k)),
               "architecture": own.get("architecture") or settings.get("architecture") or "amd64"}
    worker = {"name": own.get("worker_name") or settings.get("worker_name") or DEFAULT_WORKER,
              "machine": machine, "minimum": pool.get("workers", 1), "maximum": pool.get("workers", 1)}
    if pool.get("labels"):  # Gardener's Worker.labels: put on every Node of the pool
        worker["labels"] = dict(pool["labels"])
    if worker_zones(pool):
        worker["zones"] = worker_zones(pool)
    nodes = _nodes_network(pool)
    spec = {
        "cloudProfile": _cloud_profile(settings["cloud_profile"]),
        "region": settings.get("region") or region_name,
        "credentialsBindingName": settings["credentials_binding"],
        "provider": {"type": settings["provider_type"], "workers": [worker]},
        # A hypervisor pool's nodes live in its planned underlay, a storage pool's in its public network, where the
        # other clusters reach its Ceph monitors (docs/network.md).
        "networking": deep_merge(deep_merge(settings.get("networking") or {}, own.get("networking")),
                                 {"nodes": nodes} if nodes else None),
    }
    version = own.get("kubernetes_version") or settings.get("kubernetes_version")
    if version:
        spec["kubernetes"] = {"version": str(version)}
    purpose = own.get("purpose") or settings.get("purpose")
    if purpose:
        spec["purpose"] = purpose
    for key in ("infrastructure_config", "control_plane_config"):
        value = own.get(key) or settings.get(key)
        if value:
            spec["provider"]["infrastructureConfig" if key == "infrastructure_config" else "controlPlaneConfig"] = value
    # Flux arrives with the Shoot (phase 3 installs the operators through it); flux: false opts out.
    extensions = [] if settings.get("flux") is False else [flux.shoot_flux_extension(settings.get("flux"))]
    extensions += plain_copy(settings.get("extensions") or []) + plain_copy(own.get("extensions") or [])
    if extensions:
        spec["extensions"] = extensions
    return spec


def shoots(region, settings):
    """One Shoot per cluster that Gardener creates: control planes, hypervisor and storage pools.

    Returns [{name, cluster, labels, spec}]; raises InputError listing every problem.
    """
    problems = settings_problems(settings)
    result, names = [], []
    project = settings.get("project") or ""
    # The hypervisor operator onboards a Node only with topology.kubernetes.io/zone, its Nova availability zone
    # (onboarding_controller.go): a hypervisor pool's servers are claimed, and its Shoot's workers placed, in one.
    problems += [problem("%s.zone" % pool["name"], "is required for a hypervisor pool: the hypervisor operator "
                         "onboards a Node only with the label topology.kubernetes.io/zone, the Nova availability "
                         "zone of its Hypervisor") for pool in region.get("hypervisor_pools") or [] if not pool.get("zone")]
    for pool in _pools(region):
        name = naming.shoot_name(pool)
        names.append(name)
        where = "%s.gardener.shoot_name" % pool["name"]
        if not kube_names.is_dns1123_label(name) or "--" in name:
            problems.append(problem(where, "%r is not a DNS-1123 label without '--'" % (name,)))
        elif len(project) + len(name) > PROJECT_AND_SHOOT_NAME_MAX:
            problems.append(problem(
                where, "Shoot %s in project %s is too long: Gardener allows %d characters for project and "
                "Shoot name together, this is %d; set a shorter gardener.shoot_name for the pool"
                % (name, project, PROJECT_AND_SHOOT_NAME_MAX, len(project) + len(name))))
        if not (pool.get("ironcore") or {}).get("machine_class") and not (pool.get("gardener") or {}).get("machine_type"):
            problems.append(problem("%s.ironcore.machine_class" % pool["name"], "is required (the workers' machine type)"))
        worker = (pool.get("gardener") or {}).get("worker_name") or settings.get("worker_name") or DEFAULT_WORKER
        if not kube_names.is_dns1123_label(worker, WORKER_NAME_MAX):
            problems.append(problem("%s.gardener.worker_name" % pool["name"],
                                    "%r is not a DNS-1123 label of at most %d characters" % (worker, WORKER_NAME_MAX)))
        if problems:
            continue
        result.append({"name": name, "cluster": pool["name"],
                       "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY},
                       "spec": shoot_spec(pool, settings, region["name"])})
    for name in sorted(set(n for n in names if names.count(n) > 1)):
        problems.append(problem("gardener.shoot_name", "%s is the Shoot of several clusters" % name))
    if problems:
        raise InputError(problems)
    return result


def shoot_manifest(shoot, namespace):
    metadata = {"name": shoot["name"], "namespace": namespace}
    labels = dict(shoot.get("labels") or {})
    if shoot.get("cluster"):
        labels[naming.CLUSTER_LABEL] = shoot["cluster"]
    if labels:
        metadata["labels"] = labels
    if shoot.get("annotations"):
        metadata["annotations"] = dict(shoot["annotations"])
    return {"apiVersion": API_VERSION, "kind": "Shoot", "metadata": metadata, "spec": plain_copy(shoot["spec"])}


def kubeconfig_paths(shoots, hostvars):
    """gardener_kubeconfig's shoots option: each Shoot's kubeconfig goes to its cluster's cobaltcore_kubeconfig."""
    problems, result = [], []
    for shoot in shoots:
        path = (hostvars.get(shoot["cluster"]) or {}).get("cobaltcore_kubeconfig")
        if not path:
            problems.append(problem("hostvars.%s.cobaltcore_kubeconfig" % shoot["cluster"],
                                    "is not set, so the kubeconfig of Shoot %s has no path" % shoot["name"]))
        result.append({"name": shoot["name"], "path": path})
    if problems:
        raise InputError(problems)
    return result


# ---------------------------------------------------------------------------
# Update rules (gardener-apiserver's validation, checked before anything is written)

def _get(data, path):
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def parse_version(value):
    match = _VERSION.match(str(value or ""))
    if not match:
        return None
    return tuple(int(part) if part is not None else None for part in match.groups())


_IMMUTABLE = (
    (("region",), "the region"),
    (("provider", "type"), "the provider type"),
    (("networking", "type"), "the networking type"),
    (("networking", "pods"), "the pod network"),
    (("networking", "services"), "the service network"),
)


def update_problems(name, live_spec, desired_spec):
    """Changes gardener-apiserver refuses on update, as problems of Shoot name."""
    problems = []
    for path, what in _IMMUTABLE:
        before, after = _get(live_spec, path), _get(desired_spec, path)
        if before is not None and after is not None and before != after:
            problems.append(problem("spec." + ".".join(path), "field is immutable (%s is %s, the inventory asks for %s); "
                                    "only a new Shoot can change it" % (what, before, after), "Shoot " + name))
    # The provider extension's ValidateWorkersUpdate (ironcore-metal's, as most providers'): a worker's zones may
    # only grow at their end (gardener pkg/utils/validation ShouldEnforceImmutability).
    live_workers = dict((w.get("name"), w) for w in _get(live_spec, ("provider", "workers")) or [] if isinstance(w, dict))
    for index, worker in enumerate(_get(desired_spec, ("provider", "workers")) or []):
        before = (live_workers.get(worker.get("name")) or {}).get("zones") or []
        after = worker.get("zones") or []
        if worker.get("name") in live_workers and after[:len(before)] != before:
            problems.append(problem("spec.provider.workers[%d].zones" % index, "field is immutable (the zones of worker "
                                    "%s are %s, the inventory asks for %s); zones can only be added"
                                    % (worker.get("name"), ", ".join(before), ", ".join(after) or "none"), "Shoot " + name))
    before = parse_version(_get(live_spec, ("kubernetes", "version")))
    after = parse_version(_get(desired_spec, ("kubernetes", "version")))
    if before and after:
        if after[:2] < before[:2] or (after[:2] == before[:2] and None not in (before[2], after[2])
                                      and after[2] < before[2]):
            problems.append(problem("spec.kubernetes.version", "kubernetes version downgrade is not supported (%s to %s)"
                                    % (_get(live_spec, ("kubernetes", "version")),
                                       _get(desired_spec, ("kubernetes", "version"))), "Shoot " + name))
        elif after[0] == before[0] and after[1] > before[1] + 1:
            problems.append(problem("spec.kubernetes.version", "kubernetes version upgrade cannot skip a minor "
                                    "version (%s to %s); upgrade one minor version per run" % (
                                        _get(live_spec, ("kubernetes", "version")),
                                        _get(desired_spec, ("kubernetes", "version"))), "Shoot " + name))
    return problems


def kubernetes_version(spec):
    """A Shoot spec's Kubernetes version (spec.kubernetes.version), or None."""
    version = _get(spec, ("kubernetes", "version"))
    return str(version) if version else None


def version_text(parsed):
    return ".".join(str(part) for part in parsed if part is not None)


def held_kubernetes_version(live_spec, desired_spec):
    """Phase 2 creates a Shoot at the inventory's Kubernetes version and never moves an existing one: (the version to
    send for a Shoot that runs live_spec's, whether a higher one asked for was held). A short version of the minor it
    runs is the version it runs (a new apply of "1.33" would let Gardener default it to the newest supported patch);
    a higher one is held at the live version (playbooks/upgrade.yml moves it in the seed's order). A lower one is
    sent, for update_problems to name."""
    live, desired = kubernetes_version(live_spec), kubernetes_version(desired_spec)
    before, after = parse_version(live), parse_version(desired)
    if not (before and after) or before == after:
        return desired, False
    if after[:2] == before[:2] and after[2] is None:
        return live, False
    if after[:2] > before[:2] or (after[:2] == before[:2] and after[2] > before[2]):
        return live, True
    return desired, False


def held_workers(live_spec, desired_spec):
    """Phase 2 never shrinks an existing Shoot's worker pool: a Node stands on each machine, and Gardener's machine
    controller would delete whichever it picks, its instances or OSDs with it (playbooks/scale_in.yml evacuates the
    Nodes on the surplus ServerClaims and releases them first). Returns (the spec to send, [{worker, runs, asked}]):
    each worker the live Shoot has keeps its minimum and maximum where the desired ones are lower."""
    live = dict((w.get("name"), w) for w in ((live_spec or {}).get("provider") or {}).get("workers") or [])
    workers, held = [], []
    for worker in ((desired_spec or {}).get("provider") or {}).get("workers") or []:
        runs = live.get(worker.get("name")) or {}
        kept = dict(worker)
        for key in ("minimum", "maximum"):
            if isinstance(runs.get(key), int) and isinstance(worker.get(key), int) and worker[key] < runs[key]:
                kept[key] = runs[key]
        if kept != worker:
            held.append({"worker": worker.get("name"), "runs": runs.get("maximum"), "asked": worker.get("maximum")})
        workers.append(kept)
    if not held:
        return desired_spec, []
    return dict(desired_spec, provider=dict(desired_spec["provider"], workers=workers)), held


def held_workers_drift(desired_spec, sent_spec):
    """The worker counts held_workers kept, as drift findings ({field, declared, live}, k8s/drift.py's form): the
    inventory declares them, the Shoot keeps the live ones until scale_in.yml lowers them."""
    sent = dict((w.get("name"), w) for w in ((sent_spec or {}).get("provider") or {}).get("workers") or [])
    return [{"field": "spec.provider.workers[name=%s].%s" % (worker.get("name"), key), "declared": worker[key],
             "live": sent[worker.get("name")][key]}
            for worker in ((desired_spec or {}).get("provider") or {}).get("workers") or []
            for key in ("minimum", "maximum")
            if worker.get("name") in sent and key in worker and sent[worker.get("name")].get(key) != worker[key]]


# Gardener's version classifications (pkg/api/core/v1beta1/helper/cloudprofile.go, CurrentLifecycleClassification):
# none is supported, an expirationDate in the past is expired.
PREVIEW, SUPPORTED, DEPRECATED, EXPIRED = "preview", "supported", "deprecated", "expired"


def classification(entry, at):
    """An offered version's current classification; at: an aware datetime."""
    expires = timestamps.parse_timestamp(entry.get("expirationDate"))
    if expires is not None and expires <= calendar.timegm(at.utctimetuple()):
        return EXPIRED
    return entry.get("classification") or SUPPORTED


def offered_kubernetes(profile, at=None):
    """{version: classification} of a cloud profile's Kubernetes versions."""
    at = at or now()
    return dict((str(v["version"]), classification(v, at)) for v in
                ((profile_spec(profile).get("kubernetes") or {}).get("versions") or [])
                if isinstance(v, dict) and v.get("version"))


def default_patch(offered, minor):
    """The version Gardener's ShootMutator makes of a short "<major>.<minor>": the newest patch of that minor whose
    classification is exactly supported (preview, deprecated and expired ones are passed over); None without one."""
    patches = [parse_version(v) for v, c in offered.items() if c == SUPPORTED]
    patches = [p for p in patches if p and p[:2] == tuple(minor) and p[2] is not None]
    return version_text(max(patches)) if patches else None


def kubelet_problems(profile, shoot_name, spec, version):
    """ShootValidator's validateKubeletVersion: a worker's machine image version may carry a kubeletVersionConstraint
    the Kubernetes version must meet."""
    images = dict((i.get("name"), dict((str(v.get("version")), v) for v in i.get("versions") or [] if isinstance(v, dict)))
                  for i in profile_spec(profile).get("machineImages") or [] if isinstance(i, dict))
    problems = []
    for index, worker in enumerate(_get(spec, ("provider", "workers")) or []):
        image = (worker.get("machine") or {}).get("image") or {}
        constraint = ((images.get(image.get("name")) or {}).get(str(image.get("version"))) or {}).get(
            "kubeletVersionConstraint")
        if constraint and not flux.satisfies(version, constraint):
            problems.append(problem("spec.provider.workers[%d].machine.image" % index, "machine image '%s@%s' does not "
                                    "support kubelet version '%s', supported kubelet versions by this machine image "
                                    "version: '%s'" % (image.get("name"), image.get("version"), version, constraint),
                                    "Shoot " + shoot_name))
    return problems


# The seed's order of a region's Kubernetes upgrade: the control plane, then the storage pools one by one, then the
# hypervisor pools one by one.
UPGRADE_STAGES = (("control_planes", "control plane"), ("storage_pools", "storage pool"),
                  ("hypervisor_pools", "hypervisor pool"))


def upgrade_order(region, settings=None):
    """[{name, cluster, stage, version}] of the region's Shoots in the order their Kubernetes moves; version: the
    pool's own kubernetes_version, else the garden settings' (None without either)."""
    default = (settings or {}).get("kubernetes_version")
    order = []
    for key, stage in UPGRADE_STAGES:
        for pool in region.get(key) or []:
            version = (pool.get("gardener") or {}).get("kubernetes_version") or default
            order.append({"name": naming.shoot_name(pool), "cluster": pool["name"], "stage": stage,
                          "version": str(version) if version else None})
    return order


# ---------------------------------------------------------------------------
# Admin kubeconfigs (shoots/adminkubeconfig)

# gardenlet's ShootControllerConfiguration.syncPeriod default: a Shoot is reconciled again this long after its last
# reconcile.
SYNC_PERIOD_SECONDS = 3600


def periodic_reconcile(shoot, written_by=None, now=None):
    """Whether an unchanged Shoot is ready although gardenlet is reconciling it: the reconcile is one of
    gardenlet's periodic ones (every hour; a transient Error is retried, Failed only after 12 h).

    Holds when status.observedGeneration is metadata.generation, every condition is True and
    lastOperation is a Reconcile in state Processing or Error. Only for a Shoot this run did not change:
    a changed spec bumps the generation, and then its reconcile is waited for.

    written_by: a field manager whose earlier write (a run that stopped) may be what gardenlet reconciles. gardenlet
    sets status.observedGeneration when a reconcile starts, and the conditions stay True until the care controller
    sees what it rolls, so the write's reconcile looks periodic too; a periodic one comes only a sync period after
    the last reconcile, so within that after the manager's last write (managedFields time, now: seconds since the
    epoch) the reconcile in progress is the write's.
    """
    meta, status = shoot.get("metadata") or {}, shoot.get("status") or {}
    last = status.get("lastOperation") or {}
    conditions = status.get("conditions") or []
    if written_by is not None:
        written = timestamps.parse_timestamp(timestamps.last_write(shoot, manager=written_by))
        if written is not None and now - written < SYNC_PERIOD_SECONDS:
            return False
    return (meta.get("generation") is not None and status.get("observedGeneration") == meta.get("generation")
            and not meta.get("deletionTimestamp") and bool(conditions)
            and all(c.get("status") == "True" for c in conditions)
            and last.get("type") == "Reconcile" and last.get("state") in ("Processing", "Error"))


def admin_kubeconfig_request(expiration_seconds):
    return {"apiVersion": ADMIN_KUBECONFIG_API_VERSION, "kind": ADMIN_KUBECONFIG_KIND,
            "spec": {"expirationSeconds": int(expiration_seconds)}}


def admin_kubeconfig_from(response):
    """(kubeconfig text, expirationTimestamp) of an AdminKubeconfigRequest answer."""
    status = response.get("status") or {}
    encoded = status.get("kubeconfig")
    if not encoded:
        raise InputError([problem("status.kubeconfig", "is missing from the adminkubeconfig answer")])
    return base64.b64decode(encoded).decode("utf-8"), status.get("expirationTimestamp")


def _current(kubeconfig, section, name):
    for entry in kubeconfig.get(section) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry.get(section[:-1]) or {}
    return {}


def kubeconfig_facts(text):
    """Server and client certificate expiry of a kubeconfig's current context.

    Returns {server, expires} (expires: an aware datetime or None when it
    cannot be told); raises InputError when the text is no kubeconfig.
    """
    if yaml is None:
        raise InputError([problem("kubeconfig", "reading it needs the Python package PyYAML")])
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        raise InputError([problem("kubeconfig", "is not YAML")])
    if not isinstance(data, dict) or data.get("kind") != "Config":
        raise InputError([problem("kind", "is not Config", "kubeconfig")])
    context = _current(data, "contexts", data.get("current-context"))
    cluster = _current(data, "clusters", context.get("cluster"))
    user = _current(data, "users", context.get("user"))
    expires = None
    certificate = user.get("client-certificate-data")
    cert = None
    if certificate:
        # Imported here: it costs every Gardener task ~20 ms at start-up, and only this reads certificates.
        try:
            from cryptography import x509
        except ImportError:  # without it the expiry stays unknown
            x509 = None
        try:
            cert = x509.load_pem_x509_certificate(base64.b64decode(certificate)) if x509 else None
        except ValueError:
            cert = None
        if cert is not None:
            expires = getattr(cert, "not_valid_after_utc", None)
            if expires is None:
                expires = cert.not_valid_after.replace(tzinfo=_UTC)
    return {"server": cluster.get("server"), "expires": expires}


class _Utc(datetime.tzinfo):
    def utcoffset(self, dt):
        return datetime.timedelta(0)

    def tzname(self, dt):
        return "UTC"

    def dst(self, dt):
        return datetime.timedelta(0)


_UTC = _Utc()


def now():
    return datetime.datetime.now(_UTC)


def advertised_servers(shoot):
    return [a.get("url") for a in (_get(shoot, ("status", "advertisedAddresses")) or []) if a.get("url")]


# The advertised addresses of a Shoot's kube-apiserver, by name (v1beta1constants.AdvertisedAddress*; the list also
# holds others, such as service-account-issuer). shoots/adminkubeconfig refuses a Shoot that advertises none of them.
KUBE_APISERVER_ADDRESSES = ("external", "internal", "wildcard-tls-seed-bound", "unmanaged")


def advertises_api_server(shoot):
    """Whether the Shoot advertises a kube-apiserver address: gardenlet sets one once the Shoot's API server was
    deployed, so a Shoot without one never had an API server that anything could be created through."""
    return any(a.get("name") in KUBE_APISERVER_ADDRESSES
               for a in _get(shoot, ("status", "advertisedAddresses")) or [])


def renewal_reason(facts, shoot, renew_before, at=None):
    """Why a kubeconfig must be fetched again, or None while it is good."""
    at = at or now()
    if facts["expires"] is None:
        return "its expiry cannot be read"
    left = (facts["expires"] - at).total_seconds()
    if left <= renew_before:
        return "it expires in %ds (renewed %ds before expiry)" % (max(0, int(left)), renew_before)
    servers = advertised_servers(shoot)
    if servers and facts["server"] not in servers:
        return "it points at %s, the Shoot advertises %s" % (facts["server"], ", ".join(servers))
    return None


# ---------------------------------------------------------------------------
# Before the first write (the preflight): what the garden must hold for the Shoots

GARDENLET_READY = "GardenletReady"
BACKUP_BUCKETS_READY = "SeedBackupBucketsReady"
# gardener-scheduler's candidate determination (its config; SameRegion is upstream's default).
SEED_STRATEGIES = ("SameRegion", "MinimalDistance")


def preflight_reads(settings):
    """What the preflight reads on the garden (c5c3.cobaltcore.cluster_info's objects): the Project, the
    cloud profile and every Seed. A NamespacedCloudProfile lives in the project's namespace, which only the
    Project names, so it is looked up by name in every namespace."""
    profile = _cloud_profile(settings.get("cloud_profile") or "")
    reads = [{"api_version": API_VERSION, "kind": "Project", "name": settings.get("project") or ""}]
    if profile["kind"] == "NamespacedCloudProfile":
        reads.append({"api_version": API_VERSION, "kind": profile["kind"], "field_selector": "metadata.name=%s" % profile["name"]})
    else:
        reads.append({"api_version": API_VERSION, "kind": profile["kind"], "name": profile["name"]})
    reads.append({"api_version": API_VERSION, "kind": "Seed"})
    return reads


def _condition_true(obj, ctype):
    return any(c.get("type") == ctype and c.get("status") == "True"
               for c in ((obj.get("status") or {}).get("conditions") or []))


def seed_is_usable(seed):
    """gardener-scheduler's isUsableSeed: not deleting, visible, reconciled once, gardenlet ready (and its
    backup buckets, when it backs up)."""
    spec = seed.get("spec") or {}
    # gardener-apiserver defaults spec.settings.scheduling.visible to true.
    visible = ((spec.get("settings") or {}).get("scheduling") or {}).get("visible", True)
    return (not (seed.get("metadata") or {}).get("deletionTimestamp") and visible is True
            and bool((seed.get("status") or {}).get("lastOperation")) and _condition_true(seed, GARDENLET_READY)
            and (not spec.get("backup") or _condition_true(seed, BACKUP_BUCKETS_READY)))


def _version_offered(wanted, versions):
    """Whether the cloud profile offers a Kubernetes or image version (a <major>.<minor> takes any patch)."""
    wanted = str(wanted)
    return any(v == wanted or v.startswith(wanted + ".") for v in versions)


def _names(items):
    return [item.get("name") for item in items or [] if isinstance(item, dict) and item.get("name")]


def profile_spec(profile):
    """A cloud profile's spec; a NamespacedCloudProfile's is the one merged with its parent (status.cloudProfileSpec)."""
    if profile.get("kind") == "NamespacedCloudProfile":
        return (profile.get("status") or {}).get("cloudProfileSpec") or {}
    return profile.get("spec") or {}


def _profile_problems(profile, shoots, region, settings):
    spec = profile_spec(profile)
    where = "%s %s" % (profile.get("kind") or "CloudProfile", (profile.get("metadata") or {}).get("name"))
    problems = []
    if spec.get("type") and spec["type"] != settings.get("provider_type"):
        problems.append(problem("gardener.provider_type", "%s is not the provider type of %s (%s): Gardener refuses "
                                "Shoots of another type" % (settings.get("provider_type"), where, spec["type"])))
    regions = _names(spec.get("regions"))
    if region not in regions:
        problems.append(problem("gardener.region", "%s offers no region %s (it offers %s)"
                                % (where, region, ", ".join(regions) or "none")))
    # Admission refuses a machine type the profile does not list, or lists as not usable.
    offered = [t["name"] for t in spec.get("machineTypes") or [] if isinstance(t, dict) and t.get("name")
               and t.get("usable") is not False]
    # Gardener's ShootValidator (validateZones): a worker's zones are the region's.
    zones = next((_names(r.get("zones")) for r in spec.get("regions") or [] if isinstance(r, dict) and r.get("name") == region), [])
    for shoot in shoots:
        for worker in shoot["spec"]["provider"]["workers"]:
            machine = worker["machine"]
            if machine.get("type") not in offered:
                problems.append(problem("%s.ironcore.machine_class" % shoot["cluster"], "%s offers no usable machine "
                                        "type %s (it offers %s)" % (where, machine.get("type"), ", ".join(offered) or "none")))
            for zone in worker.get("zones") or []:
                if region in regions and zone not in zones:
                    problems.append(problem("%s.zone" % shoot["cluster"], "%s offers no zone %s in region %s (%s)" % (
                        where, zone, region, "it offers %s" % ", ".join(zones) if zones
                        else "the region has no availability zones")))
    versions = [v.get("version") for v in ((spec.get("kubernetes") or {}).get("versions") or []) if v.get("version")]
    wanted = sorted(set(str(s["spec"]["kubernetes"]["version"]) for s in shoots if s["spec"].get("kubernetes")))
    for version in wanted:
        if not _version_offered(version, versions):
            problems.append(problem("gardener.kubernetes_version", "%s offers no Kubernetes %s (it offers %s)"
                                    % (where, version, ", ".join(versions) or "none")))
    images = dict((i.get("name"), [v.get("version") for v in i.get("versions") or []])
                  for i in spec.get("machineImages") or [] if isinstance(i, dict))
    image = settings.get("machine_image") or {}
    if image.get("name") and image["name"] not in images:
        problems.append(problem("gardener.machine_image.name", "%s offers no machine image %s (it offers %s)"
                                % (where, image["name"], ", ".join(sorted(images)) or "none")))
    elif image.get("version") and not _version_offered(image["version"], images.get(image["name"]) or []):
        problems.append(problem("gardener.machine_image.version", "%s offers no %s %s"
                                % (where, image["name"], image["version"])))
    return problems


def _seed_provider(seed):
    return (seed.get("spec") or {}).get("provider") or {}


def _seed_problems(seeds, profile, shoots, region, settings, strategy):
    """Whether gardener-scheduler finds a seed for the Shoots: usable, matching the cloud profile's seed
    selector and provider types, and (SameRegion, unless the purpose is testing) in the Shoots' region."""
    usable = [seed for seed in seeds if seed_is_usable(seed)]
    selector = profile_spec(profile).get("seedSelector") or {}
    label_selector = dict((k, v) for k, v in selector.items() if k in ("matchLabels", "matchExpressions"))
    if label_selector:
        usable = [s for s in usable if kube_names.selector_matches(label_selector, (s.get("metadata") or {}).get("labels"))]
    providers = selector.get("providerTypes") or []
    provider = settings.get("provider_type")
    if providers:  # the cloud profile's seedSelector.providerTypes, "*" for any
        usable = [s for s in usable if _seed_provider(s).get("type") in providers or "*" in providers]
    else:
        usable = [s for s in usable if _seed_provider(s).get("type") == provider]
    purposes = set(s["spec"].get("purpose") or "evaluation" for s in shoots)
    if strategy == "SameRegion" and purposes != set(["testing"]):
        usable = [s for s in usable if _seed_provider(s).get("region") == region and _seed_provider(s).get("type") == provider]
    if usable:
        return []
    return [problem("gardener.region", "no Seed can host the Shoots: none of the %d Seeds is usable (not deleting, "
                    "visible, gardenlet ready) for provider %s%s" % (
                        len(seeds), provider, " in region %s" % region if strategy == "SameRegion" else ""))]


def check_seed_strategy(strategy):
    """InputError unless strategy is one of gardener-scheduler's SEED_STRATEGIES."""
    if strategy not in SEED_STRATEGIES:
        raise InputError([problem("seed_strategy", "%r is not one of %s" % (strategy, ", ".join(SEED_STRATEGIES)))])


def garden_problems(region, settings, found, strategy="SameRegion"):
    """What phase 2 needs from the garden and does not find there, one problem each.

    found: the preflight_reads objects as cluster_info returned them ({kind, items, error}). The Project
    must exist and be Ready (its namespace created); the cloud profile must exist and offer the
    Shoots' provider type, region, machine types, Kubernetes version and machine image; a Seed must be
    usable for them. A read the garden forbids (403) for Seeds is not checked. Settings phase 2 would
    refuse are the problems then; a strategy that is none of SEED_STRATEGIES is an InputError.
    """
    check_seed_strategy(strategy)
    try:
        shoot_list = shoots(region, settings)
    except InputError as exc:
        return list(exc.problems)
    by_kind = dict((read.get("kind"), read) for read in found or [])
    project_name = settings.get("project")
    project_read = by_kind.get("Project") or {}
    project = (project_read.get("items") or [None])[0]
    problems = []
    if project_read.get("error"):
        problems.append(problem("gardener.project", "cannot read Project %s: %s" % (project_name, project_read["error"])))
    elif project is None:
        problems.append(problem("gardener.project", "Gardener project %s does not exist in the garden" % project_name))
    else:
        namespace = (project.get("spec") or {}).get("namespace")
        phase = (project.get("status") or {}).get("phase") or "not reconciled"
        if phase != "Ready":
            problems.append(problem("gardener.project", "Gardener project %s is %s, not Ready: its namespace %s "
                                    "cannot take Shoots yet" % (project_name, phase, namespace or "(none yet)")))
    kind = _cloud_profile(settings["cloud_profile"])
    profile_read = by_kind.get(kind["kind"]) or {}
    profiles = profile_read.get("items") or []
    if kind["kind"] == "NamespacedCloudProfile" and project is not None:
        namespace = (project.get("spec") or {}).get("namespace")
        profiles = [p for p in profiles if (p.get("metadata") or {}).get("namespace") == namespace]
    profile = profiles[0] if profiles else None
    region_name = shoot_list[0]["spec"]["region"] if shoot_list else settings.get("region") or region["name"]
    if profile_read.get("error"):
        problems.append(problem("gardener.cloud_profile", "cannot read %s %s: %s"
                                % (kind["kind"], kind["name"], profile_read["error"])))
    elif profile is None:
        problems.append(problem("gardener.cloud_profile", "%s %s does not exist in the garden" % (kind["kind"], kind["name"])))
    else:
        problems += _profile_problems(profile, shoot_list, region_name, settings)
    seed_read = by_kind.get("Seed") or {}
    if seed_read.get("error") and seed_read.get("status") != 403:
        problems.append(problem("gardener.region", "cannot read the Seeds: %s" % seed_read["error"]))
    elif not seed_read.get("error") and shoot_list:
        problems += _seed_problems(seed_read.get("items") or [], profile or {}, shoot_list, region_name, settings, strategy)
    return problems

# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Flux: the operator table of phase 3 and what it becomes (pure).

The table is data: one entry per Helm release (name, chart, version, repository,
namespace, values, depends_on, crds, groups). A region overrides entries by name;
the validated table of one cluster becomes its Namespaces, HelmRepositories and
HelmReleases (helm.toolkit.fluxcd.io/v2, source.toolkit.fluxcd.io/v1), which the
real Flux installs in dependsOn order.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.mappings import deep_merge, plain_copy
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

SOURCE_API_VERSION = "source.toolkit.fluxcd.io/v1"
HELM_API_VERSION = "helm.toolkit.fluxcd.io/v2"
FLUX_NAMESPACE = "flux-system"
# Phase 3 applies under a field manager of its own: an operator's namespace can be another phase's
# too (the service operators run in "openstack", the region's OpenStack cluster), and one manager
# applying two different sets of its labels would take the other's away on every run.
FIELD_MANAGER = "c5c3.cobaltcore-operators"
# helm-controller's CRD policies (HelmRelease spec.install.crds / spec.upgrade.crds).
CRD_POLICIES = ("Skip", "Create", "CreateReplace")
DEFAULT_CRD_POLICY = "CreateReplace"
RELEASE_INTERVAL = "30m"
REPOSITORY_INTERVAL = "1h"
# What a running Flux holds in its namespace: each controller's leader-election Lease.
CONTROLLER_LEASES = ("source-controller-leader-election", "helm-controller-leader-election")

# Gardener's shoot-flux extension (stackitcloud/gardener-extension-shoot-flux).
SHOOT_FLUX_EXTENSION = "shoot-flux"
FLUX_CONFIG_API_VERSION = "flux.extensions.gardener.cloud/v1alpha1"
FLUX_CONFIG_KIND = "FluxConfig"

_EXACT = re.compile(r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
# A Masterminds/semver constraint as Flux reads HelmChart spec.version: comparisons, ranges,
# tilde/caret and wildcards, joined by commas, blanks and ||.
_CONSTRAINT_TERM = re.compile(r"^(=|!=|>|<|>=|=<|<=|~|~>|\^)?\s*v?(\d+|[xX*])(\.(\d+|[xX*]))?(\.(\d+|[xX*]))?"
                              r"(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
_FIELDS = ("name", "chart", "version", "repository", "namespace", "values", "depends_on", "crds",
           "groups", "enabled", "interval", "timeout", "upgrade_from")
_REPOSITORY_FIELDS = ("url", "interval", "type")


def is_exact_version(version):
    return bool(_EXACT.match(str(version)))


def _is_version_constraint(version):
    if is_exact_version(version):
        return True
    text = str(version).strip()
    if not text:
        return False
    for alternative in text.split("||"):
        terms = [t for t in re.split(r"\s*,\s*|\s+(?![\d vxX*])", alternative.strip()) if t]
        # "1.2 - 1.4" (a hyphen range) is two versions around " - ".
        if " - " in alternative:
            terms = [t.strip() for t in alternative.split(" - ")]
        if not terms or not all(_CONSTRAINT_TERM.match(t.strip()) for t in terms):
            return False
    return True


def merged_table(table, overrides):
    """The shipped table with a region's overrides: by name, fields merged (values deeply)."""
    entries, problems = [], []
    by_name = {}
    for index, entry in enumerate(table or []):
        if not isinstance(entry, dict):
            problems.append(problem("operators[%d]" % index, "must be a mapping"))
            continue
        entries.append(plain_copy(entry))
        if entry.get("name") is not None:
            by_name.setdefault(entry["name"], entries[-1])
    if not isinstance(overrides or {}, dict):
        return entries, problems + [problem("operator_overrides", "must be a mapping of release name to fields")]
    for name, fields in sorted((overrides or {}).items()):
        if not isinstance(fields, dict):
            problems.append(problem("operator_overrides.%s" % name, "must be a mapping of fields"))
            continue
        if name in by_name:
            merged = deep_merge(by_name[name], fields)
            by_name[name].clear()
            by_name[name].update(merged)
        else:
            entries.append(dict(plain_copy(fields), name=name))
    return entries, problems


def _entry_problems(entry, where, repositories):
    problems = []
    for key in sorted(set(entry) - set(_FIELDS)):
        problems.append(problem("%s.%s" % (where, key), "is not a field of an operator entry (%s)" % ", ".join(_FIELDS)))
    name = entry.get("name")
    if not isinstance(name, str) or not kube_names.is_dns1123_label(name, 53):
        problems.append(problem("%s.name" % where, "%r is not a DNS-1123 label of at most 53 characters "
                                "(a Helm release name)" % (name,)))
    for key in ("chart", "repository", "namespace"):
        if not entry.get(key) or not isinstance(entry.get(key), str):
            problems.append(problem("%s.%s" % (where, key), "is required"))
    version = entry.get("version")
    if version in (None, ""):
        problems.append(problem("%s.version" % where, "is required: pin the chart version"))
    elif not _is_version_constraint(version):
        problems.append(problem("%s.version" % where, "%r is neither a version nor a semver range" % (version,)))
    namespace = entry.get("namespace")
    if isinstance(namespace, str) and namespace and not kube_names.is_dns1123_label(namespace):
        problems.append(problem("%s.namespace" % where, "%r is not a DNS-1123 label" % (namespace,)))
    repository = entry.get("repository")
    if isinstance(repository, str) and repository and repository not in repositories:
        problems.append(problem("%s.repository" % where, "%r is not a repository of helm_repositories (%s)"
                                % (repository, ", ".join(sorted(repositories)) or "none")))
    upgrade_from = entry.get("upgrade_from")
    if upgrade_from not in (None, "") and not _is_version_constraint(upgrade_from):
        problems.append(problem("%s.upgrade_from" % where, "%r is not a semver range" % (upgrade_from,)))
    crds = entry.get("crds", DEFAULT_CRD_POLICY)
    if crds not in CRD_POLICIES:
        problems.append(problem("%s.crds" % where, "%r is not one of %s" % (crds, ", ".join(CRD_POLICIES))))
    if not isinstance(entry.get("values", {}) or {}, dict):
        problems.append(problem("%s.values" % where, "must be a mapping"))
    for key in ("depends_on", "groups"):
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(problem("%s.%s" % (where, key), "must be a list of names"))
    if not isinstance(entry.get("enabled", True), bool):
        problems.append(problem("%s.enabled" % where, "must be true or false"))
    return problems


def _repository_problems(repositories):
    problems = []
    if not isinstance(repositories, dict):
        return [problem("helm_repositories", "must be a mapping of repository name to url, interval, type")]
    for name, spec in sorted(repositories.items()):
        where = "helm_repositories.%s" % name
        if not kube_names.is_dns1123_subdomain(name):
            problems.append(problem(where, "%r is not a DNS-1123 name" % (name,)))
        if not isinstance(spec, dict):
            problems.append(problem(where, "must be a mapping with url"))
            continue
        for key in sorted(set(spec) - set(_REPOSITORY_FIELDS)):
            problems.append(problem("%s.%s" % (where, key), "is not a field of a repository (%s)"
                                    % ", ".join(_REPOSITORY_FIELDS)))
        url = spec.get("url")
        if not isinstance(url, str) or not re.match(r"^(https?|oci)://\S+$", url):
            problems.append(problem("%s.url" % where, "%r is not an http(s):// or oci:// URL" % (url,)))
        if spec.get("type") not in (None, "default", "oci"):
            problems.append(problem("%s.type" % where, "%r is not default or oci" % (spec.get("type"),)))
        elif isinstance(url, str) and url.startswith("oci://") != (spec.get("type") == "oci"):
            problems.append(problem("%s.type" % where, "must be oci exactly when the url is oci://"))
    return problems


def _cycle(names, edges):
    """One dependency cycle among names (a list closing on its first member), or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for dep in edges.get(node, ()):
            if state.get(dep) == "open":
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep, path + [dep])
                if found:
                    return found
        state[node] = "done"
        return None

    for name in names:
        if name not in state:
            found = visit(name, [name])
            if found:
                return found
    return None


def validated_table(table, overrides, repositories):
    """The region's operator table, merged and checked as a whole. Raises InputError naming every problem."""
    entries, problems = merged_table(table, overrides)
    problems += _repository_problems(repositories)
    repositories = repositories if isinstance(repositories, dict) else {}
    names = [e.get("name") for e in entries]
    for name in sorted(set(n for n in names if n is not None and names.count(n) > 1)):
        problems.append(problem("operators.%s" % name, "is defined %d times" % names.count(name)))
    for index, entry in enumerate(entries):
        where = "operators.%s" % entry["name"] if isinstance(entry.get("name"), str) else "operators[%d]" % index
        problems += _entry_problems(entry, where, repositories)
    enabled = {}
    for entry in entries:  # the first of duplicates (reported above)
        if entry.get("enabled", True) is not False and isinstance(entry.get("name"), str):
            enabled.setdefault(entry["name"], entry)
    for name, entry in sorted(enabled.items()):
        groups = set(entry.get("groups") or []) if isinstance(entry.get("groups"), list) else set()
        for dep in entry.get("depends_on") or [] if isinstance(entry.get("depends_on"), list) else []:
            if dep == name:
                problems.append(problem("operators.%s.depends_on" % name, "names the release itself"))
            elif dep not in enabled:
                problems.append(problem("operators.%s.depends_on" % name, "%r is not an enabled release of the table"
                                        % (dep,)))
            else:
                missing = sorted(groups - set(enabled[dep].get("groups") or []))
                if missing:
                    problems.append(problem("operators.%s.depends_on" % name, "%r is not installed on %s, where %s is"
                                            % (dep, ", ".join(missing), name)))
    cycle = _cycle(sorted(enabled), dict((n, [d for d in (e.get("depends_on") or []) if d in enabled and d != n])
                                         for n, e in enabled.items()
                                         if isinstance(e.get("depends_on"), list)))
    if cycle:
        problems.append(problem("operators.%s.depends_on" % cycle[0], "forms a cycle: %s" % " -> ".join(cycle)))
    if problems:
        raise InputError(problems)
    return list(enabled.values())


def releases_for(table, group_names):
    """The enabled releases for a cluster in these inventory groups, in dependsOn order (then table order)."""
    wanted = [e for e in table if set(e.get("groups") or []) & set(group_names)]
    return dependency_order(wanted)


def dependency_order(entries):
    ordered, placed = [], set()
    remaining = list(entries)
    while remaining:
        ready = [e for e in remaining if all(d in placed or d not in [r["name"] for r in entries]
                                             for d in e.get("depends_on") or [])]
        if not ready:  # a cycle; validated_table rejects those
            ready = remaining[:1]
        for entry in ready:
            ordered.append(entry)
            placed.add(entry["name"])
            remaining.remove(entry)
    return ordered


def _labels():
    return {naming.MANAGED_BY_LABEL: naming.MANAGED_BY}


# helm-controller labels every object of a release it installs, the CRDs of its chart's crds/ as well.
RELEASE_NAME_LABEL = "helm.toolkit.fluxcd.io/name"
RELEASE_NAMESPACE_LABEL = "helm.toolkit.fluxcd.io/namespace"


def managed_selector():
    return "%s=%s" % (naming.MANAGED_BY_LABEL, naming.MANAGED_BY)


def release_objects_selector(namespace, name):
    """The label selector of the objects helm-controller installed for one release (its CRDs among them)."""
    return "%s=%s,%s=%s" % (RELEASE_NAME_LABEL, name, RELEASE_NAMESPACE_LABEL, namespace)


def unwanted_releases(live, entries):
    """The collection's HelmReleases on the cluster (live: those labelled as its own) that the table no longer gives
    it, each before the releases it depends on (spec.dependsOn): [(namespace, name, [(namespace, name) it depends
    on])]."""
    wanted = set((e["namespace"], e["name"]) for e in entries)
    gone = {}
    for release in live:
        meta = release["metadata"]
        key = (meta["namespace"], meta["name"])
        if key not in wanted:
            gone[key] = [(d.get("namespace") or meta["namespace"], d.get("name"))
                         for d in (release.get("spec") or {}).get("dependsOn") or []]
    ordered, placed = [], set()
    while len(ordered) < len(gone):
        # First those no other unwanted release depends on.
        free = sorted(k for k in gone if k not in placed and not any(
            k in deps for other, deps in gone.items() if other not in placed and other != k))
        for key in free or sorted(k for k in gone if k not in placed)[:1]:
            ordered.append(key + (gone[key],))
            placed.add(key)
    return ordered


def repository_manifest(name, spec, namespace=FLUX_NAMESPACE):
    body = {"url": spec["url"], "interval": spec.get("interval") or REPOSITORY_INTERVAL}
    if spec.get("type") == "oci":
        body["type"] = "oci"
    return {"apiVersion": SOURCE_API_VERSION, "kind": "HelmRepository",
            "metadata": {"name": name, "namespace": namespace, "labels": _labels()}, "spec": body}


def release_manifest(entry, namespaces, helm_wait=True, flux_namespace=FLUX_NAMESPACE):
    """A HelmRelease in its target namespace; namespaces: release name -> namespace (for dependsOn)."""
    crds = entry.get("crds", DEFAULT_CRD_POLICY)
    spec = {
        "interval": entry.get("interval") or RELEASE_INTERVAL,
        "chart": {"spec": {"chart": entry["chart"], "version": str(entry["version"]),
                           "sourceRef": {"kind": "HelmRepository", "name": entry["repository"],
                                         "namespace": flux_namespace}}},
        "install": {"crds": crds},
        "upgrade": {"crds": crds},
    }
    if not helm_wait:
        spec["install"]["disableWait"] = True
        spec["upgrade"]["disableWait"] = True
    if entry.get("timeout"):
        spec["timeout"] = entry["timeout"]
    if entry.get("depends_on"):
        spec["dependsOn"] = [{"name": dep, "namespace": namespaces[dep]} for dep in entry["depends_on"]]
    if entry.get("values"):
        spec["values"] = plain_copy(entry["values"])
    return {"apiVersion": HELM_API_VERSION, "kind": "HelmRelease",
            "metadata": {"name": entry["name"], "namespace": entry["namespace"], "labels": _labels()},
            "spec": spec}


def manifests(releases, repositories, helm_wait=True, flux_namespace=FLUX_NAMESPACE):
    """Namespaces, the HelmRepositories the releases use, and the HelmReleases of one cluster."""
    namespaces = dict((e["name"], e["namespace"]) for e in releases)
    used = sorted(set(e["repository"] for e in releases))
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": _labels()}}
               for ns in sorted(set(namespaces.values()))]
    objects += [repository_manifest(name, repositories[name], flux_namespace) for name in used]
    objects += [release_manifest(entry, namespaces, helm_wait, flux_namespace) for entry in releases]
    return objects


def helm_chart_name(release):
    """The HelmChart helm-controller makes for a HelmRelease: <namespace>-<name> in the source's namespace."""
    meta = release["metadata"]
    source = release["spec"]["chart"]["spec"]["sourceRef"]
    return source.get("namespace") or meta["namespace"], "%s-%s" % (meta["namespace"], meta["name"])


def installed_version(live):
    """The chart version of the release Helm last deployed (status.history, newest first)."""
    history = ((live or {}).get("status") or {}).get("history") or []
    return history[0].get("chartVersion") if history else None


def version_changes(desired_releases, live_by_name):
    """Releases whose pinned version changes: [{name, namespace, chart, from, to, installed}]."""
    changes = []
    for release in desired_releases:
        live = live_by_name.get((release["metadata"]["namespace"], release["metadata"]["name"]))
        if live is None:
            continue
        before = (((live.get("spec") or {}).get("chart") or {}).get("spec") or {}).get("version")
        after = release["spec"]["chart"]["spec"]["version"]
        if before != after:
            changes.append({"name": release["metadata"]["name"], "namespace": release["metadata"]["namespace"],
                            "chart": release["spec"]["chart"]["spec"]["chart"], "from": before, "to": after,
                            "installed": installed_version(live)})
    return changes


def _version_tuple(version):
    """(major, minor, patch, (release?, prerelease ids)) of an exact version: a release sorts after its prereleases."""
    core, unused, rest = str(version).lstrip("v").split("+", 1)[0].partition("-")
    major, minor, patch = [int(n) for n in core.split(".")]
    ids = tuple((0, int(p)) if p.isdigit() else (1, p) for p in rest.split(".")) if rest else ()
    return (major, minor, patch, (0 if rest else 1, ids))


def _bound(numbers):
    """The lowest version of a core version, below its prereleases."""
    numbers = list(numbers) + [0] * (3 - len(numbers))
    return (numbers[0], numbers[1], numbers[2], (0, ()))


def _term_matches(version, term):
    """One Masterminds/semver comparison; a partial or wildcard version (1.2, 1.x) is the range it spans."""
    match = _CONSTRAINT_TERM.match(term.strip())
    operator = match.group(1) or "="
    fixed = []
    for part in (match.group(2), match.group(4), match.group(6)):
        if part is None or part in ("x", "X", "*"):
            break
        fixed.append(int(part))
    v = _version_tuple(version)
    if len(fixed) == 3:
        exact = _version_tuple("%d.%d.%d%s" % tuple(fixed + [match.group(7) or ""]))
        low, high = exact, _bound(fixed[:2] + [fixed[2] + 1])
    else:
        exact = None
        low = _bound(fixed)
        high = _bound(fixed[:-1] + [fixed[-1] + 1]) if fixed else None
    if operator in ("~", "~>") and len(fixed) >= 2:  # patch-level changes
        high = _bound([fixed[0], fixed[1] + 1])
    elif operator == "^" and fixed:  # changes that keep the left-most non-zero part
        index = next((i for i, n in enumerate(fixed) if n), len(fixed) - 1)
        high = _bound(fixed[:index] + [fixed[index] + 1])
    in_range = v >= low and (high is None or v < high)
    if operator == "=":
        return v == exact if exact else in_range
    if operator in ("~", "~>", "^"):
        return in_range
    if operator == "!=":
        return v != exact if exact else not in_range
    if operator == ">":
        return v > exact if exact else high is not None and v >= high
    if operator == ">=":
        return v >= low
    if operator == "<":
        return v < low
    return v <= exact if exact else high is None or v < high  # <= and =<


def satisfies(version, constraint):
    """Whether an exact version meets a constraint in _is_version_constraint's syntax (|| of ,-joined terms,
    or a hyphen range), as Masterminds/semver decides it for release versions."""
    for alternative in str(constraint).split("||"):
        if " - " in alternative:
            low, high = [t.strip() for t in alternative.split(" - ")]
            terms = [">=" + low, "<=" + high]
        else:
            terms = [t for t in re.split(r"\s*,\s*|\s+(?![\d vxX*])", alternative.strip()) if t]
        if terms and all(_term_matches(version, t) for t in terms):
            return True
    return False


def upgrade_problems(changes, entries):
    """A version change whose entry's upgrade_from the installed chart version does not meet: a chart that cannot
    move from it in one step (refused before any write)."""
    by_release = dict(((e["namespace"], e["name"]), e) for e in entries)
    problems = []
    for change in changes:
        entry = by_release.get((change["namespace"], change["name"])) or {}
        constraint = entry.get("upgrade_from")
        installed = change.get("installed")
        if constraint and installed and is_exact_version(installed) and not satisfies(installed, constraint):
            problems.append(problem("operators.%s.upgrade_from" % change["name"],
                                    "chart %s %s cannot move to %s in one step (upgrade_from %s): pin a version "
                                    "between them first" % (change["chart"], installed, change["to"], constraint)))
    return problems


def shoot_flux_extension(settings):
    """The Shoot spec.extensions[] entry that makes Gardener install Flux in the Shoot."""
    flux = {"namespace": (settings or {}).get("namespace") or FLUX_NAMESPACE}
    for key in ("version", "registry"):
        if (settings or {}).get(key):
            flux[key] = str(settings[key])
    return {"type": SHOOT_FLUX_EXTENSION,
            "providerConfig": {"apiVersion": FLUX_CONFIG_API_VERSION, "kind": FLUX_CONFIG_KIND, "flux": flux}}


def waiting_behind(release, releases):
    """Names of the releases that depend on this one, directly or through others (dependsOn order)."""
    name = release["metadata"]["name"]
    deps = dict((r["metadata"]["name"], [d["name"] for d in r["spec"].get("dependsOn") or []]) for r in releases)
    behind, changed = set(), True
    while changed:
        changed = False
        for other, needs in deps.items():
            if other not in behind and (name in needs or behind & set(needs)):
                behind.add(other)
                changed = True
    return [r["metadata"]["name"] for r in releases if r["metadata"]["name"] in behind]

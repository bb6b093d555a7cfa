# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack release of a cluster and the steps that move it to the next one, pure logic.

A release is named YEAR.N, two a year (2025.2, then 2026.1), as upstream's ControlPlane names it
(spec.openStackRelease, pattern ^\\d{4}\\.[12]$). Seed 003's service CRs run the projects' versions as
image tags (Keystone 28.0.0 is 2025.2), so TAGS holds, per release the collection knows, the tag of each
service; a service's release is read back from the tag it runs.

``plan(tags, target)`` takes the tag each service runs now ({service: tag}) and the release the cluster
is to run. It refuses, before anything is written, a target it does not know, a tag of no known release,
a downgrade and a skip (upstream's operators migrate databases one release at a time and never back).
Its steps follow seed 003's dependency phases (region/dependency_graph.PHASES): identity, then core, then
compute; each step names the services it moves, from which tag to which. A service already on the target
is not in any step, so a plan made again after some steps ran starts at the first step left.

No Kubernetes client, no Ansible: unit-tested on its own.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.dependency_graph import PHASES

RELEASE = re.compile(r"^(\d{4})\.([12])$")
# The image tag each service moves to per release: 2025.2 is seed 003's service CRs; later releases are the
# projects' first version of that series (a project's major version names its series: keystone 29.x is 2026.1).
TAGS = {
    "2025.2": {"keystone": "28.0.0", "glance": "31.0.0", "placement": "14.0.0", "nova": "32.1.0",
               "neutron": "27.0.1", "cinder": "27.0.0"},
    "2026.1": {"keystone": "29.0.0", "glance": "32.0.0", "placement": "15.0.0", "nova": "33.0.0",
               "neutron": "28.0.0", "cinder": "28.0.0"},
    "2026.2": {"keystone": "30.0.0", "glance": "33.0.0", "placement": "16.0.0", "nova": "34.0.0",
               "neutron": "29.0.0", "cinder": "29.0.0"},
}
# The services a release moves, in seed 003's phase order, and the phases that hold them: a move's steps.
SERVICES = tuple(c for phase in PHASES for c in phase["components"] if c in TAGS[max(TAGS)])
PHASE_NAMES = tuple(phase["name"] for phase in PHASES if set(phase["components"]) & set(SERVICES))


def parse(release):
    """(year, half) of a release name; None when it is not YEAR.1 or YEAR.2."""
    match = RELEASE.match(str(release or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


def successor(release):
    """The release after `release` (2025.2 -> 2026.1)."""
    year, half = parse(release)
    return "%d.%d" % ((year, 2) if half == 1 else (year + 1, 1))


def _major(tag):
    head = str(tag or "").split(".", 1)[0]
    return head if head.isdigit() else None


def release_of(service, tag):
    """The known release whose series `tag` belongs to (the same major version: 28.0.2 is 2025.2), else None."""
    for release, tags in TAGS.items():
        if _major(tag) is not None and _major(tags.get(service)) == _major(tag):
            return release
    return None


def plan(tags, target, subject=None):
    """{"to": target, "from": {service: release}, "steps": [{"phase", "services": {service: {"from", "to"}}}]}.

    tags: {service: the image tag it runs}, for the services of TAGS the cluster has; others are ignored.
    InputError names every problem at once: an unknown target, a tag of no known release, a downgrade,
    a skip (both releases named)."""
    if parse(target) is None:
        raise InputError([problem("release", "%r is no OpenStack release (YEAR.1 or YEAR.2, e.g. 2026.1)" % (target,),
                                  subject)])
    if target not in TAGS:
        raise InputError([problem("release", "%s is not a release this collection knows (%s)"
                                  % (target, ", ".join(sorted(TAGS))), subject)])
    problems, current = [], {}
    for service in sorted(set(tags) & set(TAGS[target])):
        field = "services.%s.image.tag" % service
        release = release_of(service, tags[service])
        if release is None:
            problems.append(problem(field, "%s runs %r, the tag of no release this collection knows (%s)"
                                    % (service, tags[service], ", ".join(sorted(TAGS))), subject))
        elif parse(release) > parse(target):
            problems.append(problem(field, "%s runs %s; a downgrade to %s is not possible (its database migrations "
                                    "are not reversible)" % (service, release, target), subject))
        elif release != target and successor(release) != target:
            problems.append(problem(field, "%s runs %s; %s skips %s: move one release at a time"
                                    % (service, release, target, successor(release)), subject))
        else:
            current[service] = release
    if problems:
        raise InputError(problems)
    steps = []
    for phase in PHASES:
        moving = dict((service, {"from": tags[service], "to": TAGS[target][service]})
                      for service in phase["components"]
                      if current.get(service) not in (None, target))
        if moving:
            steps.append({"phase": phase["name"], "services": moving})
    return {"to": target, "from": current, "steps": steps}


# Upstream's service operators (internal/common/database/upgrade.go): the DatabaseReady reasons that end an
# upgrade until someone acts (a fixed image, a reverted tag); any other reason while it runs is progress.
UPGRADE_FAILURES = ("ExpandFailed", "MigrateFailed", "ContractFailed", "UpgradePathInvalid", "DowngradeNotSupported",
                    "VersionParseError", "UpgradeTargetChanged")
DONE, RUNNING, FAILED = "done", "running", "failed"


def _condition(obj, ctype):
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == ctype:
            return condition
    return {}


def running_tag(obj):
    """The tag a service CR runs: status.installedRelease once its operator wrote it, else spec.image.tag."""
    return (obj.get("status") or {}).get("installedRelease") or ((obj.get("spec") or {}).get("image") or {}).get("tag")


def rollout(obj, tag):
    """(DONE | RUNNING | FAILED, text) of a service CR moving to image tag `tag`.

    Done: installedRelease is the tag, no upgradePhase, Ready True for the CR's generation (upstream writes
    observedGeneration on every status write, so only installedRelease says the upgrade finished).
    Failed: DatabaseReady or Ready carries one of UPGRADE_FAILURES."""
    meta, status = obj.get("metadata") or {}, obj.get("status") or {}
    ready, database = _condition(obj, "Ready"), _condition(obj, "DatabaseReady")
    for condition in (database, ready):
        if condition.get("status") == "False" and condition.get("reason") in UPGRADE_FAILURES:
            return FAILED, "%s: %s" % (condition["reason"], condition.get("message") or "")
    current = (status.get("observedGeneration") or 0) >= (meta.get("generation") or 0)
    if status.get("installedRelease") == tag and not status.get("upgradePhase") and current \
            and ready.get("status") == "True":
        return DONE, "runs %s" % tag
    if status.get("upgradePhase"):
        return RUNNING, "%s %s -> %s" % (status["upgradePhase"], status.get("installedRelease"), tag)
    why = database if database.get("status") == "False" else ready
    if not why:
        return RUNNING, "waiting for its operator"
    return RUNNING, "%s (%s)" % (why.get("reason"), why.get("message") or "")


def services_section(control_plane):
    """Where the ControlPlane keeps its services: spec.services (seed 003, the region's) or spec.openstack (the
    tenants' composition, seed 002); an image written to the other one would be a second, partial section."""
    spec = control_plane.get("spec") or {}
    return "openstack" if "services" not in spec and "openstack" in spec else "services"


def written_tags(control_plane):
    """{service: tag} of the image tags the ControlPlane names (spec.<services section>.<service>.image.tag)."""
    services = (control_plane.get("spec") or {}).get(services_section(control_plane)) or {}
    return dict((s, ((services.get(s) or {}).get("image") or {}).get("tag")) for s in SERVICES)


def release_manifest(control_plane, images):
    """The ControlPlane's image fields under the release's field manager: {service: {repository, tag}}.

    It carries every service's image, moved or not: a server-side apply drops the fields its manager owned
    and no longer sends."""
    meta = control_plane["metadata"]
    return {"apiVersion": control_plane["apiVersion"], "kind": control_plane["kind"],
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
            "spec": {services_section(control_plane): dict((service, {"image": dict(image)})
                                                           for service, image in sorted(images.items()))}}


def plan_lines(result, subject=None):
    """The plan as text, one line per step (each starting with subject when given)."""
    prefix = "%s: " % subject if subject else ""
    if not result["steps"]:
        return ["%severy service runs %s: nothing to move" % (prefix, result["to"])]
    return ["%sstep %d (%s): %s" % (prefix, PHASE_NAMES.index(step["phase"]) + 1, step["phase"], ", ".join(
        "%s %s -> %s" % (service, move["from"], move["to"]) for service, move in sorted(step["services"].items())))
        for step in result["steps"]]

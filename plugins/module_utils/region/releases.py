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
# The image tag of each service per release. 2025.2: seed 003's service CRs; 2026.1: the next major
# version of each project (upstream's releases/2026.1/source-refs.yaml for keystone, glance, placement).
TAGS = {
    "2025.2": {"keystone": "28.0.0", "glance": "31.0.0", "placement": "14.0.0", "nova": "32.1.0",
               "neutron": "27.0.1", "cinder": "27.0.0"},
    "2026.1": {"keystone": "29.0.0", "glance": "32.0.0", "placement": "15.0.0", "nova": "33.0.0",
               "neutron": "28.0.0", "cinder": "28.0.0"},
}


def parse(release):
    """(year, half) of a release name; None when it is not YEAR.1 or YEAR.2."""
    match = RELEASE.match(str(release or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


def successor(release):
    """The release after `release` (2025.2 -> 2026.1)."""
    year, half = parse(release)
    return "%d.%d" % ((year, 2) if half == 1 else (year + 1, 1))


def release_of(service, tag):
    """The known release whose tag of `service` is `tag`, else None."""
    for release, tags in TAGS.items():
        if tags.get(service) == tag:
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
                      if service in current and tags[service] != TAGS[target][service])
        if moving:
            steps.append({"phase": phase["name"], "services": moving})
    return {"to": target, "from": current, "steps": steps}

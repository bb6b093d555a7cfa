# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the control_plane_health module reads from a cluster: ControlPlanes and the CRs made of them.

The client side of region.control_plane_health: one LIST of ControlPlanes (or one GET), then one
LIST per kind of the enabled components - in the ControlPlane's namespace, or across namespaces
when several ControlPlanes are judged - and the engine's readiness verdict on each object.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming


def control_planes(client, namespace=None, name=None):
    """The ControlPlanes asked for: one by name (None when it does not exist), a namespace's, or all."""
    rtype = client.resource(naming.CONTROL_PLANE_API_VERSION, naming.CONTROL_PLANE_KIND)
    if name:
        found = client.get(rtype, name, namespace)
        if found:
            found.setdefault("apiVersion", rtype.api_version)
            found.setdefault("kind", rtype.kind)
        return found
    items = client.list(rtype, namespace or None)
    return sorted(items, key=lambda cp: (cp["metadata"].get("namespace") or "", cp["metadata"]["name"]))


def live_objects(client, planes):
    """{(apiVersion, kind): [objects] or None when not served}, one LIST per kind the ControlPlanes enable."""
    wanted = set()
    for cp in planes:
        wanted.update(name for name, on in health.enabled_components(cp).items() if on)
    namespaces = set(cp["metadata"].get("namespace") for cp in planes)
    scope = namespaces.pop() if len(namespaces) == 1 else None
    objects = {}
    for api_version, kind in health.kinds_for(wanted):
        try:
            rtype = client.resource(api_version, kind)
        except KubeError as exc:
            if exc.status != 404:
                raise
            objects[(api_version, kind)] = None
            continue
        objects[(api_version, kind)] = client.list(rtype, scope)
    return objects


def reports(client, namespace, name=None, through=None):
    """One report per ControlPlane asked for (a missing named one gets a missing report)."""
    found = control_planes(client, namespace, name)
    if name:
        if found is None:
            return [health.missing_report(namespace, name, through)]
        planes = [found]
    else:
        planes = found
    objects = live_objects(client, planes)
    return [health.build_report(cp, objects, evaluate, through) for cp in planes]


def await_health(client, namespace, name, through, timeout, sleep, progress=None):
    """Reports once every ControlPlane is ready through that phase; WaitError on a terminal verdict or the timeout.

    progress: an optional common.progress.Reporter, offered health.progress_line each round.
    """
    def attempt():
        found = reports(client, namespace, name, through)
        failed = [r for r in found if r["failed"]]
        if failed:
            raise WaitError(health.failure_message(failed), found)
        offer(progress, lambda: health.progress_line(found))
        return bool(found) and all(r["ready"] for r in found), found

    done, found = poll(attempt, timeout, sleep)
    if not done:
        if not found:
            raise WaitError("no ControlPlane in %s after %ss" % (
                "namespace %s" % namespace if namespace else "any namespace", timeout), found)
        raise WaitError(health.failure_message(found, timeout), found)
    return found

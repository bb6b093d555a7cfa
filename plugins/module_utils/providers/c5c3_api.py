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

import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import collection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_rotation
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import releases

# The field manager of the ControlPlane's image tags: the release steps own them, phase 4 never sends them.
RELEASE_FIELD_MANAGER = "c5c3.cobaltcore.release"


# The options of the modules that act on OpenStack clusters: ControlPlanes by name, tenants by claim name.
CLUSTER_OPTIONS = dict(
    control_planes=dict(type="list", elements="dict", default=[], options=dict(
        namespace=dict(type="str", required=True),
        name=dict(type="str", required=True),
    )),
    tenants=dict(type="list", elements="str", default=[]),
)


def asked_control_planes(params):
    """[{namespace, name}] of CLUSTER_OPTIONS: the ControlPlanes given, then the tenants' (openstack-<n>/<n>)."""
    return params["control_planes"] + [{"namespace": naming.tenant_namespace(name),
                                        "name": naming.control_plane_name(name)} for name in params["tenants"]]


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


def live_objects(client, planes, components=None):
    """{(apiVersion, kind): [objects] or None when not served}, one LIST per kind the ControlPlanes enable
    (of these components only, when given)."""
    wanted = set()
    for cp in planes:
        wanted.update(name for name, on in health.enabled_components(cp).items()
                      if on and (components is None or name in components))
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


def release_services(client, control_plane, services=None):
    """{service: its CR} for these services of the release table (default: all) that the ControlPlane enables
    and owns; one LIST per kind, in the ControlPlane's namespace."""
    objects = live_objects(client, [control_plane], releases.SERVICES if services is None else services)
    found = {}
    for service in releases.SERVICES:
        for api_version, kind in health.COMPONENT_KINDS[service]:
            for obj in objects.get((api_version, kind)) or []:
                if health.owned_by(obj, control_plane):
                    found[service] = dict(obj, apiVersion=api_version, kind=kind)
    return found


def subject_of(control_plane):
    meta = control_plane["metadata"]
    return "%s/%s" % (meta.get("namespace"), meta["name"])


def _await_step(client, batch, phase, target, timeout, sleep, progress):
    """Until each service of the batch's steps runs its new tag; WaitError on a terminal reason or the timeout.

    batch: [(ControlPlane, step)], the clusters moving this phase."""
    number = releases.PHASE_NAMES.index(phase) + 1

    def attempt():
        verdicts = {}
        for control_plane, step in batch:
            moving = sorted(step["services"])
            live = release_services(client, control_plane, moving)
            for service in moving:
                verdicts[(subject_of(control_plane), service)] = releases.rollout(
                    live[service], step["services"][service]["to"]) if service in live \
                    else (releases.RUNNING, "its CR is gone")
        failed = ["%s %s: %s" % (cp, s, v[1]) for (cp, s), v in sorted(verdicts.items()) if v[0] == releases.FAILED]
        if failed:
            raise WaitError("step %d (%s) of the move to %s failed, later steps were not started: %s"
                            % (number, phase, target, "; ".join(failed)), [])
        offer(progress, lambda: "step %d (%s): %s" % (number, phase, ", ".join(
            "%s %s %s" % (cp, s, v[1]) for (cp, s), v in sorted(verdicts.items()))))
        return all(v[0] == releases.DONE for v in verdicts.values()), verdicts

    finished, verdicts = poll(attempt, timeout, sleep)
    if not finished:
        raise WaitError("step %d (%s) of the move to %s did not finish within %ss, later steps were not started: %s"
                        % (number, phase, target, timeout, "; ".join(
                            "%s %s: %s" % (cp, s, v[1]) for (cp, s), v in sorted(verdicts.items())
                            if v[0] != releases.DONE)), [])


def move_release(client, moves, target, timeout, sleep, progress=None, step_done=None):
    """Applies the plans' steps phase by phase: in each, the moving services' image tags of every cluster
    moving in it, then a wait until each runs its new tag; no later phase is written before. Returns one
    entry per cluster and step ({control_plane, phase, services, changed, seconds}); WaitError names the
    step, each failed or late service and its cluster.

    moves: [(ControlPlane, {service: CR} as release_services read them, plan)].
    step_done: called with each finished entry (the module publishes progress that way)."""
    rtype = client.resource(naming.CONTROL_PLANE_API_VERSION, naming.CONTROL_PLANE_KIND)
    images, planes = [], []
    for control_plane, services, unused_plan in moves:
        images.append(dict((s, {"repository": ((o.get("spec") or {}).get("image") or {}).get("repository")
                                or "ghcr.io/c5c3/%s" % s, "tag": releases.running_tag(o)})
                           for s, o in services.items()))
        planes.append(control_plane)
    done = []
    for phase in releases.PHASE_NAMES:
        started = time.time()
        batch, entries = [], []
        for index, (unused_cp, unused_services, plan) in enumerate(moves):
            for step in [s for s in plan["steps"] if s["phase"] == phase]:
                for service, move in step["services"].items():
                    images[index][service]["tag"] = move["to"]
                written = releases.written_tags(planes[index])
                planes[index] = client.server_side_apply(
                    rtype, releases.release_manifest(planes[index], images[index]), RELEASE_FIELD_MANAGER, force=True)
                batch.append((planes[index], step))
                entries.append({"control_plane": subject_of(planes[index]), "phase": phase,
                                "services": step["services"],
                                "changed": any(written[s] != m["to"] for s, m in step["services"].items())})
        if not batch:
            continue
        _await_step(client, batch, phase, target, timeout, sleep, progress)
        for entry in entries:
            entry["seconds"] = round(time.time() - started, 1)
            done.append(entry)
            if step_done:
                step_done(entry)
    return done


def keystone_of(client, control_plane):
    """The Keystone CR the ControlPlane owns, or None."""
    return release_services(client, control_plane, ["keystone"]).get("keystone")


def rotation_states(client, rotations):
    """{job name: (state, detail)} of each rotation ({namespace, name (the Keystone's), kind, job}); per namespace one LIST of
    the keystones' Secrets (metadata only: no key leaves the API server), one of their Events, one GET per Job."""
    secrets_type = client.resource("v1", "Secret")
    events_type = client.resource("v1", "Event")
    jobs_type = client.resource("batch/v1", "Job")
    secrets, events = {}, {}
    for namespace in sorted(set(r["namespace"] for r in rotations)):
        secrets[namespace] = dict((s["metadata"]["name"], s["metadata"]) for s in client.list(
            secrets_type, namespace, label_selector="app.kubernetes.io/name=keystone", metadata_only=True))
        events[namespace] = client.list(events_type, namespace, field_selector="involvedObject.kind=Keystone")
    states = {}
    for rotation in rotations:
        namespace, keystone, kind = rotation["namespace"], rotation["name"], rotation["kind"]
        job = client.get(jobs_type, rotation["job"], namespace)
        mine = [e for e in events[namespace] if (e.get("involvedObject") or {}).get("name") == keystone]
        states[rotation["job"]] = key_rotation.rotation_state(
            job, secrets[namespace].get(key_rotation.keys_secret(keystone, kind)), mine,
            key_rotation.staging_secret(keystone, kind))
    return states


def rotate_keys(client, rotations, rotation_id, timeout, sleep, progress=None):
    """Starts the Job of each rotation not started yet (from its CronJob), then waits until every rotation is
    done; WaitError names each failed, refused or late one. Returns the states as rotation_states."""
    jobs_type = client.resource("batch/v1", "Job")
    for rotation in rotations:
        if rotation["state"] == key_rotation.ABSENT:
            job = key_rotation.job_from_cronjob(rotation["cronjob"], rotation["job"], rotation_id)
            client.request("POST", jobs_type.path(rotation["namespace"]), body=job,
                           query={"fieldManager": collection.NAME}, allow=(409,))

    def attempt():
        states = rotation_states(client, rotations)
        failed = ["%s: %s" % (job, detail) for job, (state, detail) in sorted(states.items())
                  if state == key_rotation.FAILED]
        if failed:
            raise WaitError("key rotation %s failed: %s" % (rotation_id, "; ".join(failed)), [])
        offer(progress, lambda: "key rotation %s: %s" % (rotation_id, ", ".join(
            "%s %s" % (job, state if state == key_rotation.DONE else detail)
            for job, (state, detail) in sorted(states.items()))))
        return all(state == key_rotation.DONE for state, unused in states.values()), states

    finished, states = poll(attempt, timeout, sleep)
    if not finished:
        raise WaitError("key rotation %s did not finish within %ss: %s" % (rotation_id, timeout, "; ".join(
            "%s: %s" % (job, detail) for job, (state, detail) in sorted(states.items())
            if state != key_rotation.DONE)), [])
    return states

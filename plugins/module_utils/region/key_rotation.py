# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keystone's fernet and credential key rotation on demand: the keystone-operator's names and verdicts.

Upstream's keystone-operator (c5c3/cobaltcore operators/keystone) keeps per Keystone CR and key kind a
production Secret <keystone>-<kind>-keys, a staging Secret <keystone>-<kind>-keys-rotation and a CronJob
<keystone>-<kind>-rotate. A rotation is a Job made from the CronJob's template (as `kubectl create job
--from=cronjob/...`): its pod rotates the keys and PATCHes them with the annotation
cobaltcore.c5c3.io/rotation-completed-at onto the staging Secret; the operator validates them, copies them
with that annotation onto the production Secret and deletes the staging Secret, or rejects them (Warning
event RotationRejected, or RotationAnnotationInvalid) and clears the staging Secret.

The collection names each on-demand Job after a rotation id, so the same id again finds its Job and does not
rotate twice. A rotation is done when its Job completed and the production Secret's completion time is not
older than the Job.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.conditions import condition, is_true
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps

KINDS = ("fernet", "credential")
COMPLETED_AT = "cobaltcore.c5c3.io/rotation-completed-at"
REJECTIONS = ("RotationRejected", "RotationAnnotationInvalid")
ROTATION_ID_LABEL = "cobaltcore.c5c3.io/rotation-id"
# A Job's name becomes its pods' label job-name: at most 63 characters.
MAX_JOB_NAME = 63
ROTATION_ID = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")

ABSENT, RUNNING, DONE, FAILED = "absent", "running", "done", "failed"


def keys_secret(keystone, kind):
    return "%s-%s-keys" % (keystone, kind)


def staging_secret(keystone, kind):
    return "%s-%s-keys-rotation" % (keystone, kind)


def cronjob_name(keystone, kind):
    return "%s-%s-rotate" % (keystone, kind)


def job_name(keystone, kind, rotation_id):
    return "%s-%s" % (cronjob_name(keystone, kind), rotation_id)


def rotation_id_problems(rotation_id):
    """A rotation id is a lowercase DNS-1123 label (it names Jobs, and the Secrets' annotation carries it)."""
    if ROTATION_ID.match(str(rotation_id or "")):
        return []
    return [problem("rotation_id", "%r is not a lowercase DNS-1123 label (letters, digits, '-'); it names the "
                    "rotation, and the same id again rotates nothing" % (rotation_id,))]


def input_problems(rotation_id, kinds, keystone_names):
    """Every problem of the input at once: the rotation id, the key kinds, and Job names that would be too long."""
    problems = rotation_id_problems(rotation_id)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        problems.append(problem("keys", "%s: give one or more of %s" % (
            "unknown %s" % ", ".join(map(str, unknown)) if unknown else "empty", ", ".join(KINDS))))
    if not problems:
        for keystone in keystone_names:
            for kind in kinds:
                name = job_name(keystone, kind, rotation_id)
                if len(name) > MAX_JOB_NAME:
                    problems.append(problem("rotation_id", "Job %s would have %d characters, at most %d are allowed"
                                            % (name, len(name), MAX_JOB_NAME)))
    return problems


def job_from_cronjob(cronjob, name, rotation_id):
    """The Job `kubectl create job --from=cronjob/<name>` makes, named name and labelled with the rotation id."""
    template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    meta = template.get("metadata") or {}
    annotations = dict(meta.get("annotations") or {}, **{"cronjob.kubernetes.io/instantiate": "manual"})
    labels = dict(meta.get("labels") or {}, **{ROTATION_ID_LABEL: rotation_id})
    cmeta = cronjob["metadata"]
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": cmeta["namespace"], "labels": labels, "annotations": annotations,
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": cmeta["name"],
                                          "uid": cmeta["uid"], "controller": True}]},
        "spec": template.get("spec") or {},
    }


def _true_condition(job, ctype):
    return condition(job, ctype) if is_true(job, ctype) else None


def refusals(events, staging_names, since):
    """"<reason>: <message>" of each refusal (RotationRejected, RotationAnnotationInvalid) of keys staged on one of
    staging_names that the operator reported at or after since (a datetime or an RFC 3339 time), oldest first."""
    since = timestamps.parse_datetime(since) if isinstance(since, str) else since
    found = []
    for event in sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or ""):
        when = timestamps.parse_datetime(event.get("lastTimestamp") or event.get("eventTime"))
        if (event.get("reason") in REJECTIONS and any(name in (event.get("message") or "") for name in staging_names)
                and when is not None and since is not None and when >= since):
            found.append("%s: %s" % (event["reason"], event.get("message")))
    return found


def rotation_state(job, keys_meta, events, staging_name):
    """(state, detail) of one rotation: ABSENT, RUNNING, DONE (detail: the completion time) or FAILED.

    job: the rotation's Job or None; keys_meta: the production Secret's metadata (or None); events: the
    Keystone CR's events; staging_name: the staging Secret the operator names in a rejection."""
    if job is None:
        return ABSENT, "no Job yet"
    started = timestamps.parse_datetime(job["metadata"].get("creationTimestamp"))
    failed = _true_condition(job, "Failed")
    if failed:
        return FAILED, "Job %s failed: %s: %s" % (job["metadata"]["name"], failed.get("reason"), failed.get("message"))
    refused = refusals(events, [staging_name], started)
    if refused:
        return FAILED, "the keystone-operator refused the rotation of Job %s: %s" % (job["metadata"]["name"], refused[0])
    completed = ((keys_meta or {}).get("annotations") or {}).get(COMPLETED_AT)
    applied = timestamps.parse_datetime(completed)
    complete = _true_condition(job, "Complete")
    if complete and applied is not None and started is not None and applied >= started:
        return DONE, completed
    status = job.get("status") or {}
    if complete:
        return RUNNING, "Job complete, waiting for the keystone-operator to apply the staged keys"
    detail = "Job running (%d active, %d failed pods)" % (status.get("active") or 0, status.get("failed") or 0)
    return RUNNING, detail

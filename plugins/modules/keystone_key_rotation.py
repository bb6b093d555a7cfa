#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: keystone_key_rotation
short_description: Rotate the Keystone fernet and credential keys of OpenStack clusters now
version_added: 0.6.0
description:
  - Finds the C(Keystone) CR each ControlPlane of O(control_planes) and O(tenants) owns, and for each kind of
    O(keys) the keystone-operator's rotation CronJob C(<keystone>-<kind>-rotate).
  - Starts one Job per Keystone and kind from the CronJob's template, as C(kubectl create job --from=cronjob/...)
    does, named C(<keystone>-<kind>-rotate-<rotation_id>); the keystone-operator then applies the keys the Job
    staged (C(<keystone>-<kind>-keys-rotation)) onto C(<keystone>-<kind>-keys).
  - Waits until every rotation is done - its Job complete and the production Secret's
    C(cobaltcore.c5c3.io/rotation-completed-at) not older than the Job. A Job that failed, or a rotation the
    keystone-operator refused (event C(RotationRejected) or C(RotationAnnotationInvalid)), fails the module naming
    it.
  - The same O(rotation_id) again finds its Jobs and rotates nothing (C(changed=false)); a run that stopped
    while waiting resumes waiting. The CronJob keeps its last successful Jobs only (upstream's default, 3), so an id
    whose Job was cleaned up rotates again.
  - Fernet keys rotate without failing a token - the staged key every Keystone already has becomes the primary
    key, and the old primary key still validates tokens until C(maxActiveKeys) rotations later.
  - Reads the Secrets' metadata only; no key leaves the API server. In check mode it returns the plan and
    writes nothing.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.openstack_clusters
  - c5c3.cobaltcore.progress
options:
  keys:
    description: The key kinds to rotate.
    type: list
    elements: str
    choices: [fernet, credential]
    default: [fernet, credential]
  rotation_id:
    description:
      - Names this rotation (a lowercase DNS-1123 label, for example a change ticket C(chg-4711)); each Job is
        named after it, so the same id again rotates nothing.
    type: str
    required: true
  wait_timeout:
    description: Seconds the rotations may take before the module fails naming the ones not done.
    type: int
    default: 600
  wait_sleep:
    description: Longest pause in seconds between two looks at the rotations.
    type: int
    default: 2
"""

EXAMPLES = r"""
- name: Rotate the region's Keystone fernet keys now (change chg-4711)
  c5c3.cobaltcore.keystone_key_rotation:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    control_planes:
      - {namespace: openstack, name: "{{ cobaltcore_region }}"}
    keys: [fernet]
    rotation_id: chg-4711

- name: Show which rotations the tenants' Keystones would start
  c5c3.cobaltcore.keystone_key_rotation:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    tenants: [acme, globex]
    rotation_id: "{{ rotation_id }}"
  check_mode: true
"""

RETURN = r"""
rotations:
  description:
    - One per Keystone and key kind - C(control_plane), C(keystone) (C(<namespace>/<name>)), C(kind), C(job), and
      C(state) (C(absent) before the run started it, C(running), C(done)) with C(detail) (for C(done), the time the
      keystone-operator applied the keys).
  returned: when every ControlPlane, Keystone and CronJob exists
  type: list
  elements: dict
lines:
  description: One line per rotation - the Keystone, the key kind, its state and its Job.
  returned: when every ControlPlane, Keystone and CronJob exists
  type: list
  elements: str
started:
  description: The Jobs this run created.
  returned: always
  type: list
  elements: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import c5c3_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_rotation


class KeystoneKeyRotationModule(KubeModule):
    argument_spec = dict(
        c5c3_api.CLUSTER_OPTIONS,
        keys=dict(type="list", elements="str", default=list(key_rotation.KINDS), choices=list(key_rotation.KINDS)),
        rotation_id=dict(type="str", required=True),
        wait_timeout=dict(type="int", default=600),
        wait_sleep=dict(type="int", default=2),
    )

    def run(self):
        params = self.params
        self.results["started"] = []
        asked = c5c3_api.asked_control_planes(params)
        if not asked:
            self.fail("no ControlPlane to rotate: give control_planes or tenants")
        problems = key_rotation.input_problems(params["rotation_id"], params["keys"], [])
        if problems:
            raise InputError(problems)
        rotations = self.rotations(asked)
        states = c5c3_api.rotation_states(self.client, rotations)
        failed = ["%s: %s" % (job, detail) for job, (state, detail) in sorted(states.items())
                  if state == key_rotation.FAILED]
        if failed:
            self.fail("key rotation %s failed before, nothing was started: %s; once the cause is fixed, rotate with "
                      "a new rotation_id" % (params["rotation_id"], "; ".join(failed)))
        for rotation in rotations:
            rotation["state"], rotation["detail"] = states[rotation["job"]]
        self.publish(rotations)
        absent = [r for r in rotations if r["state"] == key_rotation.ABSENT]
        self.results["changed"] = bool(absent)
        if self.check_mode or all(r["state"] == key_rotation.DONE for r in rotations):
            return
        self.results["started"] = [r["job"] for r in absent]
        states = c5c3_api.rotate_keys(self.client, rotations, params["rotation_id"], params["wait_timeout"],
                                      params["wait_sleep"], progress=self.progress)
        for rotation in rotations:
            rotation["state"], rotation["detail"] = states[rotation["job"]]
        self.publish(rotations)

    def rotations(self, asked):
        """One rotation per Keystone and kind; InputError naming every missing ControlPlane, Keystone and CronJob."""
        params = self.params
        problems, rotations = [], []
        for wanted in asked:
            subject = "%s/%s" % (wanted["namespace"], wanted["name"])
            control_plane = c5c3_api.control_planes(self.client, wanted["namespace"], wanted["name"])
            if control_plane is None:
                problems.append(problem("control_planes", "ControlPlane %s does not exist" % subject))
                continue
            keystone = c5c3_api.keystone_of(self.client, control_plane)
            if keystone is None:
                problems.append(problem("control_planes", "ControlPlane %s has no Keystone CR yet" % subject))
                continue
            namespace, name = keystone["metadata"]["namespace"], keystone["metadata"]["name"]
            problems.extend(key_rotation.input_problems(params["rotation_id"], params["keys"], [name]))
            for kind in params["keys"]:
                cronjob = self.client.get(self.client.resource("batch/v1", "CronJob"),
                                          key_rotation.cronjob_name(name, kind), namespace)
                if cronjob is None:
                    problems.append(problem("keys", "Keystone %s/%s has no CronJob %s: the keystone-operator has "
                                            "not configured its %s key rotation yet"
                                            % (namespace, name, key_rotation.cronjob_name(name, kind), kind)))
                    continue
                rotations.append({"control_plane": subject, "keystone": "%s/%s" % (namespace, name),
                                  "namespace": namespace, "name": name, "kind": kind, "cronjob": cronjob,
                                  "job": key_rotation.job_name(name, kind, params["rotation_id"])})
        if problems:
            raise InputError(problems)
        return rotations

    def publish(self, rotations):
        fields = ("control_plane", "keystone", "kind", "job", "state", "detail")
        self.results["rotations"] = [dict((k, r[k]) for k in fields) for r in rotations]
        self.results["lines"] = ["%s %s keys: %s (Job %s)" % (
            r["keystone"], r["kind"], "done, applied %s" % r["detail"] if r["state"] == key_rotation.DONE else r["state"],
            r["job"]) for r in rotations]


def main():
    KeystoneKeyRotationModule()()


if __name__ == "__main__":
    main()

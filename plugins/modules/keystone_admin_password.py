#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: keystone_admin_password
short_description: Rotate the Keystone admin password of OpenStack clusters
version_added: 0.6.0
description:
  - Finds the C(Keystone) CR each ControlPlane of O(control_planes) and O(tenants) owns and the Secret of its admin
    password (the CR's C(spec.bootstrap.adminPasswordSecretRef), key C(password) by default).
  - Writes a new random password (letters and digits) into that Secret over the version it read, with the
    annotation C(cobaltcore.c5c3.io/rotation-id) set to O(rotation_id); the keystone-operator then re-runs
    C(keystone-manage bootstrap), which gives the admin user the new password.
  - Waits until the Keystone accepts the new password, then checks that it refuses the old one. Keystone revokes
    the admin's tokens when its password changes; application credentials (K-ORC's) stay valid, and clients
    that authenticate again with them are not refused.
  - The same O(rotation_id) again writes nothing (C(changed=false)); a run that stopped after the write waits
    again.
  - Refuses, before any write, a Secret another controller owns - one the External Secrets Operator syncs from
    OpenBao (an C(ExternalSecret) of the same name) is rotated in OpenBao - and names every missing ControlPlane,
    Keystone and Secret.
  - No password appears in results, diffs, errors or C(-vvv) output. In check mode it returns the plan and writes
    nothing.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.openstack_clusters
  - c5c3.cobaltcore.progress
options:
  rotation_id:
    description: Names this rotation; the same id again rotates nothing.
    type: str
    required: true
  password_length:
    description: Length of the new password (at least 24, the keystone-operator's minimum).
    type: int
    default: 32
  auth_urls:
    description:
      - Keystone's URL per ControlPlane (C(<namespace>/<name>)) where this controller reaches it; default the
        Keystone CR's C(status.endpoint).
    type: dict
    default: {}
  keystone_validate_certs:
    description: Whether to verify the Keystone's TLS certificate.
    type: bool
    default: true
  keystone_ca_cert:
    description: CA bundle to verify the Keystone's certificate with.
    type: path
  wait_timeout:
    description: Seconds the Keystones may take to accept the new passwords.
    type: int
    default: 300
  wait_sleep:
    description: Longest pause in seconds between two attempts.
    type: int
    default: 2
"""

EXAMPLES = r"""
- name: Rotate the region's Keystone admin password (change chg-4711)
  c5c3.cobaltcore.keystone_admin_password:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    control_planes:
      - {namespace: openstack, name: "{{ cobaltcore_region }}"}
    rotation_id: chg-4711
"""

RETURN = r"""
rotations:
  description:
    - One per ControlPlane - C(control_plane), C(keystone), C(secret) (C(<namespace>/<name>) of the password's
      Secret), C(state) (C(planned), C(written), C(done)) and C(old_password_refused) (whether the Keystone refused
      the previous password afterwards; C(null) when this run did not know it).
  returned: when every ControlPlane, Keystone and Secret exists
  type: list
  elements: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

import base64
import json

from ansible.module_utils.urls import open_url
from ansible.module_utils.six.moves.urllib.error import HTTPError, URLError

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import generated_secret
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import c5c3_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import admin_password
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import key_rotation


class KeystoneAdminPasswordModule(KubeModule):
    argument_spec = dict(
        c5c3_api.CLUSTER_OPTIONS,
        rotation_id=dict(type="str", required=True),
        password_length=dict(type="int", default=32, no_log=False),
        auth_urls=dict(type="dict", default={}),
        keystone_validate_certs=dict(type="bool", default=True),
        keystone_ca_cert=dict(type="path"),
        wait_timeout=dict(type="int", default=300),
        wait_sleep=dict(type="int", default=2),
    )

    def run(self):
        params = self.params
        asked = c5c3_api.asked_control_planes(params)
        if not asked:
            self.fail("no ControlPlane to rotate: give control_planes or tenants")
        problems = key_rotation.rotation_id_problems(params["rotation_id"])
        if params["password_length"] < admin_password.MIN_LENGTH:
            problems.append(problem("password_length", "%d is shorter than %d, the keystone-operator's minimum"
                                    % (params["password_length"], admin_password.MIN_LENGTH)))
        if problems:
            raise InputError(problems)
        rotations = self.rotations(asked)
        self.publish(rotations)
        pending = [r for r in rotations if r["state"] == "planned"]
        self.results["changed"] = bool(pending)
        if self.check_mode:
            return
        secrets_type = self.client.resource("v1", "Secret")
        for rotation in pending:
            password = generated_secret.generate(params["password_length"])
            encoded = base64.b64encode(password.encode()).decode()
            self.hide(password, encoded)
            secret = admin_password.rotated_secret(rotation["object"], rotation["key"], encoded, params["rotation_id"])
            self.client.request("PUT", secrets_type.path(secret["metadata"]["namespace"], secret["metadata"]["name"]),
                                body=secret)
            rotation.update(state="written", new=password)
        self.await_passwords(rotations)
        for rotation in rotations:
            rotation["state"] = "done"
            if rotation.get("old") is not None:
                rotation["old_password_refused"] = self.authenticate(rotation, rotation["old"]) == 401
        self.publish(rotations)
        kept = [r["control_plane"] for r in rotations if r.get("old_password_refused") is False]
        if kept:
            self.fail("the Keystones of %s still accept the old admin password after the rotation" % ", ".join(kept))

    def rotations(self, asked):
        """One per ControlPlane with its Keystone, Secret and current password; InputError naming every problem."""
        secrets_type = self.client.resource("v1", "Secret")
        problems, rotations = [], []
        for wanted in asked:
            subject = "%s/%s" % (wanted["namespace"], wanted["name"])
            control_plane = c5c3_api.control_planes(self.client, wanted["namespace"], wanted["name"])
            keystone = control_plane and c5c3_api.keystone_of(self.client, control_plane)
            if keystone is None:
                problems.append(problem("control_planes", "%s %s %s" % (
                    "ControlPlane", subject, "does not exist" if control_plane is None else "has no Keystone CR yet")))
                continue
            namespace = keystone["metadata"]["namespace"]
            name, key = admin_password.secret_ref(keystone)
            secret = self.client.get(secrets_type, name, namespace) if name else None
            if secret is None:
                problems.append(problem("control_planes", "Keystone %s/%s: no admin password Secret %s/%s"
                                        % (namespace, keystone["metadata"]["name"], namespace, name)))
                continue
            if self.synced_by_eso(namespace, name):
                problems.append(problem("control_planes", "Secret %s/%s is synced by its ExternalSecret from OpenBao: "
                                        "rotate the admin password in OpenBao" % (namespace, name)))
                continue
            self.hide_secret_values([secret])
            raw = (secret.get("data") or {}).get(key)
            old = base64.b64decode(raw).decode() if raw else None
            written = admin_password.rotation_of(secret) == self.params["rotation_id"]
            rotations.append({
                "control_plane": subject, "keystone": "%s/%s" % (namespace, keystone["metadata"]["name"]),
                "secret": "%s/%s" % (namespace, name), "key": key, "object": secret, "cr": keystone,
                "user": admin_password.admin_user(keystone),
                "url": self.params["auth_urls"].get(subject) or (keystone.get("status") or {}).get("endpoint"),
                "state": "written" if written else "planned", "new": old if written else None,
                "old": None if written else old, "old_password_refused": None})
            if not rotations[-1]["url"]:
                problems.append(problem("auth_urls", "Keystone %s has no status.endpoint yet: give its URL"
                                        % rotations[-1]["keystone"]))
        if problems:
            raise InputError(problems)
        return rotations

    def synced_by_eso(self, namespace, name):
        try:
            rtype = self.client.resource("external-secrets.io/v1", "ExternalSecret")
        except KubeError:
            return False  # no External Secrets Operator on the cluster
        return self.client.get(rtype, name, namespace) is not None

    def authenticate(self, rotation, password):
        """HTTP status of a project-scoped token request as the admin with this password (0: unreachable)."""
        try:
            response = open_url(rotation["url"].rstrip("/") + "/auth/tokens", method="POST",
                                data=json.dumps(admin_password.token_request(rotation["user"], password)),
                                headers={"Content-Type": "application/json"}, timeout=15,
                                validate_certs=self.params["keystone_validate_certs"],
                                ca_path=self.params["keystone_ca_cert"])
            return response.getcode()
        except HTTPError as exc:
            return exc.code
        except (URLError, OSError):
            return 0

    def await_passwords(self, rotations):
        keystones_type = self.client.resource(rotations[0]["cr"]["apiVersion"], rotations[0]["cr"]["kind"])

        def attempt():
            waiting = []
            for rotation in rotations:
                if rotation.get("accepted"):
                    continue
                status = self.authenticate(rotation, rotation["new"])
                if status == 201:
                    rotation["accepted"] = True
                    continue
                namespace, name = rotation["keystone"].split("/", 1)
                condition = admin_password.bootstrap_condition(self.client.get(keystones_type, name, namespace))
                waiting.append("%s: Keystone answers %s; %s" % (rotation["keystone"], status or "nothing", condition))
            offer(self.progress, lambda: "admin password rotation %s: waiting for %s"
                  % (self.params["rotation_id"], "; ".join(waiting)))
            return not waiting, waiting

        done, waiting = poll(attempt, self.params["wait_timeout"], self.params["wait_sleep"])
        if not done:
            raise WaitError("the Keystones did not accept the new admin password within %ss (rotation %s): %s"
                            % (self.params["wait_timeout"], self.params["rotation_id"], "; ".join(waiting)), [])

    def publish(self, rotations):
        fields = ("control_plane", "keystone", "secret", "state", "old_password_refused")
        self.results["rotations"] = [dict((k, r[k]) for k in fields) for r in rotations]


def main():
    KeystoneAdminPasswordModule()()


if __name__ == "__main__":
    main()

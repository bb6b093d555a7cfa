#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: gardener_kubeconfig
short_description: Fetch short-lived admin kubeconfigs of Gardener Shoots
version_added: 0.2.0
description:
  - Requests an admin kubeconfig for each Shoot through the C(shoots/adminkubeconfig) subresource
    (an C(AdminKubeconfigRequest)); Gardener mints a short-lived client certificate and stores it nowhere.
  - Writes each kubeconfig to its O(shoots[].path) (mode 0600, directory 0700, replaced atomically),
    where later phases find it, or returns it with O(return_content).
  - A kubeconfig already at O(shoots[].path) is kept while its client certificate is valid for more than
    O(renew_before) seconds and it points at an address the Shoot advertises; otherwise it is renewed.
    A re-run inside that window therefore changes nothing.
  - The kubeconfigs' credentials (client keys, tokens) never appear in results, diffs or logs; with
    O(return_content) the module returns the kubeconfigs themselves, and only to a task with C(no_log).
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.gardener_project
attributes:
  check_mode:
    description: Reports which kubeconfigs would be fetched; requests and writes nothing.
    support: full
  diff_mode:
    description: Shows the expiry before and after, never the content.
    support: full
options:
  shoots:
    description: The Shoots and where their kubeconfigs go.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The Shoot.
        type: str
        required: true
      path:
        description: File to write the kubeconfig to; without it the kubeconfig is only returned (O(return_content)).
        type: path
  expiration_seconds:
    description: Lifetime of the requested credentials (Gardener accepts 600 and more, and caps it at its maximum, 24 hours by default).
    type: int
    default: 21600
  renew_before:
    description: Renew a kubeconfig whose certificate expires within this many seconds.
    type: int
    default: 3600
  return_content:
    description:
      - Return the kubeconfigs in RV(kubeconfigs), unmasked, for the tasks that follow.
      - The task must have C(no_log) set (the module fails before any request otherwise), so Ansible keeps
        the credentials out of its output and logs while the registered result holds them.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Admin kubeconfigs of the region's Shoots, where the later phases look for them
  c5c3.cobaltcore.gardener_kubeconfig:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    project: cobaltcore
    shoots:
      - name: hv-pool-a
        path: "{{ inventory_dir }}/.private/kubeconfig/hv-pool-a.yaml"

- name: A kubeconfig kept in memory only
  c5c3.cobaltcore.gardener_kubeconfig:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    project: cobaltcore
    shoots:
      - name: st-pool-a
    expiration_seconds: 600
    renew_before: 60
    return_content: true
  register: st_pool_a_access
  no_log: true

- name: Use it in the next task (kubernetes.core takes it as a dict)
  kubernetes.core.k8s_info:
    kubeconfig: "{{ st_pool_a_access.kubeconfigs['st-pool-a'] | from_yaml }}"
    kind: Node

- name: The collection's modules take the text itself too
  c5c3.cobaltcore.cluster_info:
    kubeconfig: "{{ st_pool_a_access.kubeconfigs['st-pool-a'] }}"
"""

RETURN = r"""
shoots:
  description: Per Shoot, where its kubeconfig is and until when it is valid.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The Shoot.
      type: str
    path:
      description: The kubeconfig file, if one was given.
      type: str
    server:
      description: The API server the kubeconfig points at.
      type: str
    expires:
      description: When its client certificate expires (ISO 8601), when known.
      type: str
    renewed:
      description: Whether this run fetched a new kubeconfig (or would, in check mode).
      type: bool
    reason:
      description: Why it was (or would be) fetched.
      type: str
kubeconfigs:
  description: The kubeconfigs (YAML text) by Shoot name, unmasked; the task has C(no_log).
  returned: when O(return_content) is true (in check mode only those that need no renewal)
  type: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

import os
import tempfile

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers.gardener_api import (
    PROJECT_KWARGS, PROJECT_OPTIONS, fetch_admin_kubeconfig, namespace_of)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule

MIN_EXPIRATION = 600


def write_private(path, content):
    """Write content to path with mode 0600, replacing it atomically; the directory gets 0700 when created."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o700)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".kubeconfig-")
    try:
        os.fchmod(handle, 0o600)
        with os.fdopen(handle, "w") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.rename(temporary, path)
    except Exception:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


class GardenerKubeconfigModule(KubeModule):
    argument_spec = dict(
        PROJECT_OPTIONS,
        shoots=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            path=dict(type="path"),
        )),
        expiration_seconds=dict(type="int", default=21600),
        renew_before=dict(type="int", default=3600),
        return_content=dict(type="bool", default=False),
    )
    module_kwargs = PROJECT_KWARGS

    def protect(self, text):
        """Mask a kubeconfig's credentials (not its server or names) in everything Ansible prints.

        Returned content stays unmasked, else the registered result would hold asterisks:
        the task's no_log keeps it out of the output then.
        """
        if not self.params["return_content"]:
            self.hide(*masking.kubeconfig_credentials(text))

    def run(self):
        if self.params["return_content"] and not self.ansible.no_log:
            raise InputError([problem("return_content", "returns the kubeconfigs' credentials, "
                                      "so the task must set no_log: true")])
        problems = []
        if self.params["expiration_seconds"] < MIN_EXPIRATION:
            problems.append(problem("expiration_seconds", "Gardener refuses less than %d seconds" % MIN_EXPIRATION))
        if not 0 <= self.params["renew_before"] < self.params["expiration_seconds"]:
            problems.append(problem("renew_before", "must be at least 0 and less than expiration_seconds"))
        for index, shoot in enumerate(self.params["shoots"]):
            if not shoot["path"] and not self.params["return_content"]:
                problems.append(problem("shoots[%d].path" % index, "needed unless return_content is true"))
        if problems:
            raise InputError(problems)
        namespace = namespace_of(self.client, self.params)
        self.rtype = self.client.resource(gardener.API_VERSION, "Shoot")
        self.contents = {}
        live = dict((s["metadata"]["name"], s) for s in self.client.list(self.rtype, namespace))
        self.results["shoots"] = [self.ensure(namespace, shoot, live.get(shoot["name"]))
                                  for shoot in self.params["shoots"]]
        if self.params["return_content"]:
            self.results["kubeconfigs"] = self.contents

    def ensure(self, namespace, shoot, live):
        entry = {"name": shoot["name"], "path": shoot["path"], "renewed": False}
        before = None
        if shoot["path"] and os.path.exists(shoot["path"]):
            with open(shoot["path"]) as stream:
                text = stream.read()
            self.protect(text)
            try:
                before = gardener.kubeconfig_facts(text)
            except InputError as error:
                entry["reason"] = "%s is no usable kubeconfig (%s)" % (shoot["path"], error)
            else:
                entry["reason"] = gardener.renewal_reason(before, live or {}, self.params["renew_before"])
            if not entry["reason"]:
                entry.update(server=before["server"], expires=before["expires"].isoformat())
                if self.params["return_content"]:
                    self.contents[shoot["name"]] = text
                return entry
        else:
            entry["reason"] = "no kubeconfig yet"
        entry["renewed"] = self.results["changed"] = True
        if live is None and not self.check_mode:
            raise KubeError("Shoot %s/%s does not exist: no kubeconfig can be fetched for it" % (namespace, shoot["name"]))
        if self.check_mode:
            return entry
        # An unusable answer is the server's fault (KubeError); earlier Shoots' files may be written already.
        text, expires = fetch_admin_kubeconfig(self.client, namespace, shoot["name"], self.params["expiration_seconds"])
        self.protect(text)
        try:
            after = gardener.kubeconfig_facts(text)
        except InputError as error:
            raise KubeError("Shoot %s/%s: the adminkubeconfig answer is unusable: %s"
                            % (namespace, shoot["name"], "; ".join(error.problems)))
        entry.update(server=after["server"], expires=after["expires"].isoformat() if after["expires"] else expires)
        if shoot["path"]:
            write_private(shoot["path"], text)
        if self.params["return_content"]:
            self.contents[shoot["name"]] = text
        if self.diff:
            header = "kubeconfig of Shoot %s" % shoot["name"]
            self.results.setdefault("diff", []).append({
                "before": {"expires": before["expires"].isoformat() if before and before["expires"] else None},
                "after": {"expires": entry["expires"]}, "before_header": header, "after_header": header})
        return entry


def main():
    GardenerKubeconfigModule()()


if __name__ == "__main__":
    main()

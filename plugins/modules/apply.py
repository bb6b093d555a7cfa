#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: apply
short_description: Server-side apply (or remove) many Kubernetes objects in one call
version_added: 0.1.0
description:
  - Applies a batch of manifests with server-side apply under one field manager, using one API
    client and per-group discovery for the whole batch.
  - CustomResourceDefinitions are applied first and waited for until C(Established), then Namespaces,
    then everything else.
  - An object is only sent when the manifest is not already part of the live object, or when this
    field manager owns fields the manifest no longer sets. A run that changes nothing makes no write
    request and reports C(changed=false).
  - Check mode sends the same requests as server dry-runs, so the API server still validates them.
  - Diff mode shows, per object, the fields this field manager sets or owned, before and after;
    C(managedFields) and other server bookkeeping are left out and Secret values are redacted.
  - Transient faults (connection errors, 409 outside apply, 429, 5xx) are retried with backoff.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.wait_options
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Sends the same requests as server-side dry runs; nothing is written.
    support: full
  diff_mode:
    description: Shows the fields this field manager sets or owned, before and after, Secret values redacted.
    support: full
options:
  definition:
    description:
      - One object, a list of objects, or a YAML string with one or more documents.
      - Templates can be passed as C("{{ lookup('ansible.builtin.template', 'x.yaml.j2') | from_yaml_all }}").
    type: raw
  src:
    description:
      - Paths of YAML files (one or more documents each) on the host the module runs on.
    type: list
    elements: path
  namespace:
    description:
      - Namespace for namespaced objects whose manifest names none.
    type: str
  state:
    description:
      - C(present) applies the objects, C(absent) deletes them.
    type: str
    choices: [present, absent]
    default: present
  force_conflicts:
    description:
      - Take over fields another field manager owns instead of failing with the conflict.
    type: bool
    default: false
  field_manager:
    description:
      - The server-side apply field manager.
    type: str
    default: c5c3.cobaltcore
  delete_propagation:
    description:
      - How dependents are deleted with C(state=absent).
    type: str
    choices: [Foreground, Background, Orphan]
    default: Foreground
notes:
  - Secrets given with C(stringData) are applied as C(data), so that a re-run can tell they are unchanged.
  - Put C(no_log) on tasks whose manifests carry secrets; the module itself never returns Secret values.
"""

EXAMPLES = r"""
- name: Apply a tenant's manifests to the control plane and wait for them
  c5c3.cobaltcore.apply:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    definition: "{{ tenant.control_plane }}"
    wait: true
    wait_timeout: 600

- name: Apply every manifest in two files, taking over conflicting fields
  c5c3.cobaltcore.apply:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    src:
      - files/crds.yaml
      - files/operators.yaml
    force_conflicts: true

- name: Remove a ConfigMap and wait until it is gone
  c5c3.cobaltcore.apply:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    state: absent
    wait: true
    definition:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: obsolete
        namespace: default
"""

RETURN = r"""
results:
  description: One entry per object, in apply order.
  returned: always
  type: list
  elements: dict
  contains:
    apiVersion:
      description: The object's apiVersion.
      type: str
    kind:
      description: The object's kind.
      type: str
    name:
      description: The object's name.
      type: str
    namespace:
      description: The object's namespace, null for cluster-scoped kinds.
      type: str
    result:
      description: C(created), C(configured), C(unchanged), C(deleted) or C(absent).
      type: str
    diff:
      description: With C(--diff), C(before) and C(after) of the fields this field manager sets or owned.
      type: dict
      returned: when diff mode is on and the object changes
summary:
  description: How many objects ended in each result.
  returned: always
  type: dict
  sample: {"created": 2, "unchanged": 198}
ready:
  description: With C(wait), the readiness of every object (see M(c5c3.cobaltcore.wait)).
  returned: when wait is true and not in check mode
  type: list
  elements: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
  sample: {"GET": 201}
waited_seconds:
  description: Seconds the call waited for objects that were not ready when it first looked (the operators' time).
  returned: when the call waited
  type: float
"""

try:
    import yaml
except ImportError:  # reported when a YAML string or file needs it
    yaml = None

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import normalize, read_ref_of, summary
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule, WAIT_CONDITION_SPEC
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter


def _documents(value, where):
    if value is None:
        return []
    if isinstance(value, str):
        if yaml is None:
            raise InputError([problem(where, "reading YAML needs the Python package PyYAML")])
        try:
            value = list(yaml.safe_load_all(value))
        except yaml.YAMLError as exc:
            # PyYAML's message quotes the offending line, which may hold a secret: give the place only.
            mark = getattr(exc, "problem_mark", None)
            place = " at line %d, column %d" % (mark.line + 1, mark.column + 1) if mark else ""
            raise InputError([problem(where, "not valid YAML%s" % place)])
    if isinstance(value, dict):
        value = [value]
    docs = []
    for item in value:
        if isinstance(item, dict) and str(item.get("kind")).endswith("List") and "items" in item:
            docs.extend(item["items"] or [])
        elif item is not None:
            docs.append(item)
    return docs


class ApplyModule(KubeModule):
    argument_spec = dict(
        definition=dict(type="raw"),
        src=dict(type="list", elements="path"),
        namespace=dict(type="str"),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        force_conflicts=dict(type="bool", default=False),
        field_manager=dict(type="str", default="c5c3.cobaltcore"),
        delete_propagation=dict(type="str", default="Foreground", choices=["Foreground", "Background", "Orphan"]),
        wait=dict(type="bool", default=False),
        wait_timeout=dict(type="int", default=300),
        wait_sleep=dict(type="int", default=2),
        wait_condition=dict(type="dict", options=WAIT_CONDITION_SPEC),
    )
    module_kwargs = dict(required_one_of=[("definition", "src")])

    @classmethod
    def argument_secrets(cls, params):
        """The Secret values of definition, masked before validation (which echoes the arguments when it fails)."""
        definition = params.get("definition")
        found = super(ApplyModule, cls).argument_secrets(params)
        try:
            return found | masking.secret_values(_documents(definition, "definition"))
        except (InputError, TypeError, AttributeError):
            # Text that cannot be searched for secrets is hidden as a whole.
            return found | (set([definition]) if isinstance(definition, str) and definition else set())

    def manifests(self):
        docs = _documents(self.params["definition"], "definition")
        for path in self.params["src"] or []:
            try:
                with open(path) as handle:
                    docs.extend(_documents(handle.read(), "src %s" % path))
            except (IOError, OSError) as exc:
                raise InputError([problem(path, "cannot be read: %s" % (exc.strerror or exc), "src")])
        self.hide_secret_values(docs)  # before anything can fail and echo the arguments
        objects = normalize(docs, self.params["namespace"])
        self.hide_secret_values(objects)
        return objects

    def run(self):
        objects = self.manifests()
        applier = self.applier(field_manager=self.params["field_manager"],
                               force_conflicts=self.params["force_conflicts"])
        absent = self.params["state"] == "absent"
        if absent:
            results = applier.remove(objects, self.params["delete_propagation"])
        else:
            results = applier.apply(objects)
        self.results.update(results=self.record(results), summary=summary(results))
        if self.params["wait"] and not self.check_mode:
            waiter = Waiter(self.client, condition=self.params["wait_condition"], sleep=self.params["wait_sleep"],
                            progress=self.progress)
            refs = [read_ref_of(obj) for obj in objects]
            self.results["ready"] = waiter.wait(refs, self.params["wait_timeout"], absent=absent)


def main():
    ApplyModule()()


if __name__ == "__main__":
    main()

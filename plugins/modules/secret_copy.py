#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: secret_copy
short_description: Copy keys of Secrets from one cluster to another without ever showing them
version_added: 0.6.0
description:
  - Reads each copy's C(source) Secret on the source cluster (the module's Kubernetes connection) and
    server-side applies its C(target) on the target cluster (O(target_kubeconfig)) with the data key or keys
    C(key), type C(Opaque) and the copy's C(labels) (see O(copies)); the keys of one copy go in one write. Phase 7
    copies Rook's CephClient Secret C(rook-ceph-client-openstack-<name>) (keys C(userID) and C(userKey)) of a storage
    pool to C(ceph-client-<name>) in the tenant namespace of the control-plane cluster.
  - A target whose keys already equal the source's is not written; when the source changes (Rook rotated the
    key), the next run writes the new value.
  - Every copy is checked first (input, then that each source Secret and key exists); any problem fails naming
    all of them, before anything is written.
  - The values are masked from the first moment they are read; results, diffs and errors carry only names.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
attributes:
  check_mode:
    description:
      - Reads both sides and sends the writes as server-side dry runs; nothing is written. A source that does not
        exist yet (Rook has not made the key) is reported as C(source missing) instead of failing.
    support: full
  diff_mode:
    description: The target Secrets' fields before and after, values redacted.
    support: full
options:
  target_kubeconfig:
    description: Kubeconfig of the target cluster (path or dict).
    type: raw
    required: true
  target_context:
    description: Context of O(target_kubeconfig); omitted, its current one.
    type: str
  copies:
    description:
      - What to copy; each item a dict with C(source) and C(target) (each C({namespace, name})), C(key) (the data
        key, the same on both sides, or a list of them) and optional C(labels) for the target. Other keys are
        ignored, so phase 7 passes its plan's entries as they are.
    type: list
    elements: dict
    required: true
  public_keys:
    description:
      - Data keys whose values are names, not secrets (Rook's C(userID)), so they are not masked in the output;
        every other value of a source Secret is.
    type: list
    elements: str
    default: []
  field_manager:
    description: The server-side apply field manager on the target.
    type: str
    default: c5c3.cobaltcore
"""

EXAMPLES = r"""
- name: Copy the tenants' Ceph users and keys of this storage pool to the control plane
  c5c3.cobaltcore.secret_copy:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    target_kubeconfig: "{{ hostvars['lab-control-plane'].cobaltcore_kubeconfig }}"
    copies:
      - source: {namespace: rook-ceph, name: rook-ceph-client-openstack-customer-a-prod}
        target: {namespace: openstack-customer-a-prod, name: ceph-client-customer-a-prod}
        key: [userID, userKey]
        labels: {c5c3.io/openstack-cluster-name: customer-a-prod}
    public_keys: [userID]
"""

RETURN = r"""
results:
  description: One entry per copy, names only.
  returned: always
  type: list
  elements: dict
  contains:
    source:
      description: C(<namespace>/<name>) of the source Secret.
      type: str
    target:
      description: C(<namespace>/<name>) of the target Secret.
      type: str
    result:
      description: C(created), C(configured) (the value changed), C(unchanged), or in check mode C(source missing).
      type: str
summary:
  description: How many copies ended in each result.
  returned: always
  type: dict
"""

import base64

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import Applier, summary
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule


def _ref(value, field, problems):
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str) and value.get(k) for k in ("namespace", "name")):
        problems.append(problem(field, "must be a mapping with namespace and name, got %r" % (value,)))
        return None
    return value["namespace"], value["name"]


def validate_copies(copies):
    """(source, target, keys, labels) of each copy, or InputError naming every bad field."""
    problems = []
    checked = []
    for index, copy in enumerate(copies):
        field = "copies[%d]" % index
        if not isinstance(copy, dict):
            problems.append(problem(field, "must be a mapping, got %r" % (copy,)))
            continue
        source = _ref(copy.get("source"), field + ".source", problems)
        target = _ref(copy.get("target"), field + ".target", problems)
        key = copy.get("key")
        keys = tuple(key) if isinstance(key, list) else (key,)
        if not keys or not all(isinstance(k, str) and k for k in keys):
            problems.append(problem(field + ".key", "must be a non-empty string or a non-empty list of them, got %r"
                                    % (key,)))
        labels = copy.get("labels") or {}
        if not isinstance(labels, dict):
            problems.append(problem(field + ".labels", "must be a mapping, got %r" % (labels,)))
        checked.append((source, target, keys, labels))
    if problems:
        raise InputError(problems)
    return checked


class SecretCopyModule(KubeModule):
    argument_spec = dict(
        target_kubeconfig=dict(type="raw", required=True, no_log=True),
        target_context=dict(type="str"),
        copies=dict(type="list", elements="dict", required=True),
        field_manager=dict(type="str", default="c5c3.cobaltcore"),
        public_keys=dict(type="list", elements="str", default=[], no_log=False),
    )
    other_kubeconfigs = ("target_kubeconfig",)

    def run(self):
        copies = validate_copies(self.params["copies"])
        secrets = self.client.resource("v1", "Secret")
        public = set(self.params["public_keys"])
        values = {}
        problems = []
        for source, _target, _keys, _labels in copies:
            if source in values:
                continue
            live = self.client.get(secrets, source[1], source[0])
            data = (live or {}).get("data") or {}
            hidden = [v for k, v in data.items() if k not in public and isinstance(v, str)]
            self.hide(*hidden)
            self.hide(*[_decoded(v) for v in hidden])
            values[source] = data
            if live is None:
                problems.append(problem("%s/%s" % source, "source Secret not found", "copy"))
        for source, _target, keys, _labels in copies:
            missing = [k for k in keys if k not in values[source]]
            if values[source] and missing:
                problems.append(problem("%s/%s" % source, "has no key %s" % ", ".join(missing), "copy"))
        if problems and not self.check_mode:
            raise InputError(problems)
        # Check mode before the first run: Rook has not made the key yet, so there is nothing to compare.
        ready = [c for c in copies if all(k in values[c[0]] for k in c[2])]
        manifests = [{
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": target[1], "namespace": target[0], "labels": dict(labels)},
            "data": dict((key, values[source][key]) for key in keys),
        } for source, target, keys, labels in ready]
        with self.other_client(self.params["target_kubeconfig"], self.params["target_context"]) as target_client:
            applier = Applier(target_client, field_manager=self.params["field_manager"],
                              check_mode=self.check_mode, diff=self.diff, drift=bool(self.drift))
            results = self.record(applier.apply(manifests), via="target_kubeconfig") if manifests else []
        by_target = dict(((r["namespace"], r["name"]), r["result"]) for r in results)
        self.results.update(
            results=[{"source": "%s/%s" % source, "target": "%s/%s" % target,
                      "result": by_target.get(target, "source missing")}
                     for source, target, _keys, _labels in copies],
            summary=summary(results))


def _decoded(value):
    try:
        return base64.b64decode(value).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def main():
    SecretCopyModule()()


if __name__ == "__main__":
    main()

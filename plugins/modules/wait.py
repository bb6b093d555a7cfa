#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: wait
short_description: Wait for many Kubernetes objects to be ready by their kind's rule
version_added: 0.1.0
description:
  - Waits for existing objects, named one by one or chosen by a label selector, until each is ready
    by its kind's readiness rule, a given condition, or a JMESPath expression.
  - Ready always requires C(status.observedGeneration == metadata.generation) where the kind reports
    it, so a C(Ready) left over from an older generation does not pass.
  - The rules cover Gardener Shoots (C(lastOperation)), IronCore BMCs, Servers and ServerClaims,
    Rook phases, K-ORC C(Available), Flux, mariadb-operator, RabbitMQ, Valkey, c5c3 kinds,
    Deployments, StatefulSets, Jobs and more; C(docs/readiness.md) lists them.
  - Objects are checked together, one request per kind and namespace per round; objects of one kind
    spread over namespaces that name the same label keys (O(resources[].labels)) are read with one
    request across those namespaces. An object seen ready is not read again.
  - A terminal failure (for example a Shoot whose last operation C(Failed), a Rook pool in
    C(Failure)) fails at once; a timeout fails with what is still missing for every object.
  - Never writes; check mode behaves the same.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
options:
  resources:
    description:
      - The objects to wait for.
    type: list
    elements: dict
    suboptions:
      api_version:
        description: The object's apiVersion.
        type: str
        required: true
        aliases: [apiVersion]
      kind:
        description: The object's kind.
        type: str
        required: true
      name:
        description: The object's name.
        type: str
        required: true
      namespace:
        description: The object's namespace (omit for cluster-scoped kinds).
        type: str
      labels:
        description:
          - Labels the object carries (its manifest's). Objects of one kind that share label keys are
            read with one request selecting their values; one the selection misses is read by name.
        type: dict
  api_version:
    description: With O(label_selectors), the apiVersion of the objects to select.
    type: str
  kind:
    description: With O(label_selectors), the kind of the objects to select.
    type: str
  namespace:
    description: With O(label_selectors), the namespace to select in; all namespaces when omitted.
    type: str
  label_selectors:
    description:
      - Label selectors (ANDed) choosing the objects of O(kind); at least one must match.
    type: list
    elements: str
  condition:
    description: A condition that replaces the kinds' own rules.
    type: dict
    suboptions:
      type:
        description: The condition type.
        type: str
        required: true
      status:
        description: The status it must have.
        type: str
        choices: ["True", "False", "Unknown"]
        default: "True"
      reason:
        description: The reason it must have, if given.
        type: str
  expression:
    description:
      - A JMESPath expression on the object; ready when it is true (the generation rule still applies).
    type: str
  failed_expression:
    description:
      - A JMESPath expression on the object; a terminal failure when it is true.
    type: str
  timeout:
    description: Seconds to wait before failing.
    type: int
    default: 300
  sleep:
    description: Longest pause in seconds between two rounds; rounds start fast and back off to this.
    type: int
    default: 2
"""

EXAMPLES = r"""
- name: Wait for the region's Shoots (Gardener's own success rule)
  c5c3.cobaltcore.wait:
    kubeconfig: "{{ garden_kubeconfig }}"
    resources:
      - {api_version: core.gardener.cloud/v1beta1, kind: Shoot, name: eu-de-1-control-plane, namespace: garden-cobaltcore}
      - {api_version: core.gardener.cloud/v1beta1, kind: Shoot, name: hv-pool-a, namespace: garden-cobaltcore}
    timeout: 3600

- name: Wait for every CephBlockPool of a tenant
  c5c3.cobaltcore.wait:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    api_version: ceph.rook.io/v1
    kind: CephBlockPool
    namespace: rook-ceph
    label_selectors:
      - c5c3.io/openstack-cluster-name=customer-a-prod

- name: Wait with an expression instead of the kind's rule
  c5c3.cobaltcore.wait:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    resources:
      - {api_version: v1, kind: ConfigMap, name: region-info, namespace: default}
    expression: "data.phase == 'done'"
"""

RETURN = r"""
resources:
  description: The readiness of every object, in the order given (selected objects by name).
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
      description: The object's namespace.
      type: str
    found:
      description: Whether the object exists.
      type: bool
    ready:
      description: Whether it is ready.
      type: bool
    terminal:
      description: Whether it failed terminally.
      type: bool
    missing:
      description: What is still missing or what failed, one line each.
      type: list
      elements: str
    elapsed:
      description: Seconds waited.
      type: float
    status:
      description: The object's C(status) as last seen, for example the C(endpoint) an operator reports.
      type: dict
      returned: when the object has a status
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
waited_seconds:
  description: Seconds the call waited for objects that were not ready when it first looked (the operators' time).
  returned: when the call waited
  type: float
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule, WAIT_CONDITION_SPEC
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter


class WaitModule(KubeModule):
    argument_spec = dict(
        resources=dict(type="list", elements="dict", options=dict(
            api_version=dict(type="str", required=True, aliases=["apiVersion"]),
            kind=dict(type="str", required=True),
            name=dict(type="str", required=True),
            namespace=dict(type="str"),
            labels=dict(type="dict"),
        )),
        api_version=dict(type="str"),
        kind=dict(type="str"),
        namespace=dict(type="str"),
        label_selectors=dict(type="list", elements="str"),
        condition=dict(type="dict", options=WAIT_CONDITION_SPEC),
        expression=dict(type="str"),
        failed_expression=dict(type="str"),
        timeout=dict(type="int", default=300),
        sleep=dict(type="int", default=2),
    )
    module_kwargs = dict(
        required_one_of=[("resources", "label_selectors")],
        mutually_exclusive=[("resources", "label_selectors"), ("condition", "expression")],
        required_by={"label_selectors": ("api_version", "kind")},
    )

    def refs(self):
        if self.params["resources"]:
            return [{"apiVersion": r["api_version"], "kind": r["kind"], "name": r["name"],
                     "namespace": r.get("namespace"), "labels": r.get("labels") or {}} for r in self.params["resources"]]
        rtype = self.client.resource(self.params["api_version"], self.params["kind"])
        selector = ",".join(self.params["label_selectors"])
        items = self.client.list(rtype, self.params["namespace"], label_selector=selector)
        if not items:
            raise KubeError("no %s matches the label selector %s" % (self.params["kind"], selector))
        return [{"apiVersion": self.params["api_version"], "kind": self.params["kind"],
                 "name": i["metadata"]["name"], "namespace": i["metadata"].get("namespace")} for i in items]

    def run(self):
        waiter = Waiter(self.client, condition=self.params["condition"], expression=self.params["expression"],
                        failed_expression=self.params["failed_expression"], sleep=self.params["sleep"],
                        progress=self.progress)
        self.results["resources"] = waiter.wait(self.refs(), self.params["timeout"])


def main():
    WaitModule()()


if __name__ == "__main__":
    main()

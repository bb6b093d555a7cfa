#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: hypervisor_nodes
short_description: Label a hypervisor pool's Nodes and wait for a Ready Hypervisor per Node
version_added: 0.6.0
description:
  - Lists the Nodes of the pool cluster's Gardener worker pool (label C(worker.gardener.cloud/pool=<worker_pool>)) and
    labels each as the seeds and the hypervisor operator require - C(node-role.kubernetes.io/hypervisor=""),
    C(nova.openstack.cloud.sap/virt-driver) (the label the operator selects Nodes by),
    C(cobaltcore.cloud.sap/node-hypervisor-lifecycle) (the operator onboards a Node only with it) and the pool's
    O(labels) - by server-side apply of C(metadata.labels) only, under its own field manager
    C(c5c3.cobaltcore-hypervisor-nodes). A Node that has them all is not written.
  - Sets each of the pool's Hypervisors' C(spec.highAvailability) to O(high_availability) (server-side apply of that
    field only, taking it over from the operator, which creates Hypervisors with C(true) and never syncs it). With
    C(true) the operator's onboarding waits for the condition C(HaEnabled), which only the separate kvm-ha-service sets.
  - Checks that the worker pool has O(workers) Nodes, each labelled C(topology.kubernetes.io/zone=<zone>) (the
    cloud-controller-manager's label, from the Server; the operator onboards a Node only with it), then (with O(wait))
    waits until every Node has a Ready C(Hypervisor) (C(kvm.cloud.sap/v1), cluster-scoped, named after the Node) and no
    Hypervisor lacks its Node. Nodes that appear while it waits are labelled too, and Hypervisors that appear get
    their C(spec.highAvailability). C(docs/hypervisors.md) describes the pool's lifecycle.
  - Readiness is the engine's rule for C(kvm.cloud.sap/Hypervisor) (C(docs/readiness.md)); upstream reports no
    observedGeneration for it.
  - All input is checked before anything is read or written; every offending option is named in one message.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Reports the label and C(spec.highAvailability) changes (server-side dry run) and the Hypervisors as
      they are; never waits.
    support: full
  diff_mode:
    description: The labels each Node would get, and each Hypervisor's C(spec.highAvailability), before and after.
    support: full
options:
  workers:
    description: The number of Nodes the pool has (its C(cobaltcore_pool.workers)).
    type: int
    required: true
  worker_pool:
    description: The Gardener worker pool of the Shoot (C(gardener.worker_name), by default C(worker)).
    type: str
    default: worker
  labels:
    description: The pool's own labels (C(cobaltcore_pool.labels)); every Node gets them.
    type: dict
    default: {}
  zone:
    description:
      - The pool's availability zone (C(cobaltcore_pool.zone)). Every Node must carry it as
        C(topology.kubernetes.io/zone) (the cloud-controller-manager sets it from the claimed Server); the module
        reports a Node without it or in another zone, and does not set the label itself.
    type: str
    required: true
  high_availability:
    description:
      - The Hypervisors' C(spec.highAvailability). C(true) only where kvm-ha-service runs on the pool (the collection
        installs none), since the operator's onboarding then completes only once kvm-ha-service reports C(HaEnabled).
    type: bool
    default: false
  virt_driver:
    description: Value of C(nova.openstack.cloud.sap/virt-driver); the operator selects on the key only.
    type: str
    default: kvm
  lifecycle:
    description:
      - C(skip-tests) - lifecycle management without the onboarding smoke test (label value C(skip-tests));
        C(enabled) - with it (label value C(true)); C(disabled) - no lifecycle label, so the operator never onboards
        the Hypervisors and they never become Ready (do not combine with O(wait)).
    type: str
    default: skip-tests
    choices: [skip-tests, enabled, disabled]
  wait:
    description: Wait for a Ready Hypervisor per Node (not in check mode).
    type: bool
    default: true
  timeout:
    description: Seconds to wait.
    type: int
    default: 600
  sleep:
    description: Longest pause in seconds between two checks.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: Label the Nodes of hv-pool-a and wait for their Hypervisors
  c5c3.cobaltcore.hypervisor_nodes:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    workers: "{{ cobaltcore_pool.workers }}"
    labels: "{{ cobaltcore_pool.labels | default({}) }}"
    zone: "{{ cobaltcore_pool.zone }}"
    timeout: 900
  register: hypervisors

- name: Only report (no wait)
  c5c3.cobaltcore.hypervisor_nodes:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    workers: 2
    zone: eu-de-1a
    wait: false
"""

RETURN = r"""
ready:
  description:
    - The worker pool has at least O(workers) Nodes, each with a Ready Hypervisor, and no Hypervisor lacks its Node.
    - More Nodes than O(workers) (a scale-in that C(playbooks/scale_in.yml) has yet to do) are named in a warning.
  returned: always
  type: bool
nodes:
  description: The Nodes of the worker pool - C(name), C(address) (InternalIP) and C(labels_changed) (label -> C(from), C(to)).
  returned: always
  type: list
  elements: dict
hypervisors:
  description:
    - One per Node that has a Hypervisor - C(name), C(ready), C(reason) and C(message) of its Ready condition,
      C(internal_ip), C(high_availability) (its C(spec.highAvailability)) and C(waiting_for) (what its onboarding
      waits for, when its conditions tell; for example C(HaEnabled)).
  returned: always
  type: list
  elements: dict
high_availability_changed:
  description: The Hypervisors whose C(spec.highAvailability) this call set to O(high_availability).
  returned: always
  type: list
  elements: str
missing_nodes:
  description: How many Nodes the worker pool lacks to have O(workers).
  returned: always
  type: int
extra_nodes:
  description: How many Nodes the worker pool has beyond O(workers).
  returned: always
  type: int
missing_hypervisors:
  description: Nodes without a Hypervisor.
  returned: always
  type: list
  elements: str
extra_hypervisors:
  description: Hypervisors without a Node of the worker pool.
  returned: always
  type: list
  elements: str
not_ready:
  description: The Hypervisors that are not Ready, each with C(name), C(reason) and C(message).
  returned: always
  type: list
  elements: dict
problems:
  description: Everything that keeps the pool from being ready, one line each.
  returned: always
  type: list
  elements: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
waited_seconds:
  description: Seconds the call waited for objects that were not ready when it first looked (the operators' time).
  returned: when the call waited
  type: float
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.progress import problems_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import hypervisor_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import hypervisors as hv


class HypervisorNodesModule(KubeModule):
    argument_spec = dict(
        workers=dict(type="int", required=True),
        worker_pool=dict(type="str", default="worker"),
        labels=dict(type="dict", default={}),
        zone=dict(type="str", required=True),
        high_availability=dict(type="bool", default=False),
        virt_driver=dict(type="str", default=hv.VIRT_DRIVER),
        lifecycle=dict(type="str", default="skip-tests", choices=list(hv.LIFECYCLES)),
        wait=dict(type="bool", default=True),
        timeout=dict(type="int", default=600),
        sleep=dict(type="int", default=5),
    )

    def run(self):
        params = self.params
        hv.validate(params)
        self.wanted = hv.wanted_labels(params["labels"], params["virt_driver"], params["lifecycle"])
        self.changes = {}
        self.results.update(nodes=[], hypervisors=[], missing_nodes=0, extra_nodes=0, missing_hypervisors=[],
                            extra_hypervisors=[], not_ready=[], problems=[], ready=False, high_availability_changed=[])
        if params["wait"] and not self.check_mode:
            def attempt():
                verdict = self.label_and_judge()
                if verdict["terminal"]:
                    raise WaitError("hypervisor pool failed: %s" % "; ".join(verdict["problems"]),
                                    verdict["hypervisors"])
                if not verdict["ready"]:
                    offer(self.progress, lambda: problems_line("hypervisor pool %s" % params["worker_pool"],
                                                               verdict["problems"]))
                return verdict["ready"], verdict
            done, verdict = poll(attempt, params["timeout"], params["sleep"])
            if not done:
                self.fail("hypervisor pool not ready after %ss: %s" % (params["timeout"], "; ".join(verdict["problems"])))
        else:
            verdict = self.label_and_judge()
        if verdict["extra_nodes"]:
            self.ansible.warn("hypervisor pool %s has %d Nodes more than its %d workers: playbooks/scale_in.yml "
                              "evacuates and releases them" % (params["worker_pool"], verdict["extra_nodes"],
                                                               params["workers"]))

    def label_and_judge(self):
        """One round: label what lacks a label, then judge the pool (the results are updated)."""
        nodes = hypervisor_api.pool_nodes(self.client, self.params["worker_pool"])
        for node in nodes:
            changes = hv.label_changes(node, self.wanted)
            if changes:
                self.changes[node["metadata"]["name"]] = changes
        if nodes:
            # Every Node goes to the applier: it writes none that is labelled already, and it removes a
            # label this field manager set before that is no longer wanted.
            # A label of the pool's that another manager changed is taken back.
            results = self.record(self.applier(field_manager=hv.FIELD_MANAGER, force_conflicts=True).apply(
                [hv.node_manifest(n["metadata"]["name"], self.wanted) for n in nodes]))
            if any(r["result"] != "unchanged" for r in results) and not self.check_mode:
                nodes = hypervisor_api.pool_nodes(self.client, self.params["worker_pool"])
        found = hypervisor_api.hypervisors(self.client)
        if self.set_high_availability(nodes, found or []) and not self.check_mode:
            found = hypervisor_api.hypervisors(self.client)
        verdict = hv.judge(nodes, found or [], self.params["workers"], hypervisor_api.readiness, self.params["zone"])
        if found is None:
            verdict["problems"].insert(0, "the API server does not serve %s %s (is the hypervisor operator installed?)"
                                       % (hv.HYPERVISOR_KIND, hv.HYPERVISOR_API_VERSION))
            verdict["ready"] = False
        self.results.update(
            nodes=[{"name": n["metadata"]["name"], "address": hv.internal_ip(n),
                    "labels_changed": self.changes.get(n["metadata"]["name"], {})} for n in nodes],
            hypervisors=verdict["hypervisors"], missing_nodes=verdict["missing_nodes"],
            missing_hypervisors=verdict["missing"], extra_hypervisors=verdict["extra"], extra_nodes=verdict["extra_nodes"],
            not_ready=[{"name": e["name"], "reason": e["reason"], "message": e["message"]} for e in verdict["not_ready"]],
            problems=verdict["problems"], ready=verdict["ready"])
        return verdict

    def set_high_availability(self, nodes, found):
        """The pool's spec.highAvailability on every Hypervisor of its Nodes that has another; True when one was written."""
        wanted = self.params["high_availability"]
        stale = hv.high_availability_changes(found, set(n["metadata"]["name"] for n in nodes), wanted)
        if not stale:
            return False
        written = []
        for hypervisor in [h for h in found if h["metadata"]["name"] in stale]:
            name = hypervisor["metadata"]["name"]
            manifest = hv.high_availability_manifest(name, wanted)
            # Over the version read: an apply would create a Hypervisor deleted since (its Node gone).
            manifest["metadata"]["resourceVersion"] = hypervisor["metadata"]["resourceVersion"]
            try:
                # Forced: the operator's Create owns the field (it never writes it again).
                self.record(self.applier(field_manager=hv.FIELD_MANAGER, force_conflicts=True).apply(
                    [manifest], live={(hv.HYPERVISOR_API_VERSION, hv.HYPERVISOR_KIND, None, name): hypervisor}))
            except KubeError as error:
                if error.status not in (404, 409):
                    raise
                continue  # changed or gone since it was read: the next round looks again
            written.append(name)
        self.results["high_availability_changed"] = sorted(set(self.results["high_availability_changed"]) | set(written))
        return bool(written)


def main():
    HypervisorNodesModule()()


if __name__ == "__main__":
    main()

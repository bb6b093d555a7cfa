#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: gardener_shoot
short_description: Create, update or delete Gardener Shoots and wait for them together
version_added: 0.2.0
description:
  - Applies many C(Shoot)s (C(core.gardener.cloud/v1beta1)) of one Gardener project in one call with
    server-side apply, then waits for all of them together with Gardener's own success rule -
    C(observedGeneration) current, every condition C(True), and the last operation (C(Create),
    C(Reconcile) or C(Restore)) C(Succeeded).
  - A Shoot whose last operation is C(Failed) fails the call at once, quoting Gardener's C(lastErrors).
  - A Shoot that this call left unchanged, at the current generation, with every condition C(True) and a
    C(Reconcile) in state C(Processing) or C(Error) is ready. That is gardenlet's periodic reconcile (every
    hour; C(Error) is retried and turns C(Failed) only after 12 h), which a re-run must not wait for.
  - A Shoot that got no seed (no C(spec.seedName) and no status) is named at once and fails the call 120 s
    after its creation, with gardener-scheduler's C(SchedulingFailed) event.
  - Before anything is written, changes that gardener-apiserver refuses on update (region, provider
    type, networking type, pod and service networks, a Kubernetes downgrade or a skipped minor
    version) are reported for every Shoot together, instead of one raw API error.
  - With O(state=absent), each Shoot is annotated with C(confirmation.gardener.cloud/deletion=true),
    deleted, and waited for until it is gone; a deletion whose last operation fails ends the wait at once.
    In check mode the annotation and the deletion are sent as dry runs (C(dryRun=All)); a dry-run deletion
    that Gardener refuses only for the annotation (which a dry run cannot store) counts as passed.
  - The namespace of O(project) is read from the Project (C(spec.namespace)); C(garden-<project>) is only a convention.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.gardener_project
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Server-side dry runs; nothing is written, annotated, deleted or waited for.
    support: full
  diff_mode:
    description: Field-level diff of every Shoot.
    support: full
options:
  shoots:
    description: The Shoots.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Name of the Shoot (with the project name at most 21 characters).
        type: str
        required: true
      spec:
        description: The Shoot's C(spec); required with O(state=present).
        type: dict
      cluster:
        description: The inventory host (cluster of the region) this Shoot is; set as its label C(c5c3.io/cluster).
        type: str
      labels:
        description: Labels of the Shoot.
        type: dict
      annotations:
        description: Annotations of the Shoot.
        type: dict
  clusters:
    description:
      - With O(state=absent), also delete the Shoots of the project labelled C(c5c3.io/cluster) with one of these
        inventory hosts, whatever their names (a decommissioned pool's Shoot, whose name setting left the inventory
        with the pool).
    type: list
    elements: str
    default: []
  state:
    description: C(present) creates or updates the Shoots, C(absent) deletes them.
    type: str
    choices: [present, absent]
    default: present
  hold_kubernetes_version:
    description:
      - Leave an existing Shoot's C(spec.kubernetes.version) where it is when O(shoots[].spec) asks for a higher one
        (M(c5c3.cobaltcore.gardener_kubernetes_version) moves it, one minor at a time in the seed's order), and keep
        the patch it runs when the spec names only its minor. Each held Shoot is named in a warning and in
        RV(kubernetes_held). A lower version is still refused.
      - New Shoots are created at the spec's version.
    type: bool
    default: false
  hold_workers:
    description:
      - Leave an existing Shoot's worker C(minimum) and C(maximum) where they are when O(shoots[].spec) asks for
        lower ones - Gardener's machine controller would delete Nodes of its own choosing, with their instances or
        OSDs. C(playbooks/scale_in.yml) evacuates the Nodes on the surplus ServerClaims and releases them, then lowers
        the worker. Each held Shoot is named in a warning and in RV(workers_held).
      - New Shoots and raised counts are applied as given.
    type: bool
    default: false
  wait:
    description: Wait until every Shoot is ready (or gone, with O(state=absent)).
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for all Shoots together.
    type: int
    default: 3600
  wait_sleep:
    description: Longest pause in seconds between two checks.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: Shoots of every pool of the region, created in parallel and waited on together
  c5c3.cobaltcore.gardener_shoot:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    project: cobaltcore
    shoots: "{{ region | c5c3.cobaltcore.gardener_shoots(cobaltcore_gardener) }}"

- name: Delete a hypervisor pool's Shoot
  c5c3.cobaltcore.gardener_shoot:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    project: cobaltcore
    state: absent
    shoots:
      - name: hv-pool-old
"""

RETURN = r"""
namespace:
  description: The project namespace.
  returned: always
  type: str
shoots:
  description: Every Shoot with the result of this run and its last operation.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The Shoot.
      type: str
    result:
      description: C(created), C(configured), C(unchanged), C(deleted) or C(absent).
      type: str
    last_operation:
      description: C(status.lastOperation) after the wait (type, state, progress, description).
      type: dict
    periodic_reconcile:
      description: The Shoot was unchanged, healthy and in gardenlet's periodic reconcile, so not waited for.
      type: bool
      returned: when waiting for present Shoots
kubernetes_held:
  description: Shoots whose Kubernetes version was held (O(hold_kubernetes_version)) - C(name), C(runs), C(asked).
  returned: with O(hold_kubernetes_version)
  type: list
  elements: dict
workers_held:
  description: Shoots whose worker counts were held (O(hold_workers)) - C(name), C(worker), C(runs), C(asked) (maximums).
  returned: with O(hold_workers)
  type: list
  elements: dict
results:
  description: One entry per object applied or removed, as M(c5c3.cobaltcore.apply) returns them.
  returned: always
  type: list
  elements: dict
ready:
  description: Readiness of every Shoot after the wait (see M(c5c3.cobaltcore.wait)).
  returned: when waiting for present Shoots
  type: list
  elements: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
waited_seconds:
  description: Seconds the call waited for objects that were not ready when it first looked (the operators' time).
  returned: when the call waited
  type: float
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers.gardener_api import (
    PROJECT_KWARGS, PROJECT_OPTIONS, namespace_of)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import ref_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.progress import waiting_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter, WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate, last_operation_text


class GardenerShootModule(KubeModule):
    argument_spec = dict(
        PROJECT_OPTIONS,
        shoots=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True),
            spec=dict(type="dict"),
            cluster=dict(type="str"),
            labels=dict(type="dict"),
            annotations=dict(type="dict"),
        )),
        clusters=dict(type="list", elements="str", default=[]),
        state=dict(type="str", default="present", choices=["present", "absent"]),
        hold_kubernetes_version=dict(type="bool", default=False),
        hold_workers=dict(type="bool", default=False),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=3600),
        wait_sleep=dict(type="int", default=5),
    )
    module_kwargs = PROJECT_KWARGS

    def run(self):
        namespace = namespace_of(self.client, self.params)
        self.results["namespace"] = namespace
        self.rtype = self.client.resource(gardener.API_VERSION, "Shoot")
        live = dict((s["metadata"]["name"], s) for s in self.client.list(self.rtype, namespace))
        if self.params["state"] == "absent":
            self.delete(namespace, live)
        else:
            self.apply(namespace, live)

    def apply(self, namespace, live):
        problems, shoots = [], list(self.params["shoots"])
        if self.params["hold_kubernetes_version"]:
            self.results["kubernetes_held"] = []
        if self.params["hold_workers"]:
            self.results["workers_held"] = []
        self.held_drift = {}
        for index, shoot in enumerate(shoots):
            if not shoot["spec"]:
                problems.append(problem("shoots[%d].spec" % index, "is required to create or update Shoot %s" % shoot["name"]))
            current = live.get(shoot["name"])
            if current is None or not shoot["spec"]:
                continue
            if current["metadata"].get("deletionTimestamp"):
                problems.append(problem("shoots[%d]" % index, "Shoot %s is being deleted; wait until it is gone "
                                        "before creating it again" % shoot["name"]))
            if self.params["hold_kubernetes_version"]:
                shoot = self.hold_kubernetes_version(shoot, current)
            if self.params["hold_workers"]:
                shoot = self.hold_workers(shoot, current)
            problems.extend(gardener.update_problems(shoot["name"], current.get("spec") or {}, shoot["spec"]))
            shoots[index] = shoot
        if problems:
            raise InputError(problems)
        objects = [gardener.shoot_manifest(s, namespace) for s in shoots]
        applied = self.applier().apply(objects)
        if self.drift:
            for result in applied:  # what the hold kept differs from the inventory all the same
                held = self.held_drift.get(result["name"])
                if held:
                    result.setdefault("drift", {}).setdefault("fields", []).extend(held)
        results = self.record(applied)
        self.results["results"] = results
        self.results["shoots"] = [{"name": r["name"], "result": r["result"]} for r in results]
        if self.params["wait"] and not self.check_mode:
            unchanged = set(r["name"] for r in results if r["result"] == "unchanged")
            now = dict((s["metadata"]["name"], s) for s in self.client.list(self.rtype, namespace))
            # A re-run that lands on gardenlet's periodic reconcile of an unchanged, healthy Shoot: ready.
            periodic = sorted(n for n in unchanged if n in now and gardener.periodic_reconcile(now[n]))
            for entry in self.results["shoots"]:
                entry["periodic_reconcile"] = entry["name"] in periodic
            waiter = Waiter(self.client, sleep=self.params["wait_sleep"], progress=self.progress)
            try:
                self.results["ready"] = waiter.wait([ref_of(o) for o in objects
                                                     if o["metadata"]["name"] not in periodic],
                                                    self.params["wait_timeout"])
            finally:
                self.report_operations(namespace)

    def hold_kubernetes_version(self, shoot, current):
        asked = gardener.kubernetes_version(shoot["spec"])
        runs = gardener.kubernetes_version(current.get("spec"))
        version, upgrade_held = gardener.held_kubernetes_version(current.get("spec"), shoot["spec"])
        if version == asked:
            return shoot
        spec = dict(shoot["spec"], kubernetes=dict(shoot["spec"].get("kubernetes") or {}, version=version))
        if upgrade_held:
            self.results["kubernetes_held"].append({"name": shoot["name"], "runs": runs, "asked": asked})
            self.ansible.warn("Shoot %s runs Kubernetes %s, the inventory asks for %s: left as it is, "
                              "playbooks/upgrade.yml moves it in the seed's order" % (shoot["name"], runs, asked))
        return dict(shoot, spec=spec)

    def hold_workers(self, shoot, current):
        spec, held = gardener.held_workers(current.get("spec"), shoot["spec"])
        for entry in held:
            self.results["workers_held"].append(dict(entry, name=shoot["name"]))
            self.ansible.warn("Shoot %s keeps worker %s at %s machines, the inventory asks for %s: "
                              "playbooks/scale_in.yml evacuates and releases the surplus Nodes, then lowers it"
                              % (shoot["name"], entry["worker"], entry["runs"], entry["asked"]))
        if held:
            self.held_drift[shoot["name"]] = gardener.held_workers_drift(shoot["spec"], spec)
        return dict(shoot, spec=spec) if held else shoot

    def report_operations(self, namespace):
        live = dict((s["metadata"]["name"], s) for s in self.client.list(self.rtype, namespace))
        for entry in self.results["shoots"]:
            entry["last_operation"] = ((live.get(entry["name"]) or {}).get("status") or {}).get("lastOperation")

    def delete(self, namespace, live):
        shoots, gone = [], []
        names = [s["name"] for s in self.params["shoots"]]
        names += sorted(n for n, s in live.items() if n not in names and
                        (s["metadata"].get("labels") or {}).get(naming.CLUSTER_LABEL) in self.params["clusters"])
        for name in names:
            current = live.get(name)
            shoots.append({"name": name, "result": "absent" if current is None else "deleted"})
            if current is None:
                continue
            self.results["changed"] = True
            if self.diff:
                self.results.setdefault("diff", []).append({"before": {"metadata": {"name": name}}, "after": {},
                                                            "before_header": "Shoot %s/%s" % (namespace, name),
                                                            "after_header": "Shoot %s/%s" % (namespace, name)})
            annotations = current["metadata"].get("annotations") or {}
            confirmed = annotations.get(gardener.DELETION_CONFIRMATION) == "true"
            dry_run = {"dryRun": "All"} if self.check_mode else None
            if not confirmed:
                self.client.request("PATCH", self.rtype.path(namespace, name), content_type="application/merge-patch+json",
                                    body={"metadata": {"annotations": {gardener.DELETION_CONFIRMATION: "true"}}},
                                    query=dry_run)
            if not current["metadata"].get("deletionTimestamp"):
                try:
                    self.client.delete(self.rtype, name, namespace, propagation="Background",
                                       dry_run=self.check_mode)
                except KubeError as error:
                    # The dry-run annotation is not stored, so Gardener refuses the dry-run deletion for its absence.
                    if not (self.check_mode and not confirmed and error.status == 403
                            and gardener.DELETION_CONFIRMATION in str(error)):
                        raise
            if not self.check_mode:
                gone.append(name)
        self.results["shoots"] = shoots
        if gone and self.params["wait"]:
            self.wait_gone(namespace, gone)

    def wait_gone(self, namespace, names):
        def attempt():
            left = dict((s["metadata"]["name"], s) for s in self.client.list(self.rtype, namespace)
                        if s["metadata"]["name"] in names)
            # Only the deletion's own failure counts: a Failed Create keeps its lastErrors while it is deleted.
            failed = [(name, evaluate(shoot)) for name, shoot in left.items()
                      if ((shoot.get("status") or {}).get("lastOperation") or {}).get("type") == "Delete"
                      and shoot["status"]["lastOperation"].get("state") == "Failed"]
            if failed:
                raise WaitError("deletion failed: " + " | ".join("Shoot %s: %s" % (n, "; ".join(s.missing)) for n, s in failed),
                                [dict(name=n, **s.as_dict()) for n, s in failed])
            if left:
                # An absent wait counts what is gone by a state of None.
                offer(self.progress, lambda: waiting_line(
                    [({"kind": "Shoot", "namespace": namespace, "name": n}, left.get(n), left.get(n)) for n in names],
                    absent=True))
            return not left, left

        gone, left = poll(attempt, self.params["wait_timeout"], self.params["wait_sleep"])
        if not gone:
            raise WaitError("%d Shoot(s) still present after %ss: %s" % (
                len(left), self.params["wait_timeout"], ", ".join(
                    "%s (%s)" % (n, last_operation_text((s.get("status") or {}).get("lastOperation") or {}))
                    for n, s in sorted(left.items()))),
                [{"name": n} for n in sorted(left)])


def main():
    GardenerShootModule()()


if __name__ == "__main__":
    main()

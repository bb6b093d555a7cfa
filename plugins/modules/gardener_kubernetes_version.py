#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: gardener_kubernetes_version
short_description: Move a region's Shoots to a Kubernetes version in the seed's order, one minor at a time
version_added: 0.6.0
description:
  - Reads the region's C(Shoot)s (C(core.gardener.cloud/v1beta1)) and their cloud profiles, and moves each whose
    C(spec.kubernetes.version) is below O(version), one minor version per step, as gardener-apiserver allows.
  - Per minor version the control plane's Shoots move together, then the storage pools' one by one, then the
    hypervisor pools' one by one (O(shoots) C(stage)). Each step writes C(spec.kubernetes.version) alone (server-side
    apply under the field manager C(c5c3.cobaltcore.kubernetes-upgrade)) and waits until its Shoots are reconciled
    (Gardener's success rule) before the next step is written. A failed reconcile stops the move at once, naming the
    Shoot and Gardener's C(lastErrors); later steps are not written.
  - An intermediate minor, or a target without a patch, moves to the newest patch the Shoot's cloud profile
    classifies as C(supported) - what Gardener makes of a short version. A target with a patch must be offered.
  - Refused before any write, every Shoot's problems at once - a missing Shoot, a downgrade, another major version,
    a target more than O(minor_steps) minor versions ahead, a minor the cloud profile has no supported patch of, a
    machine image whose C(kubeletVersionConstraint) excludes a step's version - and a Shoot whose last operation
    C(Failed).
  - A Shoot still reconciling a version written before (a run that stopped) is waited for first, so the move
    resumes at its step; a reconcile in progress within gardenlet's sync period (1 h) after this module's
    last write of the Shoot counts as that write's, even while it looks periodic (all conditions C(True)).
  - A region at the version reports C(changed=false). Check mode returns the plan and writes nothing.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.gardener_project
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Returns the plan; nothing is written or waited for.
    support: full
  diff_mode:
    description: Each Shoot's version before and after the move.
    support: full
options:
  shoots:
    description: The region's Shoots, as P(c5c3.cobaltcore.gardener_upgrade_order#filter) returns them.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The Shoot.
        type: str
        required: true
      cluster:
        description: The inventory host the Shoot is.
        type: str
      stage:
        description: Where the Shoot moves in the seed's order.
        type: str
        required: true
        choices: [control plane, storage pool, hypervisor pool]
      version:
        description: The Kubernetes version this Shoot is to run (a pool's own); O(version) when not set.
        type: str
  version:
    description:
      - The Kubernetes version the Shoots are to run, C(<major>.<minor>) or C(<major>.<minor>.<patch>).
      - Every Shoot without a O(shoots[].version) of its own needs it.
    type: str
  minor_steps:
    description: How many minor versions one run may move the Shoots, in consecutive steps.
    type: int
    default: 1
  wait_timeout:
    description: Seconds each step may take.
    type: int
    default: 3600
  wait_sleep:
    description: Longest pause in seconds between two looks at a step's Shoots.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: Move the region's Shoots to the Kubernetes versions the inventory names, control plane first
  c5c3.cobaltcore.gardener_kubernetes_version:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    project: cobaltcore
    shoots: "{{ {'name': cobaltcore_region, 'groups': groups, 'hostvars': hostvars}
                | c5c3.cobaltcore.gardener_upgrade_order(cobaltcore_gardener) }}"
"""

RETURN = r"""
namespace:
  description: The project namespace.
  returned: always
  type: str
steps:
  description: The steps in order - C(minor), C(stage) and C(moves) (C(name), C(cluster), C(stage), C(from), C(to)).
  returned: always
  type: list
  elements: dict
plan_lines:
  description: The plan, a line per step.
  returned: always
  type: list
  elements: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import ref_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter, WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers.gardener_api import (
    PROJECT_KWARGS, PROJECT_OPTIONS, namespace_of)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener_upgrade as upgrade


class GardenerKubernetesVersionModule(KubeModule):
    argument_spec = dict(
        PROJECT_OPTIONS,
        shoots=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            cluster=dict(type="str"),
            stage=dict(type="str", required=True, choices=upgrade.STAGE_ORDER),
            version=dict(type="str"),
        )),
        version=dict(type="str"),
        minor_steps=dict(type="int", default=1),
        wait_timeout=dict(type="int", default=3600),
        wait_sleep=dict(type="int", default=5),
    )
    module_kwargs = PROJECT_KWARGS

    def run(self):
        params = self.params
        if params["minor_steps"] < 1:
            raise InputError([problem("minor_steps", "must be at least 1")])
        namespace = namespace_of(self.client, params)
        self.results["namespace"] = namespace
        self.rtype = self.client.resource(gardener.API_VERSION, "Shoot")
        self.waiter = Waiter(self.client, sleep=params["wait_sleep"], progress=self.progress)
        names = [s["name"] for s in params["shoots"]]
        live = self.shoots(namespace, names)
        problems = self.failed(live)
        if problems:
            raise InputError(problems)
        if not self.check_mode:
            # A Shoot still reconciling a version a stopped run wrote: its step finishes first.
            live = self.settle(namespace, live)
        steps, problems = upgrade.plan(params["shoots"], live, self.profiles(namespace, live), params["version"],
                                       params["minor_steps"])
        if problems:
            raise InputError(problems)
        targets = set(s["version"] or params["version"] for s in params["shoots"])
        self.results.update(steps=steps, plan_lines=upgrade.plan_lines(steps, targets.pop() if len(targets) == 1 else None),
                            changed=bool(steps))
        if self.diff and steps:
            first = dict((m["name"], m["from"]) for s in reversed(steps) for m in s["moves"])
            last = dict((m["name"], m["to"]) for s in steps for m in s["moves"])
            self.results["diff"] = {"before": dict((n, {"kubernetes": first[n]}) for n in sorted(first)),
                                    "after": dict((n, {"kubernetes": last[n]}) for n in sorted(last)),
                                    "before_header": "Shoots", "after_header": "Shoots"}
        if self.check_mode:
            return
        for number, step in enumerate(steps, 1):
            self.move(namespace, number, step)

    def shoots(self, namespace, names):
        return dict((s["metadata"]["name"], s) for s in self.client.list(self.rtype, namespace)
                    if s["metadata"]["name"] in names)

    @staticmethod
    def failed(live):
        """A Shoot whose last operation Failed: Gardener retries it only when asked; nothing moves meanwhile."""
        problems = []
        for name in sorted(live):
            state = evaluate(live[name])
            if state.terminal:
                problems.append(problem("status.lastOperation", "; ".join(state.missing) + ": fix it before its "
                                        "Kubernetes moves", "Shoot " + name))
        return problems

    def settle(self, namespace, live):
        now = time.time()
        pending = [n for n in sorted(live) if not evaluate(live[n]).ready
                   and not gardener.periodic_reconcile(live[n], written_by=upgrade.FIELD_MANAGER, now=now)]
        if not pending:
            return live
        self.waiter.wait([{"apiVersion": gardener.API_VERSION, "kind": "Shoot", "namespace": namespace, "name": n}
                          for n in pending], self.params["wait_timeout"])
        return self.shoots(namespace, list(live))

    def profiles(self, namespace, live):
        """Each Shoot's cloud profile (a NamespacedCloudProfile's lives in the project namespace)."""
        read, result = {}, {}
        for name, shoot in live.items():
            ref = gardener.shoot_cloud_profile(shoot.get("spec"))
            key = (ref["kind"], ref["name"])
            if key not in read:
                rtype = self.client.resource(gardener.API_VERSION, key[0])
                read[key] = self.client.get(rtype, key[1], namespace if rtype.namespaced else None) if key[1] else None
            result[name] = read[key]
        return result

    def move(self, namespace, number, step):
        line = upgrade.step_line(number, step)
        objects = [upgrade.manifest(m["name"], namespace, m["to"]) for m in step["moves"]]
        for obj in objects:
            self.client.server_side_apply(self.rtype, obj, upgrade.FIELD_MANAGER, force=True)
        try:
            self.waiter.wait([ref_of(o) for o in objects], self.params["wait_timeout"])
        except WaitError as error:
            raise WaitError("%s failed, later steps were not written: %s" % (line, error), error.objects)


def main():
    GardenerKubernetesVersionModule()()


if __name__ == "__main__":
    main()

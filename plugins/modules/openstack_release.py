#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: openstack_release
short_description: Move OpenStack clusters' ControlPlanes to the next OpenStack release, step by step
version_added: 0.6.0
description:
  - Reads each C(ControlPlane) (C(c5c3.io/v1alpha1)) of O(control_planes) and the service CRs the
    c5c3-operator created from it (C(Keystone), C(Glance), C(Placement), C(Nova), C(Neutron), C(Cinder)),
    takes the release each runs from its C(status.installedRelease) (else its C(spec.image.tag)) and plans
    the move to O(release) in seed 003's dependency order - identity, then core (Glance and Placement),
    then compute (Nova, Neutron and Cinder).
  - Refuses, before any write and naming both releases, a target it does not know, a downgrade, a skip (a
    cluster moves one release at a time, as upstream's database migrations run from one release to the next)
    and a service on a tag of no known release; every problem of every cluster is named at once, as is a
    ControlPlane that does not exist.
  - Requires each moving cluster's infrastructure phase (MariaDB, RabbitMQ, Valkey, Memcached) to be ready
    before the first write.
  - Each step writes the ControlPlane's image of the services it moves (C(spec.services.<service>.image), or
    C(spec.openstack.<service>.image) for a tenant's composed ControlPlane) under its own field manager
    (C(c5c3.cobaltcore.release); phase 4 never sends image fields), then waits until each of them runs the
    new tag - C(status.installedRelease) is the tag, no C(upgradePhase), C(Ready) for the CR's generation -
    before the next step is written. The clusters move together, step by step.
  - A terminal database upgrade reason (for example C(MigrateFailed), C(DowngradeNotSupported)) fails at
    once naming the step, the cluster, the service and its reason; later steps are not written.
  - The plan is made from what the services run, so a run that stopped anywhere resumes on the next run at
    the step it was in, and a finished move reports nothing to do (C(changed=false)).
  - In check mode it returns the plan and writes nothing; with C(--diff) the diff shows each service's tag
    before and after.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.openstack_clusters
  - c5c3.cobaltcore.progress
options:
  release:
    description:
      - The OpenStack release the clusters are to run, C(YEAR.1) or C(YEAR.2) (for example C(2026.1)); the
        release each cluster runs or the one after it.
    type: str
    required: true
  wait_timeout:
    description:
      - Seconds each step may take before the module fails naming the services still moving.
    type: int
    default: 1800
  wait_sleep:
    description:
      - Longest pause in seconds between two looks at the moving services.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: Show what moving the region to 2026.1 would do
  c5c3.cobaltcore.openstack_release:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    control_planes:
      - {namespace: openstack, name: "{{ cobaltcore_region }}"}
    release: "2026.1"
  check_mode: true
  register: release_plan

- name: Move the region's cluster and a tenant's to 2026.1 together
  c5c3.cobaltcore.openstack_release:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    control_planes:
      - {namespace: openstack, name: "{{ cobaltcore_region }}"}
      - {namespace: openstack-acme, name: acme}
    release: "2026.1"
"""

RETURN = r"""
release:
  description: The release the clusters move to (O(release)).
  returned: always
  type: str
control_planes:
  description:
    - Per ControlPlane, in the order given - C(namespace), C(name), C(running) (the release each service ran
      when the module looked first), C(plan) (the steps left, each with its C(phase) and C(services), per
      service the image tags C(from) and C(to)) and C(plan_lines).
  returned: when every ControlPlane exists
  type: list
  elements: dict
plan_lines:
  description: Every cluster's plan as text, one line per step.
  returned: when every ControlPlane exists
  type: list
  elements: str
steps:
  description: The steps this run applied, each with C(control_plane), C(phase), C(services), C(changed) and C(seconds).
  returned: when not in check mode
  type: list
  elements: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import c5c3_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import releases


class OpenStackReleaseModule(KubeModule):
    argument_spec = dict(
        c5c3_api.CLUSTER_OPTIONS,
        release=dict(type="str", required=True),
        wait_timeout=dict(type="int", default=1800),
        wait_sleep=dict(type="int", default=5),
    )

    def run(self):
        params = self.params
        self.results["release"] = params["release"]
        asked = c5c3_api.asked_control_planes(params)
        if not asked:
            self.fail("no ControlPlane to move: give control_planes or tenants")
        found = [(cp, c5c3_api.control_planes(self.client, cp["namespace"], cp["name"])) for cp in asked]
        missing = ["%s/%s" % (asked["namespace"], asked["name"]) for asked, cp in found if cp is None]
        if missing:
            self.fail("ControlPlane %s does not exist: phase 4 (the region's) or phase 7 (a tenant's) creates it"
                      % ", ".join(missing))
        moves, reports, problems = [], [], []
        for unused, control_plane in found:
            subject = "ControlPlane %s" % c5c3_api.subject_of(control_plane)
            services = c5c3_api.release_services(self.client, control_plane)
            try:
                plan = releases.plan(dict((s, releases.running_tag(o)) for s, o in services.items()),
                                     params["release"], subject)
            except InputError as exc:
                problems.extend(exc.problems)
                continue
            moves.append((control_plane, services, plan))
            reports.append({"namespace": control_plane["metadata"]["namespace"],
                            "name": control_plane["metadata"]["name"], "running": plan["from"],
                            "plan": plan["steps"],
                            "plan_lines": releases.plan_lines(plan, c5c3_api.subject_of(control_plane))})
        if problems:
            raise InputError(problems)
        self.results.update(control_planes=reports, plan_lines=[line for r in reports for line in r["plan_lines"]],
                            changed=any(self.unwritten(cp, plan) for cp, unused, plan in moves))
        if self.diff and self.results["changed"]:
            self.results["diff"] = self.diff_of(moves)
        moving = [move for move in moves if move[2]["steps"]]
        if self.check_mode or not moving:
            return
        for control_plane, unused, unused_plan in moving:
            meta = control_plane["metadata"]
            infrastructure = c5c3_api.reports(self.client, meta["namespace"], meta["name"], "infrastructure")[0]
            if not infrastructure["ready"]:
                self.fail("ControlPlane %s: its infrastructure is not ready, no release step was written: %s"
                          % (c5c3_api.subject_of(control_plane), health.summary(infrastructure)))
        steps = []
        self.results["steps"] = steps
        c5c3_api.move_release(self.client, moving, params["release"], params["wait_timeout"], params["wait_sleep"],
                              progress=self.progress, step_done=steps.append)
        self.results["changed"] = any(step["changed"] for step in steps)

    @staticmethod
    def unwritten(control_plane, plan):
        """Whether the plan writes a tag the ControlPlane does not name yet (a resumed step writes nothing)."""
        written = releases.written_tags(control_plane)
        return any(written.get(s) != move["to"] for step in plan["steps"] for s, move in step["services"].items())

    @staticmethod
    def diff_of(moves):
        before, after = {}, {}
        for control_plane, services, plan in moves:
            subject = c5c3_api.subject_of(control_plane)
            tags = dict((s, releases.running_tag(o)) for s, o in services.items())
            before[subject], after[subject] = tags, dict(tags)
            for step in plan["steps"]:
                after[subject].update((s, move["to"]) for s, move in step["services"].items())
        return {"before": {"images": before}, "after": {"images": after}}


def main():
    OpenStackReleaseModule()()


if __name__ == "__main__":
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: openstack_release
short_description: Move an OpenStack cluster's ControlPlane to the next OpenStack release, step by step
version_added: 0.6.0
description:
  - Reads a C(ControlPlane) (C(c5c3.io/v1alpha1)) and the service CRs the c5c3-operator created from it
    (C(Keystone), C(Glance), C(Placement), C(Nova), C(Neutron), C(Cinder)), takes the release each runs from
    its C(status.installedRelease) (else its C(spec.image.tag)) and plans the move to O(release) in seed 003's
    dependency order - identity, then core (Glance and Placement), then compute (Nova, Neutron and Cinder).
  - Refuses, before any write and naming both releases, a target it does not know, a downgrade, a skip (a
    cluster moves one release at a time, as upstream's database migrations run from one release to the next)
    and a service on a tag of no known release; every problem is named at once.
  - Requires the infrastructure phase (MariaDB, RabbitMQ, Valkey, Memcached) to be ready before the first write.
  - Each step writes the ControlPlane's C(spec.services.<service>.image) of the services it moves, under its
    own field manager (C(c5c3.cobaltcore.release); phase 4 never sends image fields), then waits until
    each of them runs the new tag - C(status.installedRelease) is the tag, no C(upgradePhase), C(Ready) for
    the CR's generation - before the next step is written. A terminal database upgrade reason (for example
    C(MigrateFailed), C(DowngradeNotSupported)) fails at once naming the service, its reason and the step;
    later steps are not written.
  - The plan is made from what the services run, so a run that stopped anywhere resumes on the next run at
    the step it was in, and a finished move reports nothing to do (C(changed=false)).
  - In check mode it returns the plan and writes nothing; with C(--diff) the diff shows each service's tag
    before and after.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
options:
  namespace:
    description:
      - The ControlPlane's namespace (C(openstack) for the region's own, C(openstack-<name>) for a tenant's).
    type: str
    default: openstack
  name:
    description:
      - The ControlPlane's name.
    type: str
    required: true
  release:
    description:
      - The OpenStack release the cluster is to run, C(YEAR.1) or C(YEAR.2) (for example C(2026.1)); the
        release the cluster runs or the one after it.
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
    name: "{{ cobaltcore_region }}"
    release: "2026.1"
  check_mode: true
  register: release_plan

- name: Move a tenant's OpenStack cluster to 2026.1
  c5c3.cobaltcore.openstack_release:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    namespace: openstack-acme
    name: acme
    release: "2026.1"
"""

RETURN = r"""
release:
  description: The release the cluster moves to (O(release)).
  returned: always
  type: str
running:
  description: The release each service ran when the module looked first (service name to release).
  returned: when the ControlPlane exists
  type: dict
plan:
  description:
    - The steps in order, each with its C(phase) and C(services) (per service, the image tags C(from) and
      C(to)); a resumed run lists only the steps left.
  returned: when the ControlPlane exists
  type: list
  elements: dict
plan_lines:
  description: The plan as text, one line per step.
  returned: when the ControlPlane exists
  type: list
  elements: str
steps:
  description: The steps this run applied, each with C(phase), C(services), C(changed) and C(seconds).
  returned: when not in check mode
  type: list
  elements: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import c5c3_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import releases


class OpenStackReleaseModule(KubeModule):
    argument_spec = dict(
        namespace=dict(type="str", default="openstack"),
        name=dict(type="str", required=True),
        release=dict(type="str", required=True),
        wait_timeout=dict(type="int", default=1800),
        wait_sleep=dict(type="int", default=5),
    )

    def run(self):
        params = self.params
        self.results["release"] = params["release"]
        subject = "ControlPlane %s/%s" % (params["namespace"], params["name"])
        control_plane = c5c3_api.control_planes(self.client, params["namespace"], params["name"])
        if control_plane is None:
            self.fail("%s does not exist: phase 4 (playbooks/control_plane.yml) creates it" % subject)
        services = c5c3_api.release_services(self.client, control_plane)
        plan = releases.plan(dict((s, releases.running_tag(o)) for s, o in services.items()),
                             params["release"], subject)
        written = releases.written_tags(control_plane)
        self.results.update(running=plan["from"], plan=plan["steps"], plan_lines=releases.plan_lines(plan),
                            changed=any(written.get(s) != move["to"] for step in plan["steps"]
                                        for s, move in step["services"].items()))
        if self.diff and plan["steps"]:
            tags = dict((s, releases.running_tag(o)) for s, o in services.items())
            after = dict(tags)
            for step in plan["steps"]:
                after.update((s, move["to"]) for s, move in step["services"].items())
            self.results["diff"] = {"before": {"images": tags}, "after": {"images": after},
                                    "before_header": subject, "after_header": subject}
        if self.check_mode or not plan["steps"]:
            return
        infrastructure = c5c3_api.reports(self.client, params["namespace"], params["name"], "infrastructure")[0]
        if not infrastructure["ready"]:
            self.fail("%s: its infrastructure is not ready, no release step was written: %s"
                      % (subject, health.summary(infrastructure)))
        steps = []
        self.results["steps"] = steps
        c5c3_api.move_release(self.client, control_plane, services, plan, params["wait_timeout"],
                              params["wait_sleep"], progress=self.progress, step_done=steps.append)
        self.results["changed"] = any(step["changed"] for step in steps)


def main():
    OpenStackReleaseModule()()


if __name__ == "__main__":
    main()

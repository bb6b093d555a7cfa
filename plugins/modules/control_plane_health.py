#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: control_plane_health
short_description: The health of an OpenStack cluster's ControlPlane, by dependency phase
version_added: 0.6.0
description:
  - Reads a C(ControlPlane) (C(c5c3.io/v1alpha1)) and the CRs the c5c3-operator created from it in its
    namespace (those it is the controller of) - C(MariaDB), C(RabbitmqCluster), C(Valkey), C(Memcached),
    C(Keystone), C(Glance), C(Placement), C(Nova), C(Neutron), C(Cinder), C(Cortex), C(Tempest) - and the
    K-ORC objects of the namespace (the service catalog, which phase 5 creates); one LIST per kind.
  - Judges each object by the engine's readiness rules (C(docs/readiness.md)) and reports the ControlPlane
    by seed 003's deployment phases - infrastructure, identity, service-catalog, core, compute, scheduler
    (optional), testing (optional) - each C(ready), C(blocked), C(failed) or C(not-enabled); then the first
    phase not ready, the object that blocks it (its condition, reason and message) and the phases waiting
    behind it. C(docs/health.md) describes the report.
  - With O(wait), polls until every enabled phase (up to and including O(through)) is ready; a terminal verdict (for
    example a K-ORC object with a terminal reason, an object being deleted) fails at once, a timeout fails
    naming the first phase not ready, the blocking CR, why, and the phases waiting behind it.
  - Without O(wait) it reports and never fails on the health it finds (only on API errors).
  - Never writes.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
options:
  namespace:
    description:
      - The ControlPlane's namespace (C(openstack) for the region's own, C(openstack-<name>) for a tenant's).
      - Ignored with O(all_namespaces).
    type: str
    default: openstack
  name:
    description:
      - The ControlPlane. Omitted, every ControlPlane of O(namespace) is judged.
    type: str
  all_namespaces:
    description: Judge every ControlPlane of the cluster, whatever its namespace (one LIST per kind in all).
    type: bool
    default: false
  through:
    description:
      - The last phase that counts for RV(ready), the wait and its failures; later phases are reported but
        not waited for. Omitted, every phase counts.
      - Phase 4 of the region (role C(c5c3.cobaltcore.control_plane)) waits with C(through=infrastructure), as the
        Keystone becomes ready only with phase 5's bootstrap, and phase 5 creates the K-ORC catalog.
    type: str
    choices: [infrastructure, identity, service-catalog, core, compute, scheduler, testing]
  wait:
    description: Wait until every enabled phase (up to and including O(through)) of every ControlPlane judged is ready.
    type: bool
    default: false
  timeout:
    description: Seconds to wait with O(wait).
    type: int
    default: 600
  sleep:
    description: Longest pause in seconds between two checks.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: Wait for the infrastructure of the region's ControlPlane
  c5c3.cobaltcore.control_plane_health:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    namespace: openstack
    name: "{{ cobaltcore_region }}"
    through: infrastructure
    wait: true
    timeout: 900

- name: The health of every OpenStack cluster on the control-plane cluster
  c5c3.cobaltcore.control_plane_health:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    all_namespaces: true
  register: health

- name: Show it, one line per phase
  ansible.builtin.debug:
    msg: "{{ health.table }}"
"""

RETURN = r"""
ready:
  description: Every ControlPlane judged is ready through O(through) (false when none was found).
  returned: always
  type: bool
phases:
  description:
    - The phases of the ControlPlane (of the first one when several were judged; see RV(control_planes)),
      each with C(phase), C(name), C(optional), C(state) (C(ready), C(blocked), C(failed), C(not-enabled)),
      C(counted) (within O(through)) and C(components).
    - A component has C(name), C(enabled), C(kinds), C(state) and C(objects); an object has C(kind),
      C(name), C(namespace), C(found), C(ready), C(terminal), C(missing) (the readiness rule's words) and
      C(condition) (C(type), C(status), C(reason), C(message) of the condition that says why).
  returned: always
  type: list
  elements: dict
table:
  description: The report as text, for humans - per ControlPlane a header line, one line per phase, and a
    line naming the blocking object and the phases waiting behind it.
  returned: always
  type: list
  elements: str
summary:
  description: One line per ControlPlane that is not ready - the first phase not ready, its blocking object and why.
  returned: always
  type: list
  elements: str
control_planes:
  description:
    - One report per ControlPlane judged - C(namespace), C(name), C(control_plane) (its status.phase and
      Ready condition), C(phases), C(ready), C(failed), C(first_not_ready), C(blocking) (the object, its
      C(component), C(phase) and C(text)), C(waiting) (later phases not ready) and C(table).
  returned: always
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

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import c5c3_api
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import control_plane_health as health


class ControlPlaneHealthModule(KubeModule):
    argument_spec = dict(
        namespace=dict(type="str", default="openstack"),
        name=dict(type="str"),
        all_namespaces=dict(type="bool", default=False),
        through=dict(type="str", choices=list(health.PHASE_NAMES)),
        wait=dict(type="bool", default=False),
        timeout=dict(type="int", default=600),
        sleep=dict(type="int", default=5),
    )
    module_kwargs = dict(mutually_exclusive=[("name", "all_namespaces")])

    def run(self):
        params = self.params
        namespace = None if params["all_namespaces"] else params["namespace"]
        self.publish([])
        if params["wait"]:
            try:
                found = c5c3_api.await_health(self.client, namespace, params["name"], params["through"],
                                              params["timeout"], params["sleep"], progress=self.progress)
            except WaitError as exc:
                self.publish(exc.objects)
                self.fail(str(exc))
        else:
            found = c5c3_api.reports(self.client, namespace, params["name"], params["through"])
        self.publish(found)

    def publish(self, reports):
        lines = []
        for report in reports:
            report["table"] = health.table(report)
            lines.extend(report["table"])
        if not reports:
            where = "namespace %s" % self.params["namespace"] if not self.params["all_namespaces"] else "this cluster"
            lines.append("no ControlPlane in %s" % where)
        self.results.update(
            control_planes=reports,
            phases=reports[0]["phases"] if reports else [],
            table=lines,
            summary=[health.summary(r) for r in reports if not r["ready"]],
            ready=bool(reports) and all(r["ready"] for r in reports),
        )


def main():
    ControlPlaneHealthModule()()


if __name__ == "__main__":
    main()

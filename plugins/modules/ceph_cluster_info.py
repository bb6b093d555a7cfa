#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: ceph_cluster_info
short_description: Read a storage pool's Ceph fsid and monitors from Rook's outputs
version_added: 0.6.0
description:
  - Reads what Rook wrote for the pool's C(CephCluster) (C(ceph.rook.io/v1)) - its C(status) (phase, state, message,
    C(ceph.health) and its checks, C(ceph.fsid)), the ConfigMap C(rook-ceph-mon-endpoints) (key C(data),
    C(a=10.0.0.1:6789,b=...)) and the C(fsid) of the Secret C(rook-ceph-mon) - and returns the fsid and the monitors
    that the tenants' phase configures Cinder, Glance and Nova with.
  - The Secret's other keys (the mon and admin keys) are never read into the result; the fsid is not secret.
  - Fails, naming every problem, when an output is missing or malformed, when the CephCluster's C(status.ceph.fsid)
    differs from the Secret's, or when O(require_health) is set and the health is not in it.
  - Never writes.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
options:
  pool:
    description: The storage pool's name, for messages.
    type: str
  namespace:
    description: The namespace of the CephCluster and its outputs.
    type: str
    default: rook-ceph
  name:
    description: The CephCluster's name.
    type: str
    default: rook-ceph
  require_health:
    description: Fail unless C(status.ceph.health) is one of these (empty - report only).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Read the fsid and monitors of st-pool-a's Ceph
  c5c3.cobaltcore.ceph_cluster_info:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    pool: st-pool-a
    require_health: [HEALTH_OK]
  register: ceph

- name: Keep them for the tenants' phase
  ansible.builtin.set_fact:
    cobaltcore_ceph:
      fsid: "{{ ceph.fsid }}"
      monitors: "{{ ceph.monitors }}"
"""

RETURN = r"""
fsid:
  description: The Ceph cluster's fsid (the Secret C(rook-ceph-mon), key C(fsid); equal to C(status.ceph.fsid)).
  returned: success
  type: str
  sample: 1b3bd3b4-37ac-4f2c-9b2d-0ad1e4b0f0d1
monitors:
  description: The monitors' endpoints, C(<address>:<port>), in mon order (C(a), C(b), ...).
  returned: success
  type: list
  elements: str
  sample: ["10.96.12.1:6789", "10.96.40.7:6789", "10.100.3.9:6789"]
mons:
  description: The monitors with their names, C(name) and C(endpoint).
  returned: success
  type: list
  elements: dict
health:
  description: C(status.ceph.health) (HEALTH_OK, HEALTH_WARN, HEALTH_ERR).
  returned: success
  type: str
checks:
  description: The health checks Ceph reports (C(status.ceph.details)), name -> message.
  returned: success
  type: dict
phase:
  description: The CephCluster's C(status.phase).
  returned: success
  type: str
state:
  description: The CephCluster's C(status.state).
  returned: success
  type: str
message:
  description: The CephCluster's C(status.message).
  returned: success
  type: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph_cluster


class CephClusterInfoModule(KubeModule):
    argument_spec = dict(
        pool=dict(type="str"),
        namespace=dict(type="str", default="rook-ceph"),
        name=dict(type="str", default=ceph_cluster.CLUSTER_NAME),
        require_health=dict(type="list", elements="str", default=[]),
    )

    def run(self):
        params = self.params
        unknown = [h for h in params["require_health"] if h not in ceph_cluster.HEALTHS]
        if unknown:
            raise InputError([problem("require_health", "%s not one of %s" % (
                ", ".join(unknown), ", ".join(ceph_cluster.HEALTHS)))])
        namespace = params["namespace"]
        cluster = self.client.get(self.client.resource("ceph.rook.io/v1", "CephCluster"), params["name"], namespace)
        config_map = self.client.get(self.client.resource("v1", "ConfigMap"), ceph_cluster.MON_ENDPOINTS, namespace)
        secret = self.client.get(self.client.resource("v1", "Secret"), ceph_cluster.MON_SECRET, namespace)
        try:
            info = ceph_cluster.cluster_info(cluster, config_map, secret, params["pool"])
        except InputError as exc:
            self.fail("Rook's outputs are not complete: %s" % exc, problems=exc.problems)
        self.results.update(info)
        problems = ceph_cluster.health_problems(info, params["require_health"], params["pool"]) \
            if params["require_health"] else []
        if problems:
            self.fail("; ".join(problems), problems=problems)


def main():
    CephClusterInfoModule()()


if __name__ == "__main__":
    main()

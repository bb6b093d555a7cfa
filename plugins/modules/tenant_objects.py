#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: tenant_objects
short_description: Find one tenant's objects on a control-plane or storage cluster
version_added: 0.6.0
description:
  - Lists what phase 7 (and phase 5) made for one tenant (OpenStackCluster C(name)) on one cluster, for
    C(playbooks/tenant_remove.yml).
  - On a control-plane cluster (O(side=control_plane)) - the K-ORC objects and the C(Keystone) of namespace
    C(openstack-<name>), its C(ControlPlane), its Secrets and the namespace itself, the last three only
    with the composition's labels (C(app.kubernetes.io/managed-by=c5c3.cobaltcore),
    C(c5c3.io/openstack-cluster-name=<name>)).
  - On a storage cluster (O(side=storage)) - the tenant's C(CephClient), C(CephObjectStoreUser),
    C(CephObjectStore), C(CephFilesystem) and C(CephBlockPool) objects in C(rook-ceph), by the same labels.
  - One LIST per kind; a kind the cluster does not serve has no objects. Never writes, never returns
    object contents (Secrets' data included), only references.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
options:
  name:
    description: The tenant's OpenStackCluster name.
    type: str
    required: true
  side:
    description: What the cluster is for the tenant.
    type: str
    required: true
    choices: [control_plane, storage]
"""

EXAMPLES = r"""
- name: Find the tenant's Ceph objects on a storage pool
  c5c3.cobaltcore.tenant_objects:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    name: customer-a-prod
    side: storage
  register: found
"""

RETURN = r"""
side:
  description: O(side), for whoever collects the results of several clusters.
  returned: always
  type: str
objects:
  description: The objects found, by reference.
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
      description: The object's namespace, null for a Namespace.
      type: str
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import tenants


class TenantObjectsModule(KubeModule):
    argument_spec = dict(
        name=dict(type="str", required=True),
        side=dict(type="str", required=True, choices=[tenants.CONTROL_PLANE, tenants.STORAGE]),
    )

    def run(self):
        objects = []
        for query in tenants.removal_queries(self.params["name"], self.params["side"]):
            try:
                rtype = self.client.resource(query["api_version"], query["kind"])
            except KubeError as exc:
                if exc.status != 404:
                    raise
                continue  # not served: nothing of that kind exists
            namespace = query["namespace"] if rtype.namespaced else None
            for item in self.client.list(rtype, namespace, label_selector=query["label_selector"]):
                meta = item["metadata"]
                objects.append({"apiVersion": query["api_version"], "kind": query["kind"],
                                "name": meta["name"], "namespace": meta.get("namespace")})
        self.results.update(side=self.params["side"], objects=objects)


def main():
    TenantObjectsModule()()


if __name__ == "__main__":
    main()

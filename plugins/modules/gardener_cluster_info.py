#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: gardener_cluster_info
short_description: Read objects on clusters of the region through their Gardener Shoots
version_added: 0.6.0
description:
  - Finds each cluster's Shoots in the project (labelled C(c5c3.io/cluster) with the cluster's name, as
    M(c5c3.cobaltcore.gardener_shoot) labels them) and reads objects on the cluster through a short-lived admin
    kubeconfig (C(shoots/adminkubeconfig), ten minutes) that stays in the module's memory.
  - For a cluster the inventory no longer lists, whose kubeconfig the run does not fetch any more; decommission.yml
    reads what still runs on it before its Shoot goes.
  - A Shoot that advertises no kube-apiserver address never had an API server that anything could be created
    through, so nothing is read there (RV(clusters[].api_server) false).
  - A kind the cluster does not serve and a read it refuses are reported in that read's C(error), as
    M(c5c3.cobaltcore.cluster_info) reports them; a cluster that does not answer fails the task.
  - Writes nothing. Gardener stores nothing for an admin kubeconfig request, so check mode reads the same.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.gardener_project
  - c5c3.cobaltcore.object_reads
options:
  clusters:
    description: The clusters, by the value of their Shoots' label C(c5c3.io/cluster).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Read the ControlPlanes still on a cluster the inventory no longer has
  c5c3.cobaltcore.gardener_cluster_info:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    project: cobaltcore
    clusters: [eu-de-1-control-plane-b]
    objects:
      - {api_version: c5c3.io/v1alpha1, kind: ControlPlane}
  register: cluster_read
"""

RETURN = r"""
clusters:
  description: One entry per Shoot of the clusters (a cluster without a Shoot has one entry with RV(clusters[].shoot) null).
  returned: always
  type: list
  elements: dict
  contains:
    cluster:
      description: The cluster.
      type: str
    shoot:
      description: The Shoot's name, or null when the cluster has none.
      type: str
    api_server:
      description: Whether the Shoot advertises a kube-apiserver address (and its cluster was read).
      type: bool
    objects:
      description: One entry per read of O(objects) (empty when the cluster was not read), as M(c5c3.cobaltcore.cluster_info) returns them.
      type: list
      elements: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import connection
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.read import INFO_READ_SPEC, info_read, info_read_problems
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers.gardener_api import (
    PROJECT_KWARGS, PROJECT_OPTIONS, fetch_admin_kubeconfig, namespace_of)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming

# Gardener's shortest admin kubeconfig: the reads take seconds.
EXPIRATION_SECONDS = 600


class GardenerClusterInfoModule(KubeModule):
    argument_spec = dict(
        PROJECT_OPTIONS,
        clusters=dict(type="list", elements="str", required=True),
        objects=dict(type="list", elements="dict", default=[], options=INFO_READ_SPEC),
    )
    module_kwargs = PROJECT_KWARGS

    def run(self):
        problems = info_read_problems(self.params["objects"], "gardener_cluster_info")
        if problems:
            raise InputError(problems)
        namespace = namespace_of(self.client, self.params)
        rtype = self.client.resource(gardener.API_VERSION, "Shoot")
        shoots = self.client.list(rtype, namespace)
        self.results["clusters"] = []
        for cluster in self.params["clusters"]:
            found = sorted((s for s in shoots if (s["metadata"].get("labels") or {}).get(naming.CLUSTER_LABEL) == cluster),
                           key=lambda s: s["metadata"]["name"])
            if not found:
                self.results["clusters"].append({"cluster": cluster, "shoot": None, "api_server": False, "objects": []})
            for shoot in found:
                self.results["clusters"].append(self.read(namespace, cluster, shoot))

    def read(self, namespace, cluster, shoot):
        name = shoot["metadata"]["name"]
        entry = {"cluster": cluster, "shoot": name, "api_server": gardener.advertises_api_server(shoot), "objects": []}
        if not entry["api_server"]:
            return entry
        text, dummy = fetch_admin_kubeconfig(self.client, namespace, name, EXPIRATION_SECONDS)
        self.hide(*masking.kubeconfig_credentials(text))
        shoot_client = connection.KubeClient({"kubeconfig": text}, retries=2, retry_budget=20)
        try:
            entry["objects"] = [info_read(shoot_client, item) for item in self.params["objects"]]
        except KubeError as error:
            raise KubeError("cluster %s (Shoot %s/%s): %s" % (cluster, namespace, name, error))
        return entry


def main():
    GardenerClusterInfoModule()()


if __name__ == "__main__":
    main()

#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: cluster_info
short_description: A Kubernetes API server's version and the API groups it serves
version_added: 0.4.0
description:
  - Asks the API server for its version (C(/version)) and the API groups and versions it serves
    (C(/api), C(/apis)), with three requests and no full discovery of every resource.
  - The preflight uses it to check that every cluster of the region is reachable, runs a supported
    Kubernetes version and serves the API groups its phases need.
  - An unreachable API server fails after three attempts within about ten seconds (the preflight
    retries the task itself), not after the minute of retries other modules allow.
  - With O(objects) also reads the objects the preflight needs to see before any phase writes (a Project,
    the BMCs), in the same call; a kind the server does not serve or a read it refuses is reported in that
    read's C(error), not as a failure. It never reads a Secret's data, only, with O(objects[].metadata_only),
    its metadata.
  - Never writes; check mode behaves the same.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.object_reads
"""

EXAMPLES = r"""
- name: Ask the API server for its version and API groups
  c5c3.cobaltcore.cluster_info:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
  register: cluster

- name: Read the Project and every Seed of a garden
  c5c3.cobaltcore.cluster_info:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    objects:
      - {api_version: core.gardener.cloud/v1beta1, kind: Project, name: cobaltcore}
      - {api_version: core.gardener.cloud/v1beta1, kind: Seed}
  register: garden

- name: Show the server's version
  ansible.builtin.debug:
    msg: "{{ cluster.version.gitVersion }} serves {{ cluster.api_groups | length }} API groups"
"""

RETURN = r"""
version:
  description: The server's C(/version) answer.
  returned: success
  type: dict
  sample: {"major": "1", "minor": "37", "gitVersion": "v1.37.2", "platform": "linux/amd64"}
api_groups:
  description: The API groups the server serves, sorted; the core group is C(core).
  returned: success
  type: list
  elements: str
  sample: ["apps", "core", "core.gardener.cloud"]
api_versions:
  description: Every served group version (C(v1) for the core group), sorted.
  returned: success
  type: list
  elements: str
  sample: ["apps/v1", "core.gardener.cloud/v1beta1", "v1"]
objects:
  description: One entry per read of O(objects), in their order.
  returned: success
  type: list
  elements: dict
  contains:
    api_version:
      description: The read's C(apiVersion).
      type: str
    kind:
      description: The read's kind.
      type: str
    name:
      description: The object read by name, or null for a list.
      type: str
    items:
      description: The objects found, without C(metadata.managedFields); empty when a named object does not exist.
      type: list
      elements: dict
    error:
      description: Why the read found nothing to go by (kind not served, forbidden), or null.
      type: str
    status:
      description: The HTTP status of a failed read, or null.
      type: int
requests:
  description: API requests sent, by verb.
  returned: always
  type: dict
  sample: {"GET": 3}
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.read import INFO_READ_SPEC, info_read, info_read_problems
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule


class ClusterInfoModule(KubeModule):
    argument_spec = dict(objects=dict(type="list", elements="dict", default=[], options=INFO_READ_SPEC))
    # It answers "is the server reachable": a dead server is reported, not waited for.
    client_options = dict(retries=2, retry_budget=10)

    def run(self):
        problems = info_read_problems(self.params["objects"], "cluster_info")
        if problems:
            raise InputError(problems)
        dummy, version = self.client.request("GET", "/version")
        dummy, core = self.client.request("GET", "/api")
        dummy, groups = self.client.request("GET", "/apis")
        api_versions = set(core.get("versions") or [])
        api_groups = set(["core"]) if api_versions else set()
        for group in groups.get("groups") or []:
            api_groups.add(group["name"])
            api_versions.update(item["groupVersion"] for item in group.get("versions") or [])
        self.results.update(version=version, api_groups=sorted(api_groups), api_versions=sorted(api_versions),
                            objects=[info_read(self.client, item) for item in self.params["objects"]])


def main():
    ClusterInfoModule()()


if __name__ == "__main__":
    main()

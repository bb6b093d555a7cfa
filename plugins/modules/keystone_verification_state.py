#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: keystone_verification_state
short_description: Tell which OpenStack clusters' Keystones are as the last verified run left them
version_added: 0.6.0
description:
  - For each OpenStack cluster, computes a digest of what the Keystone steps of the bootstrap depend on, as
    Kubernetes shows it - the cluster's settings, its Keystone CR (uid, generation, C(status.endpoint)), the
    resourceVersions of its Secrets (label C(c5c3.io/openstack-cluster-name); values are never read into the
    result) and its K-ORC objects (uid, generation, C(status.id)) - and compares it with the record the
    keystone_bootstrap role wrote after the cluster's last verification (ConfigMap C(keystone-bootstrap-verified)
    in its namespace).
  - A cluster whose digest equals its record is C(unchanged) - the role then makes no Keystone calls for it
    and uses the recorded K-ORC credential's ID and URLs. A change made in Keystone directly is not visible
    here; the role's C(recheck=always) verifies every cluster.
  - Reads with one list per kind for all clusters, whatever their number.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.read_only
  - c5c3.cobaltcore.kube_connection
options:
  clusters:
    description: The OpenStack clusters.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The cluster's name (the value of its C(c5c3.io/openstack-cluster-name) label).
        type: str
        required: true
      namespace:
        description: Its namespace.
        type: str
        required: true
      settings:
        description: Its settings, as the role checked them (part of the digest; no secret values).
        type: dict
        required: true
      keystone:
        description: Its Keystone CR (C(api_version), C(kind), C(name)); omitted when the cluster has none.
        type: dict
"""

EXAMPLES = r"""
- name: Find the clusters whose Keystone needs no calls
  c5c3.cobaltcore.keystone_verification_state:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    clusters:
      - name: tenant-a
        namespace: openstack-tenant-a
        settings: {region: lab-region-1, services: [keystone, glance]}
        keystone: {api_version: keystone.openstack.c5c3.io/v1alpha1, kind: Keystone, name: keystone}
  register: state

- name: Their names
  ansible.builtin.debug:
    msg: "{{ state.unchanged }}"
"""

RETURN = r"""
clusters:
  description: Per cluster, in the order given.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: The cluster's name.
      type: str
    namespace:
      description: Its namespace.
      type: str
    digest:
      description: The digest now.
      type: str
    recorded_digest:
      description: The digest of its last verification, null without a record.
      type: str
    unchanged:
      description: Whether the two are equal.
      type: bool
    korc:
      description:
        - When unchanged, the recorded K-ORC credential's C(application_credential_id), C(auth_url),
          C(admin_auth_url) and C(region) (no secret); else null.
      type: dict
unchanged:
  description: The names of the unchanged clusters.
  returned: success
  type: list
  elements: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.read import label_selector
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import recheck
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming


def _by_cluster(items):
    """{(namespace, OpenStack cluster name label): [items]}."""
    result = {}
    for item in items:
        meta = item.get("metadata") or {}
        key = (meta.get("namespace"), (meta.get("labels") or {}).get(naming.OPENSTACK_CLUSTER_NAME_LABEL))
        result.setdefault(key, []).append(item)
    return result


class KeystoneVerificationStateModule(KubeModule):
    argument_spec = dict(
        clusters=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            namespace=dict(type="str", required=True),
            settings=dict(type="dict", required=True),
            keystone=dict(type="dict", no_log=False),
        )),
    )

    def run(self):
        clusters = self.params["clusters"]
        recheck.check_clusters(clusters)
        self.results.update(clusters=[], unchanged=[])
        if not clusters:
            return
        # Every OpenStack cluster's objects carry the label: the LISTs select these clusters' values (a run over
        # one tenant does not read the others'), and each cluster's objects are picked by its value below.
        selector = label_selector([{"labels": {naming.OPENSTACK_CLUSTER_NAME_LABEL: entry["name"]}}
                                   for entry in clusters]) or naming.OPENSTACK_CLUSTER_NAME_LABEL
        client = self.client
        records = dict((m["metadata"].get("namespace"), m) for m in client.list(
            client.resource("v1", "ConfigMap"), field_selector="metadata.name=%s" % recheck.RECORD_NAME,
            label_selector=selector))
        # Only names and resourceVersions of the Secrets are used: their data is never read.
        secrets = _by_cluster({"metadata": s.get("metadata") or {}} for s in client.list(
            client.resource("v1", "Secret"), label_selector=selector, metadata_only=True))
        korc = _by_cluster(o for kind in recheck.KORC_KINDS for o in client.list(
            client.resource(naming.KORC_API_VERSION, kind), label_selector=selector))
        keystones = self.keystones(clusters)
        for entry in clusters:
            key = (entry["namespace"], entry["name"])
            current = recheck.digest(entry["settings"], keystones.get(entry["name"]), secrets.get(key, []),
                                     korc.get(key, []))
            verdict = recheck.verdict(entry, current, records.get(entry["namespace"]))
            self.results["clusters"].append(verdict)
            if verdict["unchanged"]:
                self.results["unchanged"].append(entry["name"])

    def keystones(self, clusters):
        """{cluster name: its Keystone CR or None}, one list per Keystone kind."""
        result = {}
        listed = {}
        for entry in clusters:
            ref = entry.get("keystone")
            if not ref:
                continue
            key = (ref["api_version"], ref["kind"])
            if key not in listed:
                try:
                    listed[key] = dict(((o["metadata"].get("namespace"), o["metadata"].get("name")), o)
                                       for o in self.client.list(self.client.resource(*key)))
                except KubeError as error:
                    if error.status != 404:
                        raise
                    listed[key] = {}
            result[entry["name"]] = listed[key].get((entry["namespace"], ref["name"]))
        return result


def main():
    KeystoneVerificationStateModule()()


if __name__ == "__main__":
    main()

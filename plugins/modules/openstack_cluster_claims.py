#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: openstack_cluster_claims
short_description: Read a region's OpenStackCluster claims from the management cluster
version_added: 0.6.0
description:
  - Lists the C(OpenStackCluster) claims (C(c5c3.io/v1alpha1)) of one region on the management cluster - those
    whose C(spec.region) is O(region), in every namespace or in O(namespace) - for phase 7
    (C(tenants_claims_source=management_cluster)), in the shape filter C(c5c3.cobaltcore.tenant_claims) returns
    for a directory; validating them is left to C(c5c3.cobaltcore.validate_claims).
  - With O(install_crd), first applies the claims' C(CustomResourceDefinition) C(openstackclusters.c5c3.io), built
    from the seed XRD's schema (module_utils C(region/claim_schema.py)) with the status subresource, and waits
    until it is C(Established). The CRD is only sent when it differs (server-side apply); check mode sends it as
    a server dry run. A CRD of that name without the label C(app.kubernetes.io/managed-by=c5c3.cobaltcore) is
    another owner's (Crossplane makes it from the XRD) and is used as it is, never changed; it must serve
    C(v1alpha1) with the status subresource.
  - One LIST (or one GET with O(name)); a cluster that does not serve the kind has no claims.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
attributes:
  check_mode:
    description: Reads the same way; the CRD is applied as a server dry run.
    support: full
  diff_mode:
    description: Shows the CRD's fields before and after when it changes.
    support: full
options:
  region:
    description: The region; claims of other regions are left out.
    type: str
    required: true
  namespace:
    description: The one namespace to read; omitted, every namespace.
    type: str
  name:
    description: Only the claim of this name (C(playbooks/tenant_remove.yml)).
    type: str
  install_crd:
    description: Apply the claims' CRD before reading.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Install the claims' CRD and read the region's claims
  c5c3.cobaltcore.openstack_cluster_claims:
    kubeconfig: "{{ hostvars[groups['management'][0]].cobaltcore_kubeconfig }}"
    region: "{{ cobaltcore_region }}"
    install_crd: true
  register: claims

- name: Judge them
  ansible.builtin.debug:
    msg: "{{ claims.claims | c5c3.cobaltcore.validate_claims(region) }}"
  vars:
    region: {name: "{{ cobaltcore_region }}", groups: "{{ groups }}", hostvars: "{{ hostvars }}"}
"""

RETURN = r"""
claims:
  description:
    - The claims, by namespace and name - C(apiVersion), C(kind), C(metadata) (C(name), C(namespace) and, when set,
      C(labels) and C(annotations) without kubectl's last-applied configuration) and C(spec); no status.
  returned: always
  type: list
  elements: dict
generations:
  description: C(metadata.generation) of each claim, by C(<namespace>/<name>) (what its status is written for).
  returned: always
  type: dict
  sample: {"tenant-a/customer-a-prod": 3}
served:
  description: Whether the cluster serves the claims' kind (false before the CRD is installed).
  returned: always
  type: bool
crd:
  description: The result of applying the CRD (C(created), C(configured), C(unchanged)), or C(foreign) for another
    owner's CRD, left as it is.
  returned: when O(install_crd) is true
  type: str
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import claim_schema, naming

# kubectl's copy of the last applied manifest: the claim itself again, only noise here.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def claim_of(item):
    """A claim as a tenants directory would hold it: no status, no server bookkeeping."""
    meta = item.get("metadata") or {}
    metadata = {"name": meta.get("name"), "namespace": meta.get("namespace")}
    if meta.get("labels"):
        metadata["labels"] = dict(meta["labels"])
    annotations = dict((k, v) for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED)
    if annotations:
        metadata["annotations"] = annotations
    claim = {"apiVersion": item.get("apiVersion") or naming.CLAIM_API_VERSION,
             "kind": item.get("kind") or naming.CLAIM_KIND, "metadata": metadata}
    if "spec" in item:
        claim["spec"] = item["spec"]
    return claim


class OpenStackClusterClaimsModule(KubeModule):
    argument_spec = dict(
        region=dict(type="str", required=True),
        namespace=dict(type="str"),
        name=dict(type="str"),
        install_crd=dict(type="bool", default=False),
    )

    def install_crd(self):
        crd = claim_schema.crd()
        live = self.client.get(self.client.resource(crd["apiVersion"], crd["kind"]), claim_schema.CRD_NAME)
        labels = ((live or {}).get("metadata") or {}).get("labels") or {}
        if live is not None and labels.get(naming.MANAGED_BY_LABEL) != naming.MANAGED_BY:
            # Another owner's (Crossplane makes it from the XRD's claimNames): used as it is, never taken over.
            versions = dict((v.get("name"), v) for v in live["spec"].get("versions") or [])
            version = versions.get(claim_schema.CLAIM_VERSION) or {}
            if not version.get("served") or "status" not in (version.get("subresources") or {}):
                raise KubeError("CRD %s belongs to another owner and does not serve %s with a status subresource; "
                                "phase 7 cannot write the claims' status" % (claim_schema.CRD_NAME,
                                                                             naming.CLAIM_API_VERSION))
            self.results["crd"] = "foreign"
            return
        self.results["crd"] = self.record(self.applier().apply([crd]))[0]["result"]

    def run(self):
        if self.params["install_crd"]:
            self.install_crd()
        try:
            rtype = self.client.resource(naming.CLAIM_API_VERSION, naming.CLAIM_KIND)
        except KubeError as exc:
            if exc.status != 404:
                raise
            self.results.update(claims=[], generations={}, served=False)
            return
        namespace, name = self.params["namespace"], self.params["name"]
        if name and namespace:
            found = self.client.get(rtype, name, namespace)
            items = [found] if found else []
        else:
            items = self.client.list(rtype, namespace)
            if name:
                items = [item for item in items if item["metadata"]["name"] == name]
        items = [item for item in items if (item.get("spec") or {}).get("region") == self.params["region"]]
        items.sort(key=lambda item: (item["metadata"].get("namespace"), item["metadata"]["name"]))
        self.results.update(
            claims=[claim_of(item) for item in items],
            generations=dict(("%s/%s" % (item["metadata"]["namespace"], item["metadata"]["name"]),
                              item["metadata"].get("generation")) for item in items),
            served=True)


def main():
    OpenStackClusterClaimsModule()()


if __name__ == "__main__":
    main()

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""keystone_verification_state: unchanged only while Kubernetes shows what the record saw."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import recheck
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.modules import keystone_verification_state

from module_harness import kubeconfig, run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

LABEL = "c5c3.io/openstack-cluster-name"


def clusters(*names):
    return [{"name": n, "namespace": "openstack-" + n, "settings": {"region": "r1", "services": ["keystone"]}}
            for n in names]


def seed(kube, name, password="c2VjcmV0"):  # noqa: F811
    kube.add({"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "keystone-admin-credentials", "namespace": "openstack-" + name, "labels": {LABEL: name}},
        "data": {"password": password}})


def run(kube, names):  # noqa: F811
    return run_module(keystone_verification_state.main, {"kubeconfig": kubeconfig(), "clusters": clusters(*names)})


def test_unchanged_only_after_a_record_and_until_a_secret_changes(kube):  # noqa: F811
    for kind in recheck.KORC_KINDS:
        kube.kinds[(naming.KORC_API_VERSION, kind)] = (kind.lower() + "s", True)
    for name in ("t1", "t2"):
        seed(kube, name)
    result, output = run(kube, ["t1", "t2"])
    assert not result.get("failed"), output
    assert result["unchanged"] == [] and not result["changed"]
    assert "c2VjcmV0" not in output
    for cluster in result["clusters"]:
        kube.add(recheck.record_manifest(cluster["name"], cluster["namespace"], cluster["digest"],
                                         {"application_credential_id": "ac-" + cluster["name"]}, "now"))
    result, _output = run(kube, ["t1", "t2"])
    assert result["unchanged"] == ["t1", "t2"]
    assert result["clusters"][0]["korc"]["application_credential_id"] == "ac-t1"
    # A rotated Secret of t2 (new resourceVersion) brings t2's Keystone calls back, not t1's.
    seed(kube, "t2", password="b3RoZXI=")
    result, _output = run(kube, ["t1", "t2"])
    assert result["unchanged"] == ["t1"]
    # So does a K-ORC object of t1 that K-ORC re-created (a new OpenStack ID).
    kube.add({"apiVersion": naming.KORC_API_VERSION, "kind": "Service", "metadata": {
        "name": "glance", "namespace": "openstack-t1", "labels": {LABEL: "t1"}}, "status": {"id": "new"}})
    result, _output = run(kube, ["t1", "t2"])
    assert result["unchanged"] == []
    # Reads only: a list per kind, whatever the number of clusters; the Secrets' metadata only.
    assert set(m for m, *_rest in kube.calls) == {"GET"}
    assert set(kube.metadata_lists) == {"Secret"}

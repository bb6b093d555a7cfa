# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""k8s/drift.py: a live object's drift from its manifest, field by field, from what the Applier read."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import drift
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import object_drift

MANAGER = "c5c3.cobaltcore"
OWNED = {"app.kubernetes.io/managed-by": "c5c3.cobaltcore"}


def _entry(manager, fields, operation="Apply", subresource=None):
    entry = {"manager": manager, "operation": operation, "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def _release(values, labels=None):
    return {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "rook", "namespace": "flux-system", "labels": dict(OWNED, **(labels or {}))},
            "spec": {"interval": "10m", "values": values}}


def _live(desired, managed, **changes):
    live = {"apiVersion": desired["apiVersion"], "kind": desired["kind"],
            "metadata": dict(desired["metadata"], managedFields=managed, finalizers=["finalizers.fluxcd.io"]),
            "spec": dict(desired["spec"], **changes), "status": {"conditions": []}}
    return live


MINE = _entry(MANAGER, {"f:metadata": {"f:labels": {"f:app.kubernetes.io/managed-by": {}}},
                        "f:spec": {"f:interval": {}, "f:values": {"f:replicas": {}}}})


def test_a_declared_field_that_differs_names_the_field_with_both_values():
    desired = _release({"replicas": 2})
    live = _live(desired, [MINE], values={"replicas": 3})
    assert drift.findings(desired, live, MANAGER) == {
        "fields": [{"field": "spec.values.replicas", "declared": 2, "live": 3}]}
    assert drift.findings(desired, _live(desired, [MINE]), MANAGER) == {}


def test_a_missing_declared_field_and_a_field_no_longer_declared():
    desired = _release({"replicas": 2, "image": {"tag": "v1"}})
    live = _live(desired, [MINE], values={"replicas": 2})
    assert drift.findings(desired, live, MANAGER)["fields"] == [
        {"field": "spec.values.image", "declared": {"tag": "v1"}, "live": drift.ABSENT}]
    # The manager set spec.values.replicas once; the manifest dropped it: the next apply removes it.
    desired = _release({})
    live = _live(desired, [MINE], values={"replicas": 2})
    assert drift.findings(desired, live, MANAGER)["fields"] == [
        {"field": "spec.values.replicas", "declared": drift.ABSENT, "live": 2}]


def test_another_managers_field_is_foreign_on_an_owned_object_only():
    desired = _release({"replicas": 2})
    other = _entry("kubectl-edit", {"f:spec": {"f:values": {"f:debug": {"f:enabled": {}, "f:level": {}}}}}, "Update")
    live = _live(desired, [MINE, other], values={"replicas": 2, "debug": {"enabled": True, "level": 3}})
    assert drift.findings(desired, live, MANAGER) == {
        "foreign": [{"field": "spec.values.debug", "managers": ["kubectl-edit"], "live": {"enabled": True, "level": 3}}]}
    unowned = dict(desired, metadata=dict(desired["metadata"], labels={}))
    assert drift.findings(unowned, dict(live, metadata=dict(live["metadata"], labels={})), MANAGER) == {}


def test_status_finalizers_and_shared_declared_fields_are_no_ones_drift():
    desired = _release({"replicas": 2})
    controller = _entry("helm-controller", {"f:metadata": {"f:finalizers": {".": {}, "v:\"finalizers.fluxcd.io\"": {}}}},
                        "Update")
    status = _entry("helm-controller", {"f:status": {"f:conditions": {}}}, "Update", subresource="status")
    shared = _entry("someone", {"f:spec": {"f:values": {"f:replicas": {}}}}, "Apply")
    assert drift.findings(desired, _live(desired, [MINE, controller, status, shared]), MANAGER) == {}


def test_field_paths_quote_keys_with_dots_and_name_list_items():
    desired = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"c5c3.io/pool": "hv-a"}}}
    live = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"c5c3.io/pool": "hv-b"}}}
    assert drift.findings(desired, live, MANAGER)["fields"] == [
        {"field": "metadata.labels[c5c3.io/pool]", "declared": "hv-a", "live": "hv-b"}]
    assert drift.field_text((("f", "spec"), ("f", "ports"), ("k", {"name": "http", "port": 80}))) == \
        "spec.ports[name=http,port=80]"
    assert drift.field_text((("f", "spec"), ("f", "args"), ("v", "--x"), ("i", 2))) == 'spec.args[="--x"][2]'


def test_secret_values_are_redacted_but_their_fields_named():
    desired = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n", "labels": OWNED},
               "data": {"password": "bmV3"}}
    other = _entry("kubectl", {"f:data": {"f:token": {}}}, "Update")
    live = {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "n", "labels": OWNED, "managedFields": [other]},
            "data": {"password": "b2xk", "token": "dG9r"}}
    found = drift.findings(desired, live, MANAGER)
    assert found == {"fields": [{"field": "data.password", "declared": drift.REDACTED, "live": drift.REDACTED}],
                     "foreign": [{"field": "data.token", "managers": ["kubectl"], "live": drift.REDACTED}]}
    assert "bmV3" not in repr(found) and "b2xk" not in repr(found) and "dG9r" not in repr(found)


def test_object_drift_by_the_appliers_result():
    desired = _release({"replicas": 2})
    assert object_drift(desired, None, "created", MANAGER) == {"missing": True}
    other = _entry("kubectl-edit", {"f:spec": {"f:suspend": {}}}, "Update")
    live = _live(desired, [MINE, other], suspend=True)
    # The server found nothing to change: only the foreign field is drift.
    assert object_drift(desired, live, "unchanged", MANAGER) == {
        "foreign": [{"field": "spec.suspend", "managers": ["kubectl-edit"], "live": True}]}
    # The server would change what the manifest holds as the live object holds it (a default, a normalized value).
    assert object_drift(desired, _live(desired, [MINE]), "configured", MANAGER)["fields"][0]["field"] == "."


class _ConflictingClient(object):
    """An API server where another manager owns spec.values.replicas: an apply without force is a 409."""

    def __init__(self, live):
        self.live, self.applies = live, []

    def resource(self, api_version, kind):
        from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import ResourceType
        return ResourceType(api_version, kind, kind.lower() + "s", True)

    def get(self, rtype, name, namespace=None):
        return self.live

    def list(self, *args, **kwargs):
        return [self.live]

    def server_side_apply(self, rtype, obj, field_manager, force=False, dry_run=False):
        from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
        self.applies.append((force, dry_run))
        if not force:
            raise KubeError("Apply failed with 1 conflict", status=409, reason="Conflict", causes=[
                {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl-edit"',
                 "field": ".spec.values.replicas"}])
        return dict(self.live, spec=dict(self.live["spec"], values={"replicas": 2}))


def test_a_conflict_over_a_declared_field_is_drift_in_a_drift_run_and_a_failure_otherwise():
    import pytest
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import Applier
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
    desired = _release({"replicas": 2})
    other = _entry("kubectl-edit", {"f:spec": {"f:values": {"f:replicas": {}}}}, "Update")
    client = _ConflictingClient(_live(desired, [MINE, other], values={"replicas": 5}))
    (result,) = Applier(client, check_mode=True, drift=True, workers=1).apply([desired])
    assert result["result"] == "configured"
    assert result["drift"]["fields"] == [{"field": "spec.values.replicas", "declared": 2, "live": 5}]
    assert result["drift"]["conflicts"] == ['conflict with "kubectl-edit"']
    assert client.applies == [(False, True), (True, True)]  # the second is a dry run too
    with pytest.raises(KubeError):
        Applier(_ConflictingClient(client.live), check_mode=True, workers=1).apply([desired])


def test_the_module_writes_names_as_they_are_and_masks_only_the_values(tmp_path, monkeypatch):
    """A secret equal to a part of a name ("lab") must not garble the names the report matches objects by."""
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import connection

    class Ansible(object):
        no_log_values = {"lab", "s3cr3t"}

    class Module(connection.KubeConnection):
        check_mode, diff, ansible, results = True, False, Ansible(), {}

    path = tmp_path / "found.json"
    monkeypatch.setenv(drift.DRIFT_ENV, str(path))
    module = Module()
    module.record([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "openstack-lab-tenant-a", "name": "lab",
                    "result": "configured",
                    "drift": {"fields": [{"field": "data.lab", "declared": "s3cr3t", "live": "lab"}]}}])
    module.write_drift()
    import json
    found = json.loads(path.read_text())
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "openstack-lab-tenant-a", "name": "lab"}
    assert found["declared"] == [ref]
    (entry,) = found["drift"]
    assert dict((k, entry[k]) for k in ref) == ref and entry["fields"][0]["field"] == "data.lab"
    assert "s3cr3t" not in path.read_text() and entry["fields"][0]["live"] != "lab"

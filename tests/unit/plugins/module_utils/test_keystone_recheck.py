# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a cluster's Keystone needs no calls: the digest, the record, the pending entries."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import recheck

SETTINGS = {"name": "t1", "namespace": "openstack-t1", "region": "r1", "services": ["keystone", "glance"]}
KEYSTONE = {"metadata": {"uid": "k-1", "generation": 2}, "status": {"endpoint": "http://ks/v3"}}
SECRETS = [{"metadata": {"name": "keystone-admin-credentials", "resourceVersion": "10"},
            "data": {"password": "c2VjcmV0"}},
           {"metadata": {"name": "k-orc-clouds-yaml", "resourceVersion": "11"}}]
KORC = [{"kind": "Service", "metadata": {"name": "glance", "uid": "s-1", "generation": 1}, "status": {"id": "abc"}}]


def base():
    return recheck.digest(SETTINGS, KEYSTONE, SECRETS, KORC)


def test_the_digest_is_stable_and_ignores_order_and_secret_values():
    changed_value = copy.deepcopy(SECRETS)
    changed_value[0]["data"]["password"] = "b3RoZXI="
    assert recheck.digest(SETTINGS, KEYSTONE, list(reversed(SECRETS)), KORC) == base()
    assert recheck.digest(dict(reversed(list(SETTINGS.items()))), KEYSTONE, SECRETS, KORC) == base()
    # A value changes the resourceVersion in an API server; the digest reads only that.
    assert recheck.digest(SETTINGS, KEYSTONE, changed_value, KORC) == base()
    assert "c2VjcmV0" not in base() and base().startswith("sha256:")


def test_the_ceph_keys_copies_do_not_change_the_digest():
    """No Keystone step reads them; their rotation (phase 7 deletes the old ones after the Keystone steps) must not
    bring the Keystone calls back on the next run."""
    ceph = [{"metadata": {"name": "ceph-client-t1", "resourceVersion": "20"}},
            {"metadata": {"name": "ceph-client-t1-v1", "resourceVersion": "21"}}]
    assert recheck.digest(SETTINGS, KEYSTONE, SECRETS + ceph, KORC) == base()
    assert recheck.digest(SETTINGS, KEYSTONE, SECRETS + ceph[1:], KORC) == base()


@pytest.mark.parametrize("change", [
    lambda s, k, sec, o: s.update(services=["keystone"]),
    lambda s, k, sec, o: k["metadata"].update(generation=3),
    lambda s, k, sec, o: k["metadata"].update(uid="k-2"),
    lambda s, k, sec, o: k["status"].update(endpoint="http://other/v3"),
    lambda s, k, sec, o: sec[1]["metadata"].update(resourceVersion="12"),
    lambda s, k, sec, o: sec.pop(),
    lambda s, k, sec, o: o[0]["status"].update(id="def"),
    lambda s, k, sec, o: o[0]["metadata"].update(uid="s-2"),
    lambda s, k, sec, o: o.append({"kind": "User", "metadata": {"name": "glance"}}),
], ids=["settings", "keystone generation", "keystone recreated", "endpoint", "secret rotated", "secret gone",
        "korc id", "korc object recreated", "korc object added"])
def test_every_input_of_the_keystone_steps_changes_the_digest(change):
    settings, keystone, secrets, korc = (copy.deepcopy(x) for x in (SETTINGS, KEYSTONE, SECRETS, KORC))
    change(settings, keystone, secrets, korc)
    assert recheck.digest(settings, keystone, secrets, korc) != base()


def test_a_record_round_trips_and_holds_no_secret():
    korc = {"application_credential_id": "ac1", "auth_url": "http://ks/v3", "admin_auth_url": "http://ks/v3",
            "region": "r1", "application_credential_secret": "never-kept"}
    manifest = recheck.record_manifest("t1", "openstack-t1", base(), korc, "2026-11-27T00:00:00+00:00")
    assert manifest["metadata"]["name"] == recheck.RECORD_NAME
    assert manifest["metadata"]["labels"]["c5c3.io/openstack-cluster-name"] == "t1"
    assert "never-kept" not in json.dumps(manifest)
    digest, fields = recheck.recorded(manifest)
    assert digest == base() and fields["application_credential_id"] == "ac1"
    assert recheck.recorded(None) == (None, None)
    assert recheck.recorded({"data": {"digest": "x", "korc": "{not json"}}) == (None, None)


def test_the_verdict_uses_the_record_only_when_the_digest_matches():
    record = recheck.record_manifest("t1", "openstack-t1", base(), {"application_credential_id": "ac1"}, "now")
    entry = {"name": "t1", "namespace": "openstack-t1"}
    same = recheck.verdict(entry, base(), record)
    assert same["unchanged"] and same["korc"]["application_credential_id"] == "ac1"
    other = recheck.verdict(entry, "sha256:other", record)
    assert not other["unchanged"] and other["korc"] is None
    assert not recheck.verdict(entry, base(), None)["unchanged"]


def test_pending_korc_results_and_records():
    state = {"unchanged": ["t1"], "clusters": [
        {"name": "t1", "namespace": "openstack-t1", "digest": "d1", "unchanged": True, "korc": {"auth_url": "u1"}},
        {"name": "t2", "namespace": "openstack-t2", "digest": "d2", "unchanged": False, "korc": None}]}
    entries = [{"name": "t1"}, {"name": "t2"}]
    assert recheck.pending(entries, state) == [{"name": "t2"}]
    assert recheck.pending(entries, {"skipped": True, "changed": False}) == entries
    minted = {"clusters": [{"name": "t2", "auth_url": "u2", "application_credential_id": "ac2"}]}
    found = recheck.korc_results(minted, state)
    assert found["t1"] == {"auth_url": "u1"} and found["t2"]["application_credential_id"] == "ac2"
    assert recheck.korc_results({"skipped": True}, state) == {"t1": {"auth_url": "u1"}}
    written = recheck.records(state, found, "now")
    assert [m["metadata"]["namespace"] for m in written] == ["openstack-t2"]
    assert written[0]["data"]["digest"] == "d2"
    assert recheck.records({"skipped": True}, found, "now") == []


def test_bad_clusters_are_named_together():
    with pytest.raises(InputError) as error:
        recheck.check_clusters([{"name": "a", "namespace": "", "settings": {}},
                                {"name": "a", "namespace": "n", "settings": [], "keystone": {"name": "k"}}])
    text = str(error.value)
    for part in ("clusters[0].namespace", "clusters[1].settings", "clusters[1].keystone", "name a is listed"):
        assert part in text

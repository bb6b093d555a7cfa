# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The keystone-operator stand-in's key rotation: upstream's validation of a staged payload, the CronJob, the
kubelet's projection of the keys, and KWOK's Stages that let the stand-in play the rotation pod's container."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import os
import sys

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab import kubelets  # noqa: E402  pylint: disable=wrong-import-position
from regionlab.standins import key_rotation as kr  # noqa: E402  pylint: disable=wrong-import-position

CR = {"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
      "metadata": {"name": "keystone", "namespace": "openstack", "uid": "u1"},
      "spec": {"image": {"repository": "ghcr.io/c5c3/keystone", "tag": "28.0.0"},
               "fernet": {"rotationSchedule": "0 0 * * *", "maxActiveKeys": 4, "suspend": True}}}


def test_generated_keys_are_valid_and_distinct():
    data = kr.generated_data(3)
    assert sorted(data) == ["0", "1", "2"]
    assert kr.validation_error(data, 3, 4) is None


def test_validation_as_upstreams_validate_rotation_output():
    good = kr.generated_data(3)
    assert kr.validation_error(kr.generated_data(2), 3, 4) == "key count out of range: got 2, want [3, 4]"
    assert kr.validation_error(kr.generated_data(5), 3, 4) == "key count out of range: got 5, want [3, 4]"
    short = dict(good, **{"1": base64.b64encode(b"x" * 32).decode()})
    assert kr.validation_error(short, 3, 4) == 'invalid key format: key "1" length=32, want 44'
    twice = dict(good, **{"2": good["0"]})
    assert kr.validation_error(twice, 3, 4) == 'duplicate keys detected: keys "0" and "2"'
    odd = dict(good, **{"0": base64.b64encode(base64.urlsafe_b64encode(b"y" * 31)).decode()})  # 44 characters
    assert kr.validation_error(odd, 3, 4) == 'invalid key format: key "0" decoded length=31, want 32'
    bad = dict(good, **{"0": base64.b64encode(b"!" * 44).decode()})
    assert kr.validation_error(bad, 3, 4).startswith('invalid key format: key "0" base64 decode:')


def test_the_cronjob_follows_the_spec():
    cronjob = kr.cronjob_manifest(CR, "fernet", "keystone-operator-standin")
    assert cronjob["metadata"]["name"] == "keystone-fernet-rotate"
    assert cronjob["spec"]["schedule"] == "0 0 * * *" and cronjob["spec"]["suspend"] is True
    template = cronjob["spec"]["jobTemplate"]["spec"]["template"]
    assert template["metadata"]["labels"]["app.kubernetes.io/component"] == "fernet-rotation"
    assert template["metadata"]["annotations"] == {kr.PLAYED_BY: "keystone-operator-standin"}
    (container,) = template["spec"]["containers"]
    assert {"name": "OS_fernet_tokens__max_active_keys", "value": "4"} in container["env"]
    assert {"name": "SECRET_NAME", "value": "keystone-fernet-keys-rotation"} in container["env"]
    credential = kr.cronjob_manifest(CR, "credential", "x")
    assert credential["spec"]["schedule"] == kr.DEFAULT_SCHEDULE and credential["spec"]["suspend"] is False


def test_projection_writes_and_removes_key_files(tmp_path):
    data = kr.generated_data(3)
    assert kr.project(data, tmp_path) is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1", "2"]
    assert oct((tmp_path / "0").stat().st_mode & 0o777) == "0o600"
    assert kr.project(data, tmp_path) is False
    rotated = {"0": kr.generated_data(1)["0"], "2": data["2"], "3": data["0"]}
    assert kr.project(rotated, tmp_path) is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "2", "3"]
    assert kr.repository_data(tmp_path) == rotated


def test_a_key_kept_across_a_rotation_is_never_missing_while_the_files_change(tmp_path, monkeypatch):
    """The staged key 0 becomes the primary 3: Keystone must find its content at every moment of the projection."""
    data = kr.generated_data(3)
    kr.project(data, tmp_path)
    rotated = {"0": kr.generated_data(1)["0"], "2": data["2"], "3": data["0"]}
    kept = {base64.b64decode(data["0"]), base64.b64decode(data["2"])}
    seen = []
    real = kr.pki.write_private

    def recording(path, value):
        real(path, value)
        seen.append({entry.read_bytes() for entry in tmp_path.iterdir() if entry.name.isdigit()})
    monkeypatch.setattr(kr.pki, "write_private", recording)
    assert kr.project(rotated, tmp_path) is True
    assert seen and all(kept <= contents for contents in seen)


def test_kwok_stages_leave_played_pods_to_the_stand_in():
    complete = {"metadata": {"name": "pod-complete"}, "spec": {"selector": {"matchExpressions": [
        {"key": ".status.phase", "operator": "In", "values": ["Running"]}]}}}
    other = {"metadata": {"name": "pod-ready"}, "spec": {"selector": {"matchExpressions": []}}}
    stages = kubelets._lab_stages([other, complete])  # pylint: disable=protected-access
    assert [s["metadata"]["name"] for s in stages] == ["pod-ready", "pod-complete", "pod-exit"]
    played = '.metadata.annotations["%s"]' % kubelets.PLAYED_BY
    assert {"key": played, "operator": "DoesNotExist"} in stages[1]["spec"]["selector"]["matchExpressions"]
    exits = stages[2]["spec"]["selector"]["matchExpressions"]
    assert {"key": played, "operator": "Exists"} in exits
    assert {"key": '.metadata.annotations["%s"]' % kubelets.EXIT_CODE, "operator": "In", "values": ["0"]} in exits

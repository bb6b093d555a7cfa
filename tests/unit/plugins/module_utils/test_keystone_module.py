# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keystone faults: what is retried, what fails at once, and what the message says."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest
from keystoneauth1 import exceptions as ksa
from openstack import exceptions as sdk

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import module as km


def wrapped(cause):
    """What openstacksdk raises: an SDKException whose cause is keystoneauth's."""
    try:
        try:
            raise cause
        except Exception as exc:
            raise sdk.SDKException("wrapped: %s" % exc) from exc
    except sdk.SDKException as outer:
        return outer


def test_classification():
    assert km.is_unreachable(wrapped(ksa.ConnectFailure("refused")))
    assert km.is_unreachable(ksa.ConnectTimeout("slow"))
    assert km.is_transient(wrapped(ksa.http.ServiceUnavailable()))
    assert km.http_status(wrapped(ksa.http.Unauthorized())) == 401
    assert not km.is_transient(wrapped(ksa.http.Unauthorized()))
    assert not km.is_transient(ValueError("bug"))


def test_retry_gives_up_after_the_attempts_with_the_message(monkeypatch):
    monkeypatch.setattr(km.time, "sleep", lambda seconds: None)
    calls = []

    def down():
        calls.append(1)
        raise wrapped(ksa.ConnectFailure("Connection refused"))

    with pytest.raises(km.KeystoneError) as error:
        km.retry(down, 3, 0.1, lambda exc, attempts, elapsed: "down after %d: %s" % (attempts, km.short_error(exc)))
    assert len(calls) == 3
    assert str(error.value).startswith("down after 3: wrapped: Connection refused")


def test_retry_stops_at_once_on_refused_credentials(monkeypatch):
    monkeypatch.setattr(km.time, "sleep", lambda seconds: None)
    calls = []

    def refused():
        calls.append(1)
        raise wrapped(ksa.http.Unauthorized())

    with pytest.raises(km.KeystoneError) as error:
        km.retry(refused, 5, 0.1, lambda exc, attempts, elapsed: "refused")
    assert len(calls) == 1 and error.value.details["status"] == 401


def test_retry_returns_once_keystone_answers(monkeypatch):
    monkeypatch.setattr(km.time, "sleep", lambda seconds: None)
    answers = [wrapped(ksa.http.BadGateway()), "token"]

    def flaky():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert km.retry(flaky, 3, 0.1, lambda *a: "x") == "token"


def test_short_error_keeps_messages_short():
    assert len(km.short_error("x" * 1000)) == 300
    assert km.short_error("a\n  b") == "a b"


class FakeKube(object):
    """The two calls secret_password makes of the collection's Kubernetes client."""

    def __init__(self, secret):
        self.secret = secret
        self.asked = []

    def resource(self, api_version, kind):
        return (api_version, kind)

    def get(self, rtype, name, namespace):
        self.asked.append((rtype, name, namespace))
        return self.secret


class FakeAnsible(object):
    def __init__(self):
        self.no_log_values = set()


class Failed(Exception):
    pass


def secret_module(secret):
    module = km.KeystoneModule.__new__(km.KeystoneModule)
    module._client = FakeKube(secret)
    module.ansible = FakeAnsible()

    def fail_json(msg):
        raise Failed(msg)
    module.fail_json = fail_json
    return module


SETTINGS = {"secret_namespace": "openstack", "secret_name": "keystone-admin-credentials", "secret_key": "password"}


def test_secret_auth_reads_the_password_from_its_secret_and_masks_it():
    module = secret_module({"kind": "Secret", "data": {"password": "czNjcjN0LXBhc3N3b3JkLTAxMjM="}})
    assert module.secret_password(SETTINGS) == "s3cr3t-password-0123"
    assert module._client.asked == [(("v1", "Secret"), "keystone-admin-credentials", "openstack")]
    assert {"s3cr3t-password-0123", "czNjcjN0LXBhc3N3b3JkLTAxMjM="} <= module.ansible.no_log_values


@pytest.mark.parametrize("secret, message", [
    (None, "Secret openstack/keystone-admin-credentials does not exist"),
    ({"kind": "Secret", "data": {"other": "eA=="}}, "has no usable key password"),
    ({"kind": "Secret", "data": {"password": ""}}, "has no usable key password"),
])
def test_secret_auth_fails_naming_the_secret(secret, message):
    # A KeystoneError: one cluster of a batch fails, the others go on.
    with pytest.raises(km.KeystoneError) as error:
        secret_module(secret).secret_password(SETTINGS)
    assert message in str(error.value)

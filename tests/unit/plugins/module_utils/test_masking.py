# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is masked: credentials and Secret values in every form, never names."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import os

import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.generated_secret import masked_strings

PEM = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBmVQ2x0aGVrZXlpc2hlcmU=\n-----END EC PRIVATE KEY-----\n"


def b64(text):
    return base64.b64encode(text.encode()).decode()


def test_secret_values_in_both_encodings_and_by_line():
    found = masking.secret_values([
        {"kind": "Secret", "stringData": {"password": "hunter2-secret", "key.pem": PEM, "empty": ""}},
        {"kind": "BMCSecret", "data": {"password": b64("bmc-secret-1")}},
        {"kind": "ConfigMap", "data": {"public": "visible"}},
        "not an object",
    ])
    assert {"hunter2-secret", b64("hunter2-secret"), "bmc-secret-1", b64("bmc-secret-1")} <= found
    # A PEM key in a YAML text shows indented, line by line: each of its lines is masked.
    assert "MHcCAQEEIBmVQ2x0aGVrZXlpc2hlcmU=" in found and "-----BEGIN EC PRIVATE KEY-----" in found
    assert "visible" not in found
    assert "" not in found  # an empty mask would star out every character of the output


def test_secret_values_of_data_with_line_breaks_decode_as_the_server_stores_them():
    wrapped = b64("a-long-secret-value-" * 4)
    wrapped = wrapped[:40] + "\n" + wrapped[40:]
    assert "a-long-secret-value-" * 4 in masking.secret_values([{"kind": "Secret", "data": {"k": wrapped}}])


def test_kubeconfig_credentials_not_names():
    kubeconfig = {
        "apiVersion": "v1", "kind": "Config", "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": "https://10.0.0.1:6443",
                                               "certificate-authority-data": "Q0EtREFUQQ=="}}],
        "users": [{"name": "u", "user": {"token": "tok-123", "client-key-data": "S0VZ",
                                         "client-certificate-data": "Q0VSVA=="}},
                  {"name": "e", "user": {"exec": {"command": "get-token", "args": ["--secret-arg"],
                                                  "apiVersion": "client.authentication.k8s.io/v1"}}},
                  {"name": "o", "user": {"auth-provider": {"name": "oidc", "config": {"id-token": "idt"}}}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
    }
    credentials, public = masking.kubeconfig_strings(kubeconfig)
    assert {"tok-123", "S0VZ", "get-token", "--secret-arg", "client.authentication.k8s.io/v1", "oidc",
            "idt"} <= credentials
    assert {"v1", "Config", "c", "u", "ctx", "https://10.0.0.1:6443", "Q0EtREFUQQ==", "Q0VSVA=="} <= public
    assert not credentials & public
    assert masking.kubeconfig_credentials(kubeconfig) == credentials
    assert masking.kubeconfig_credentials(yaml.safe_dump(kubeconfig)) == credentials


def test_a_string_both_public_and_a_credential_stays_masked():
    credentials, public = masking.kubeconfig_strings(
        {"clusters": [{"name": "same"}], "users": [{"name": "x", "user": {"password": "same"}}]})
    assert "same" in credentials and "same" not in public


def test_a_kubeconfig_text_that_is_no_mapping_is_secret_as_a_whole():
    assert masking.kubeconfig_credentials("not: [yaml") == {"not: [yaml"}
    assert masking.kubeconfig_credentials("") == set()


def test_a_kubeconfig_string_is_a_path_only_when_it_names_a_file(tmp_path):
    path = tmp_path / "admin.yaml"
    path.write_text("apiVersion: v1\n")
    assert masking.kubeconfig_strings(str(path)) == (set(), {str(path)})
    # One existing file among several joined by os.pathsep (kubectl merges what exists).
    joined = "%s%s%s" % (tmp_path / "absent.yaml", os.pathsep, path)
    assert masking.kubeconfig_strings(joined) == (set(), {joined})
    # Not a file: the string may be a kubeconfig's text, or a token pasted by mistake; secret as a whole.
    assert masking.kubeconfig_strings("/no/such/kubeconfig") == ({"/no/such/kubeconfig"}, set())


def test_a_kubeconfig_text_option_is_read_for_its_credentials_and_masked_as_a_whole():
    text = yaml.safe_dump({"apiVersion": "v1", "clusters": [{"name": "c", "cluster": {"server": "https://s:6443"}}],
                           "users": [{"name": "u", "user": {"token": "tok-123", "password": "pw-456"}}]})
    credentials, public = masking.kubeconfig_strings(text)
    assert {text, "tok-123", "pw-456"} <= credentials
    assert {"c", "u", "https://s:6443", "v1"} <= public
    # What a module returns (gardener_kubeconfig's kubeconfigs) is masked for its credentials, not as a whole.
    assert masking.kubeconfig_credentials(text) == credentials - {text}


def test_leaves_are_what_ansible_masks_of_a_no_log_option():
    assert masking.leaves({"a": ["x", 3, True, None, ""], "b": {"c": 1.5}}) == {"x", "3", "1.5"}
    assert masking.numbers({"a": ["x", 3, True], "b": 1.5}) == {"3", "1.5"}


def test_auth_passwords_and_secrets_not_names():
    credentials, public = masking.auth_strings({
        "auth_url": "http://k:5000/v3", "username": "admin", "password": "pw-1", "project_name": "admin",
        "user_domain_name": "Default", "application_credential_id": "id-1",
        "application_credential_secret": "acs-1", "token": "t-1"})
    assert credentials == {"pw-1", "acs-1", "t-1"}
    assert public == {"http://k:5000/v3", "admin", "Default", "id-1"}


def test_a_cloud_is_a_public_name_or_settings_whose_auth_credentials_are_secret():
    assert masking.cloud_strings("lab-admin") == (set(), {"lab-admin"})
    assert masking.cloud_strings(None) == (set(), set())
    credentials, public = masking.cloud_strings({
        "auth": {"auth_url": "http://k:5000/v3", "username": "admin", "password": "pw-2",
                 "project_name": "admin"},
        "region_name": "RegionOne", "key": "/etc/ssl/client.key", "identity_api_version": 3})
    assert credentials == {"pw-2", "/etc/ssl/client.key"}
    assert public == {"http://k:5000/v3", "admin", "RegionOne", "3"}


def test_no_log_strings_walk_suboptions_and_skip_the_narrowed():
    spec = {"kubeconfig": {"no_log": True}, "api_key": {"no_log": True},
            "secrets": {"type": "list", "options": {"password": {"no_log": True}, "name": {}}}}
    params = {"kubeconfig": {"users": ["k"]}, "api_key": "ak", "secrets": [{"password": "p1", "name": "n"}]}
    assert masking.no_log_strings(spec, params, skip=("kubeconfig",)) == {"ak", "p1"}


def test_generated_secret_values_and_templates_mask_all_but_what_names_show():
    specs = [{"name": "glance-keystone-user", "namespace": "openstack", "labels": {"service": "glance"},
              "generate": [{"key": "password"}],
              "values": {"note": "literal-confidential"},
              "templates": {"clouds.yaml": {"clouds": {"glance": {
                  "auth": {"username": "glance", "password": "${password}", "user_domain_name": "Default"},
                  "identity_api_version": 3}}}}}]
    secret, public = masked_strings(specs)
    assert {"literal-confidential", "Default", "${password}"} <= secret
    # In the Secret's name anyway, or a number that would star out request counts.
    assert public == {"glance", "3"}
    assert masked_strings("not a list") == (set(), set())

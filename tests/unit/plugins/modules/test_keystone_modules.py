# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure helpers of the Keystone modules (the modules themselves run against the lab)."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64

import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.secret_data import decoded
from ansible_collections.c5c3.cobaltcore.plugins.modules import keystone_verify, korc_credentials


def secret_with(text):
    return {"data": {"clouds.yaml": base64.b64encode(text.encode()).decode()}}


def test_korc_clouds_yaml_shape():
    doc = korc_credentials.clouds_yaml("openstack", "http://k/v3", "id1", "s3cret", "RegionOne", "internal")
    assert doc == {"clouds": {"openstack": {
        "auth_type": "v3applicationcredential",
        "auth": {"auth_url": "http://k/v3", "application_credential_id": "id1",
                 "application_credential_secret": "s3cret"},
        # K-ORC (gophercloud) reads endpoint_type, openstacksdk interface.
        "region_name": "RegionOne", "interface": "internal", "endpoint_type": "internal", "identity_api_version": 3}}}


def test_stored_credential_reads_the_cloud_or_nothing():
    doc = korc_credentials.clouds_yaml("openstack", "http://k/v3", "id1", "s3cret", "r", "public")
    secret = secret_with(yaml.safe_dump(doc))
    assert korc_credentials.stored_credential(secret, "openstack") == ("id1", "s3cret", doc)
    assert korc_credentials.stored_credential(secret, "other") == (None, None, None)
    assert korc_credentials.stored_credential(secret_with(": not yaml ["), "openstack") == (None, None, None)
    assert korc_credentials.stored_credential(None, "openstack") == (None, None, None)


def test_verify_reads_a_credential_from_clouds_yaml_or_plain_keys():
    doc = korc_credentials.clouds_yaml("glance", "http://k/v3", "id1", "s3cret", "r", "internal")
    assert keystone_verify.credential_of({"clouds.yaml": yaml.safe_dump(doc)}, "glance") == (
        "http://k/v3", "id1", "s3cret")
    assert keystone_verify.credential_of({"application_credential_id": "id2", "value": "v"}, "glance") == (
        None, "id2", "v")
    # The Secret's values as keystone_verify reads them (generated_secret's decoding, binary left out).
    assert decoded({"data": {"a": base64.b64encode(b"b").decode(), "c": "//79"}}) == {"a": "b"}

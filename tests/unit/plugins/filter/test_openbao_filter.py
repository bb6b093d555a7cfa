# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenBao filter is a thin wrapper over module_utils.openbao."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.c5c3.cobaltcore.plugins.filter import openbao as openbao_filter
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import openbao

FILTERS = openbao_filter.FilterModule().filters()


def test_the_filters():
    assert sorted(FILTERS) == ["korc_openbao_secrets"]


def test_the_filter_has_its_documentation():
    with open(os.path.join(os.path.dirname(openbao_filter.__file__), "korc_openbao_secrets.yml")) as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == "korc_openbao_secrets"
    documented = doc["DOCUMENTATION"]["options"]["_input"]["suboptions"]
    assert sorted(documented) == sorted(openbao.DEFAULTS)
    for key, option in documented.items():
        if openbao.DEFAULTS[key] is not None:
            assert option["default"] == openbao.DEFAULTS[key], key


def test_the_manifests_are_what_module_utils_returns():
    settings = {"namespace": "openstack-customer-a", "store_kind": "SecretStore"}
    assert FILTERS["korc_openbao_secrets"](settings) == openbao.korc_credential_sync(settings)
    push, external = FILTERS["korc_openbao_secrets"]({"namespace": "openstack"})
    assert (push["kind"], external["kind"]) == ("PushSecret", "ExternalSecret")


def test_problems_become_one_filter_error():
    with pytest.raises(AnsibleFilterError) as error:
        FILTERS["korc_openbao_secrets"]({"store_kind": "Vault", "refresh_interval": "daily"})
    message = str(error.value)
    assert message.startswith("invalid OpenBao settings of the K-ORC credentials, nothing was changed:\n")
    assert "\n- namespace: None must be a DNS-1123 label" in message
    assert "\n- store_kind: must be one of ClusterSecretStore, SecretStore, got 'Vault'" in message
    assert "\n- refresh_interval: 'daily' is not a duration" in message


def test_a_non_mapping_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="\n- settings: must be a mapping, got str$"):
        FILTERS["korc_openbao_secrets"]("openstack")

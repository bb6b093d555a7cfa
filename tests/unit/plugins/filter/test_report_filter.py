# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The region_report filter is a thin wrapper over module_utils.report; playbooks/report.yml uses it."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.c5c3.cobaltcore.plugins.filter import report as report_filter
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.claims import load_claim_files

REGION_REPORT = report_filter.FilterModule().filters()["region_report"]
VAULTED = "bmc-password-never-shown"


def test_the_report_of_an_inventory_reads_only_the_region_model_of_hostvars(inventory_of, tenants_dir):
    inventory = inventory_of("lab")
    # Whatever else the hosts hold (vaulted BMC credentials, kubeconfigs) is never read into the report.
    inventory["hostvars"]["baremetal"]["cobaltcore_bmc_credentials"] = {"lab": {"password": VAULTED}}
    inventory["hostvars"]["hv-pool-a"]["cobaltcore_kubeconfig"] = "/" + VAULTED
    gathered = {"garden": {"kubeconfig_exists": False}}
    result = REGION_REPORT(gathered, inventory, load_claim_files(tenants_dir("lab")))
    assert sorted(result) == ["html", "markdown", "summary"]
    assert result["summary"]["clusters"] == 8 and result["summary"]["tenants"] == 2
    assert "lab-tenant-b" in result["html"] and "lab-tenant-b" in result["markdown"]
    assert VAULTED not in result["html"] and VAULTED not in result["markdown"]
    assert REGION_REPORT(gathered, inventory)["summary"]["tenants"] == 0


def test_malformed_results_fail_with_every_problem(inventory_of):
    with pytest.raises(AnsibleFilterError) as error:
        REGION_REPORT({"garden": {"cluster_info": [], "token": "x"}}, inventory_of("lab"), [])
    assert str(error.value) == (
        "cannot write the region report:\n"
        "- gathered.garden.token: is not a result the report reads\n"
        "- gathered.garden.cluster_info: must be a registered result (a mapping)")

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-ins' settings files (standins.yaml, machines.yaml): one version per pass, and a change the
pass did not see ends the wait after it.

A pass that re-read the file half-way used to take the change for the objects it had left but record it as
seen: the objects before it (a Shoot waiting for reconcile_every) waited for the next watch event or the
10 s resync.

lab/machines.yaml: a machine by its BMC's address, its stable facts, the rack's login.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys
import time
import uuid

import yaml

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import loop, settings  # noqa: E402  pylint: disable=wrong-import-position


def watched(path):
    return settings.Watched(path, settings.StandinSettings, lambda message: None)


def every(value, name="create"):
    return value.shoot("garden-test", name).get("reconcile_every")


def write(path, data):
    # The tests' successive contents differ in size: two writes within the file system's timestamp
    # granularity would otherwise look the same (as they would to the stand-ins).
    path.write_text(yaml.safe_dump(data))


class Writer(loop.Controller):
    """A pass that reads the settings for two Shoots while a test writes the file between them."""

    name = "settings-test"

    def __init__(self, path):
        super().__init__()
        self.settings = watched(path)
        self.path = path
        self.seen = []

    def reconcile(self):
        self.seen.append(every(self.settings.get(), "create"))
        if len(self.seen) == 1:
            write(self.path, {"shoots": {"create": {"reconcile_every": 2}}})
        self.seen.append(every(self.settings.get(), "other"))


def test_a_pass_sees_one_version_and_a_change_during_it_ends_the_wait_at_once(tmp_path):
    path = tmp_path / "standins.yaml"
    write(path, {"shoots": {}})
    ctl = Writer(path)
    ctl.one_pass()
    assert ctl.seen == [None, None]
    started = time.monotonic()
    ctl._wait(5.0)  # pylint: disable=protected-access
    assert time.monotonic() - started < 1.0
    ctl.one_pass()
    assert every(ctl.settings.get()) == 2


def test_get_keeps_the_refreshed_value_until_the_next_refresh(tmp_path):
    path = tmp_path / "standins.yaml"
    write(path, {"shoots": {"create": {"reconcile_every": 2}}})
    settings_file = watched(path)
    assert every(settings_file.get()) == 2
    write(path, {"shoots": {"create": {"reconcile_every": 30}}})
    assert settings_file.changed()
    assert every(settings_file.get()) == 2
    assert every(settings_file.refresh()) == 30
    assert not settings_file.changed()


def test_an_empty_file_is_a_write_in_progress_not_a_change(tmp_path):
    path = tmp_path / "standins.yaml"
    write(path, {"shoots": {"create": {"reconcile_every": 2}}})
    settings_file = watched(path)
    settings_file.refresh()
    path.write_text("")  # what write_text leaves between its truncation and its content
    assert not settings_file.changed()
    assert every(settings_file.refresh()) == 2
    write(path, {"shoots": {"create": {"reconcile_every": 17}}})
    assert settings_file.changed()
    assert every(settings_file.refresh()) == 17


def test_an_absent_file_means_the_defaults(tmp_path):
    path = tmp_path / "standins.yaml"
    write(path, {"delays": {"shoot_step": 9}})
    settings_file = watched(path)
    assert settings_file.refresh().delay("shoot_step") == 9
    path.unlink()
    assert settings_file.changed()
    assert settings_file.refresh().delay("shoot_step") == settings.DEFAULT_DELAYS["shoot_step"]


# lab/machines.yaml ------------------------------------------------------------------------------------------

MACHINES = {"defaults": {"bmc": {"manufacturer": "Lab Systems", "model": "LS-BMC 1"},
                         "system": {"manufacturer": "Lab Systems", "model": "LS-1000", "biosVersion": "1.9.2"}},
            "rack": {"credentials": "rack-x", "username": "admin"},
            "bmcs": {"b1": {"address": "127.0.1.1:8000"},
                     "b2": {"address": "127.0.1.2:8001", "bmc": {"model": "LS-BMC 2", "serialNumber": "S-2"},
                            "system": {"systemUUID": "ABCDEF00-0000-4000-8000-000000000002", "model": "LS-2000",
                                       "powerState": "On",
                                       "networkInterfaces": [{"name": "eno1", "macAddress": "02:00:00:00:00:01"}]}}}}


def test_a_machine_is_found_by_its_bmcs_address():
    machines = settings.Machines(MACHINES)
    assert machines.address("b1") == ("127.0.1.1", 8000)
    assert machines.address("b2") == ("127.0.1.2", 8001)
    assert machines.by_address("127.0.1.2", 8001) == "b2"
    assert machines.by_address("127.0.1.1", "8000") == "b1"  # a port read as text
    assert machines.by_address("127.0.1.1", 8001) is None
    assert machines.by_address("192.0.2.1", 8000) is None


def test_a_machines_system_defaults_are_stable_and_its_own_facts_win():
    machines = settings.Machines(MACHINES)
    system = machines.system("b1")
    assert system["systemUUID"] == str(uuid.uuid5(settings.LAB_NAMESPACE, "b1/0"))
    assert system == settings.Machines(MACHINES).system("b1")  # the same machine on every read
    assert system["serialNumber"].startswith("LAB-") and len(system["serialNumber"]) == 14
    assert system["serialNumber"][4:] == system["serialNumber"][4:].upper()
    assert system["powerState"] == "Off"
    assert (system["manufacturer"], system["model"], system["biosVersion"]) == ("Lab Systems", "LS-1000", "1.9.2")
    (nic,) = system["networkInterfaces"]
    octets = [int(part, 16) for part in nic["macAddress"].split(":")]
    assert nic["name"] == "eth0" and len(octets) == 6
    assert octets[0] & 0x02 and not octets[0] & 0x01  # locally administered, unicast
    other = machines.system("b2")
    assert other["systemUUID"] == "abcdef00-0000-4000-8000-000000000002"  # as metal-operator writes it
    assert (other["model"], other["manufacturer"], other["powerState"]) == ("LS-2000", "Lab Systems", "On")
    assert other["networkInterfaces"] == [{"name": "eno1", "macAddress": "02:00:00:00:00:01"}]
    assert other["serialNumber"] != system["serialNumber"]
    assert nic["macAddress"] != machines.system("b2")["networkInterfaces"][0]["macAddress"]
    assert MACHINES["defaults"]["system"] == {"manufacturer": "Lab Systems", "model": "LS-1000",
                                              "biosVersion": "1.9.2"}  # the defaults are not changed


def test_a_machines_bmc_facts():
    machines = settings.Machines(MACHINES)
    manager = machines.manager("b1")
    assert (manager["manufacturer"], manager["model"]) == ("Lab Systems", "LS-BMC 1")
    assert manager["serialNumber"].startswith("BMC-") and manager == settings.Machines(MACHINES).manager("b1")
    assert machines.manager("b2")["model"] == "LS-BMC 2" and machines.manager("b2")["serialNumber"] == "S-2"


def test_the_racks_login_reads_the_password_the_lab_keeps(tmp_path, monkeypatch):
    monkeypatch.setattr(settings.config, "bmc_password_file", lambda name: tmp_path / ("bmc-%s" % name))
    machines = settings.Machines(MACHINES)
    assert machines.login() == ("admin", None)  # the lab has set no password yet
    (tmp_path / "bmc-rack-x").write_text("right-password\n")
    assert machines.login() == ("admin", "right-password")
    assert settings.Machines({"rack": {"username": "admin"}}).login() == ("admin", None)  # no credentials named
    assert settings.Machines({}).login() == (None, None)


def test_the_labs_machines_file_names_distinct_addresses():
    with open(os.path.join(REPO, "lab", "machines.yaml")) as stream:
        machines = settings.Machines(yaml.safe_load(stream))
    addresses = [machines.address(name) for name in machines.bmcs]
    assert len(set(addresses)) == len(addresses)
    assert all(machines.by_address(*machines.address(name)) == name for name in machines.bmcs)
    assert len({machines.system(name)["systemUUID"] for name in machines.bmcs}) == len(machines.bmcs)
    assert machines.rack["username"] and machines.rack["credentials"]

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-ins' settings files (standins.yaml, machines.yaml): one version per pass, and a change the
pass did not see ends the wait after it.

A pass that re-read the file half-way used to take the change for the objects it had left but record it as
seen: the objects before it (a Shoot waiting for reconcile_every) waited for the next watch event or the
10 s resync.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys
import time

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

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one poll loop behind every wait: back-off, timeout, and errors that end it."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import poll as poll_module
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError


class Clock(object):
    """time.time and time.sleep of a poll, without waiting."""

    def __init__(self):
        self.now = 1000.0
        self.pauses = []

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.pauses.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(poll_module.time, "time", fake.time)
    monkeypatch.setattr(poll_module.time, "sleep", fake.sleep)
    return fake


def test_poll_backs_off_to_sleep_and_returns_the_value_once_done(clock):
    rounds = []

    def attempt():
        rounds.append(clock.now)
        return len(rounds) == 6, len(rounds)

    assert poll_module.poll(attempt, timeout=60, sleep=2) == (True, 6)
    assert clock.pauses == [0.2, 0.4, 0.8, 1.6, 2]


def test_poll_gives_up_after_the_timeout_with_the_last_value(clock):
    assert poll_module.poll(lambda: (False, clock.now), timeout=5, sleep=1) == (False, clock.now)
    assert clock.now >= 1005.0 and max(clock.pauses) == 1


def test_an_error_of_the_attempt_ends_the_poll(clock):
    def attempt():
        raise WaitError("failed", [])

    with pytest.raises(WaitError):
        poll_module.poll(attempt, timeout=60)
    assert clock.pauses == []

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""poll(): rounds until done or timeout; the seconds waited for what was not ready count, a first-round success not."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import poll


def test_a_first_round_success_waits_nothing(monkeypatch):
    monkeypatch.setitem(poll._WAITED, "seconds", 0.0)
    assert poll.poll(lambda: (True, "v"), timeout=5) == (True, "v")
    assert poll.waited_seconds() == 0.0


def test_rounds_until_done_count_as_waited(monkeypatch):
    monkeypatch.setitem(poll._WAITED, "seconds", 0.0)
    rounds = []

    def attempt():
        rounds.append(1)
        return len(rounds) == 3, len(rounds)
    assert poll.poll(attempt, timeout=5, sleep=0.05) == (True, 3)
    assert 0.05 <= poll.waited_seconds() < 1.0


def test_a_timeout_returns_the_last_value_and_counts(monkeypatch):
    monkeypatch.setitem(poll._WAITED, "seconds", 0.0)
    assert poll.poll(lambda: (False, "left"), timeout=0.3, sleep=0.05) == (False, "left")
    assert poll.waited_seconds() >= 0.3

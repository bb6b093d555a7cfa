# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The wait layer: many objects waited on together, one request per kind and namespace per round.

Readiness comes from the one rule table in readiness.py (generation-aware).
A terminal failure ends the wait at once; a timeout names, per object, what
is still missing.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import time

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import describe
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.progress import reported_while_deleted, waiting_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.read import Reader
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate, group_of, rule_for


class WaitError(Exception):
    def __init__(self, message, objects):
        super(WaitError, self).__init__(message)
        self.objects = objects


class Waiter:
    def __init__(self, client, condition=None, expression=None, failed_expression=None, sleep=1.0, progress=None):
        """progress: an optional common.progress.Reporter, offered a line each round (see k8s/progress.py)."""
        self.client = client
        self.progress = progress
        self.condition = condition
        self.expression = expression
        self.failed_expression = failed_expression
        self.sleep = sleep
        self.reader = Reader(client, list_from=2)

    def _fetch(self, refs):
        """Current objects by Reader key: a GET for one, a LIST for several (refs may carry labels)."""
        return dict((key, obj) for key, obj in self.reader.read(refs).items() if obj is not None)

    def _lookup(self, cache):
        def lookup(api_version, kind, name, namespace=None):
            key = (api_version, kind, namespace, name)
            if key not in cache:
                rtype = self.client.resource(api_version, kind)
                cache[key] = self.client.get(rtype, name, namespace if rtype.namespaced else None)
            return cache[key]
        return lookup

    def check(self, refs):
        """One round: [(ref, Readiness or None when absent, the object or None)]."""
        objects = self._fetch(refs)
        lookup = self._lookup(dict(objects))
        states = []
        for ref in refs:
            obj = objects.get(self.reader.key(ref))
            state = None
            if obj is not None:
                state = evaluate(obj, lookup=lookup, condition=self.condition, expression=self.expression,
                                 failed_expression=self.failed_expression)
            states.append((ref, state, obj))
        return states

    def wait(self, refs, timeout, absent=False, each_round=None):
        """Wait until every ref is ready (or gone, with absent). Returns per-object results.

        An object is done once it was seen ready (or gone): later rounds read only the others, so a round
        costs what is still pending, not the whole batch (as `kubectl wait` waits for each object once).
        each_round: called before every round (a module's repair of what keeps its objects from getting ready)."""
        started = time.time()
        seen, finished = {}, set()  # index in refs -> (ref, state, obj) as last read; the indexes seen done

        def attempt():
            if each_round is not None:
                each_round()
            left = [index for index in range(len(refs)) if index not in finished]
            for index, entry in zip(left, self.check([refs[index] for index in left])):
                seen[index] = entry
                state = entry[1]
                if (state is None) if absent else (state is not None and state.ready):
                    finished.add(index)
            states = [seen[index] for index in range(len(refs))]
            if absent:
                pending = [(ref, None) for ref, state, _obj in states if state is not None]
            else:
                failed = [(ref, state, obj) for ref, state, obj in states if state is not None and state.terminal]
                if failed:
                    raise WaitError(self._message("failed", failed), self._results(states, started))
                pending = [(ref, state, obj) for ref, state, obj in states if state is None or not state.ready]
            if pending:
                offer(self.progress, lambda: waiting_line(states, absent))
            return not pending, (states, pending)

        done, (states, pending) = poll(attempt, timeout, self.sleep)
        if not done:
            verb = "still present" if absent else "not ready"
            raise WaitError(self._message("%s after %ss" % (verb, timeout), pending, absent),
                            self._results(states, started))
        return self._results(states, started)

    def _message(self, what, entries, absent=False):
        lines = []
        for ref, state, obj in entries:
            if state is None:
                lines.append("%s: %s" % (describe(ref), "not found"))
                continue
            if absent:
                line = "%s: %s" % (describe(ref), reported_while_deleted(obj))
            else:
                line = "%s: %s%s" % (describe(ref), "; ".join(state.missing) or "still present", self._last_warning(obj))
            lines.append(line)
        return "%d object(s) %s: %s" % (len(entries), what, " | ".join(lines))

    def _last_warning(self, obj):
        """'; last Warning event <reason>: <message>' for kinds whose operator reports errors only as events."""
        meta = (obj or {}).get("metadata") or {}
        if not meta.get("uid") or not rule_for(group_of(obj.get("apiVersion")), obj.get("kind")).events:
            return ""
        try:
            events = self.client.list(self.client.resource("v1", "Event"), meta.get("namespace"),
                                      field_selector="involvedObject.uid=%s,type=Warning" % meta["uid"])
        except KubeError:
            return ""  # the report stands without it
        if not events:
            return ""
        latest = max(events, key=lambda e: (e.get("lastTimestamp") or e.get("eventTime") or "",
                                            (e.get("metadata") or {}).get("creationTimestamp") or ""))
        return "; last Warning event %s: %s" % (latest.get("reason"), latest.get("message"))

    @staticmethod
    def _results(states, started):
        elapsed = round(time.time() - started, 2)
        results = []
        for ref, state, obj in states:
            entry = dict((k, v) for k, v in ref.items() if k != "labels")
            entry["found"] = state is not None
            # The status last seen (e.g. the endpoint an operator reports), for the tasks that follow.
            if isinstance((obj or {}).get("status"), dict):
                entry["status"] = obj["status"]
            entry.update(state.as_dict() if state is not None else {"ready": False, "terminal": False,
                                                                    "missing": ["not found"]})
            entry["elapsed"] = elapsed
            results.append(entry)
        return results

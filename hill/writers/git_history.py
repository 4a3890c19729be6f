"""The hill's git history kept in line with its database.

A change is written to the database first, then recorded in git from the
data in hand (hill.history.recorder commits it).  When git fails after the
database committed (the disk full, say), the change and its answer stand:
the history is `behind`, which is said in one log line per interval
(hill.logs.Trouble), and `catch_up` commits what git lacks once it can
write (the bot tries every few seconds; every writer's start does too).
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from hill.errors import StorageError
from hill.history.recorder import Change, HistoryRecorder
from hill.logs import Trouble
from hill.writers.lock import HillLock

log = structlog.get_logger(__name__)


class GitHistory:
    """Records the hill's changes through `recorder`, under the hill's lock."""

    def __init__(self, recorder: HistoryRecorder, lock: HillLock) -> None:
        self.recorder = recorder
        self.lock = lock
        self.behind = False  # git lacks changes the database has
        self.trouble = Trouble("git (behind the database)")

    def record(self, change: Change) -> None:
        """Commit a change the database holds (the caller holds the lock)."""
        self._run(lambda: self.recorder.record(change))

    def catch_up(self) -> bool:
        """Commit the changes git lacks; whether the history is in line now."""
        with self.lock.held():
            self._run(self.recorder.catch_up)
        return not self.behind

    def _run(self, record: Callable[[], object]) -> None:
        """A failure leaves the change made (the database has it) and the
        history behind, said once per interval (a bug in the recording,
        which is no StorageError, with its traceback)."""
        try:
            record()
        except StorageError as error:  # the disk full, git failing
            self.trouble.struck(error.trouble)
            self.behind = True
        except Exception:
            log.exception("recording the hill's history in git failed; it is behind")
            self.trouble.struck("the recording failed")
            self.behind = True
        else:
            if self.behind:
                self.trouble.cleared()
            self.behind = False

"""The hill's history as a git repository: one commit per hill change.

- `repository`: the git repository (repaired or rebuilt when the writer
  opens it; commits carry a `Hill-Event: N` trailer);
- `recorder`: commits each change from the data the writer hands over, and
  catches up after a crash from the database;
- `copies`: a bundle of the served history at a given event (backups), a
  repository made from a bundle or a clone;
- `reading`: each commit read back as the change it records (rebuilds).

May import: hill.store (its read side and the events table), hill.rules
(reports, names, what a change is), GitPython, SQLAlchemy (the store's
sessions), structlog.  Only the hill's writer
(hill.writers) opens it; the web reads commits with git itself.
"""

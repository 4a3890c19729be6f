"""BF Joust hill: engine, scoring, storage, history and reports."""

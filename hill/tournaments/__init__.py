"""Tournaments' rules, pure: a fixed pool of programs played against each
other and ranked (docs/tournaments.md).  They never change the hill.

- `match`: a joust's margin as a match result (win, draw, loss), a round;
- `formats`: what a format is (the protocol), a round's pairing, the end;
- `plan`: what decides a tournament besides its programs (what a format reads);
- `round_robin`, `swiss`: the two formats, one module each (a new format is
  one more module, named in `registry.FORMATS`); `criteria`: the Swiss criteria;
- `ledger`: matches created, checked out and committed, round by round (a
  state machine), and what a store of it does (`LedgerStore`);
- `registry`: the formats by name, and what a format's name decides (a
  plan's rules, its seed, its result in the tool contract).

May import: hill.engine, hill.errors, networkx (Swiss pairing).  No I/O
library at any depth.  Playing one is hill.play.tournament's; storing one,
hill.store.records and hill.store.state_file.
"""

"""The IRC bot: `app` puts it together; `client` (with `connection`,
`registration`, `accounts`, `intake`, `outbox` with `backlog`)
is the IRC side; `commands/` the players' commands, one module each;
`runner` plays their hill jobs from the request book and says the answers;
`worker` the background work (`ladder`, `tournament`, `contests`,
`backfill`), all of it in turns at the hill (hill.scheduler);
`identity`, `fetch`, `throttle` (what players may ask), `penalty` (what
the bot may send), `text`, `ircd` (the local IRC server).

May import: hill.scheduler (the turns at the hill and the journeys),
hill.writers (through their classes), hill.store (its read
side), the rules (hill.rules, hill.ladder, hill.tournaments), hill.play (a
tournament's cluster), hill.engine, hill.web (web/urls for its links, and
the web report it serves), irc and jaraco (jaraco.stream, irc's buffers),
aiohttp and yarl (fetching programs), structlog, prometheus_client (its
metrics in its status file).  Nothing in hill/ imports
it but `bfjoust bot` (hill/cli/serve.py).
"""

"""The IRC bot: `app` puts it together; `client` (with `connection`,
`registration`, `accounts`, `intake`, `outbox` with `backlog` and `turns`)
is the IRC side; `commands/` the players' commands, one module each;
`runner` plays their hill jobs from the request book and says the answers;
`worker` the background work (`ladder`, `tournament`, `contests`);
`identity`, `fetch`, `throttle` (what players may ask), `penalty` (what
the bot may send), `text`, `ircd` (the local IRC server).

May import: anything in hill/ (the writers through their classes, the rules,
the store's read side, web/urls for its links); nothing in hill/ imports it
but `bfjoust bot` (hill/cli/serve.py).
"""

"""The IRC bot: `app` puts it together; `client` (with `connection`,
`registration`, `accounts`, `intake`, `outbox`) is the IRC side;
`commands/` the players' commands, one module each; `runner` plays their
hill jobs from the request book and says the answers; `worker` the
background work (`ladder`, `tournament`, `contests`); `identity`, `fetch`, `throttle`,
`text`, `ircd` (a local ngircd).

May import: anything in hill/ (the writers through their classes, the rules,
the store's read side, web/urls for its links); nothing in hill/ imports it
but `bfjoust bot` (hill/cli/serve.py).
"""

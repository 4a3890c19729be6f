"""The writers: the one place each kind of change is made, under the hill's
lock, one transaction a change; and the operator's: a running hill's
backup and its restore (`backup`), a hill rebuilt from its history alone
(`rebuild`), the process's own metrics (`metrics`, prometheus_client).

May import: hill.store, hill.history, hill.play, the rules (hill.rules,
hill.ladder, hill.tournaments), hill.engine, numpy, SQLAlchemy (sessions),
structlog, tqdm (a rebuild's progress), prometheus_client (metrics).  Never
the web, the command line or the bot.
"""

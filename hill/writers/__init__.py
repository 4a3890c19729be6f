"""The writers: the one place each kind of change is made, under the hill's
lock, one transaction a change; and the operator's: a running hill's
backup and its restore (`backup`), a hill rebuilt from its history alone
(`rebuild`), the process's own metrics (`metrics`, prometheus_client).

May import: the store, the history, play, the rules and the engine.  Never
the web, the command line or the bot.
"""

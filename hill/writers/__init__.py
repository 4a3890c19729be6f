"""The writers: the one place each kind of change is made, under the hill's
lock, one transaction a change.

May import: the store, the history, play, the rules and the engine.  Never
the web, the command line or the bot.
"""

"""The IRC bot that runs the hill."""

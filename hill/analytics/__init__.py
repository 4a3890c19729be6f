"""What the battle statistics say (docs/analytics.md): how programs play,
not only who wins.  Pure functions over plain arrays: no storage, no web.

- `battles`: a joust's statistics seen from one program's side (the right
  program's mirrored, so that cell 0 is always its own flag), and how each
  battle ended for it;
- `profile`: a program's profile over its jousts: pointer heat and decoys
  by tape length, duel lengths per opponent, how it loses, its problem
  opponents;
- `strategy`: the programs grouped by how they play (features from their
  profiles, normalised; average-linkage hierarchical clustering on cosine
  distance, as scipy.cluster.hierarchy does it), the order of the
  dendrogram, and the programs that play most alike.

May import: hill.engine (the rules' numbers, the statistics' record),
numpy, scipy.  No I/O library at any depth.
"""

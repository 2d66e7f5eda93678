"""``python -m chebcenter bench``: the speed and accuracy table, against the baselines a user
would write (docs/benchmarks.md).

Not part of the library's API: the command line imports it; importing chebcenter does not.
``runner`` runs the rows and writes the table; ``cases`` holds the problems and the baselines.
"""

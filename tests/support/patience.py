"""How long a test waits for something that should happen: a backstop, never a measure.

A passing test never waits this long: each wait ends as soon as its event comes. The bound
only turns a hang into a failure, so it is sized for the slowest machine the suite runs on
(two cores, both busy with other tests and other work), not for a quiet one."""

PATIENCE = 30.0

"""How long a test waits for something that should happen: a backstop, never a measure.

A passing test never waits this long: each wait ends as soon as its event comes. The bound
only turns a hang into a failure, so it is sized for the slowest machine the suite runs on
(two cores, both busy with other tests and other work: a load of 40 was seen, where what
takes a second on a quiet machine can take thirty), not for a quiet one.
IAC_CODE_TEST_PATIENCE overrides it (seconds)."""

import os

PATIENCE = float(os.environ.get("IAC_CODE_TEST_PATIENCE") or 60.0)

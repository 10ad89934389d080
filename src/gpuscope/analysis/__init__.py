"""Pure analyses of a `Trace`: each takes the trace (and earlier results) and returns plain data.

What the packages above share with the analyses is named here: a finding as the report carries
it (`Finding`, `finding`, `us`), interval arithmetic on sorted int64 arrays (`merge`,
`overlap_with`) and the parts of a kernel name that say what it is (`name_parts`).
"""

from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis._intervals import merge, overlap_with, take
from gpuscope.analysis._kernel_names import name_parts
from gpuscope.analysis._opinputs import owner_rows

__all__ = ["Finding", "finding", "merge", "name_parts", "overlap_with", "owner_rows", "take", "us"]

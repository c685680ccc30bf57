"""From annotated modules to XLA executables.

Importing this package registers the rewrites XLA (jaxlib 0.10.2) needs before it
compiles a module (``compile_module`` runs them on every module it compiles):
``alpa-clamp-dynamic-slice-starts``, ``alpa-reshape-degenerate-transposes``,
``alpa-squeeze-broadcast-operands`` and ``alpa-widen-split-contractions``.
"""

from . import (  # noqa: F401
    clamp_dynamic_slice_starts,
    reshape_degenerate_transposes,
    squeeze_broadcast_operands,
    widen_split_contractions,
)

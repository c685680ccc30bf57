"""alpa-mlir: automatic inter- and intra-operator parallelism for JAX, as MLIR passes.

The user API lives here; the compiler is in the subpackages ``dialect`` (meshes,
sharding specs, ``alpa`` ops), ``passes`` (the pass registry and passes),
``lowering``, ``runtime`` and ``tools`` (``alpa-opt``).
"""

from .dialect import DeviceMesh, PhysicalCluster, ShardingSpec

__all__ = ["DeviceMesh", "PhysicalCluster", "ShardingSpec"]
__version__ = "0.1.0"

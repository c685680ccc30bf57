"""lit configuration: FileCheck tests of alpa-opt and of every pass."""

import os
import shutil
import sys

import lit.formats

config.name = "alpa-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")

# alpa-opt and FileCheck from the Python environment that runs lit, so a virtual
# environment does not need to be on PATH.
python = sys.executable
filecheck = shutil.which("filecheck", path=os.path.dirname(python)) or shutil.which("filecheck")
if filecheck is None:
    lit_config.fatal("FileCheck not found: pip install filecheck (or pip install '.[test]')")
config.substitutions.append(("%PYTHON", python))
config.substitutions.append(("alpa-opt", f"{python} -m alpa_mlir.tools.alpa_opt"))
config.substitutions.append(("FileCheck", filecheck))

for name in ("HOME", "TMPDIR", "PYTHONPATH", "XLA_FLAGS"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
config.environment["JAX_PLATFORMS"] = "cpu"
# LLVM's optimisation level only, as test/unit/conftest.py sets it: the probes XLA compiles
# partition and assign buffers as at the default, in less time.
if "xla_backend_optimization_level" not in config.environment.get("XLA_FLAGS", ""):
    config.environment["XLA_FLAGS"] = (config.environment.get("XLA_FLAGS", "")
                                       + " --xla_backend_optimization_level=0").strip()
config.environment["TF_CPP_MIN_LOG_LEVEL"] = "2"

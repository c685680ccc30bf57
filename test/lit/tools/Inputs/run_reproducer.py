"""Run the command of the last 'note: reproduce with:' line in a file of alpa-opt stderr.

Used by reproducer.mlir: lit's shell cannot run a command it reads from a file.
``alpa-opt`` is run as ``python -m alpa_mlir.tools.alpa_opt``, as lit.cfg.py does;
the reproducer's output is printed and its exit code returned.
"""

import shlex
import subprocess
import sys

NOTE = "note: reproduce with: "

with open(sys.argv[1]) as handle:
    commands = [line[len(NOTE):] for line in handle.read().splitlines() if line.startswith(NOTE)]
if not commands:
    sys.exit(f"no '{NOTE}' line in {sys.argv[1]}")
program, *arguments = shlex.split(commands[-1])
if program != "alpa-opt":
    sys.exit(f"the reproducer runs {program!r}, not alpa-opt")
result = subprocess.run([sys.executable, "-m", "alpa_mlir.tools.alpa_opt", *arguments],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print(result.stdout, end="")
sys.exit(result.returncode)

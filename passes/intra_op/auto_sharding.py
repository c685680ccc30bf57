"""``alpa-auto-sharding``: the intra-op pass of Sec. 4 (strategies, costs, ILP, annotations)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from jax._src.lib.mlir import ir

from ...dialect.annotations import (
    MeshOptions,
    find_main,
    get_value_attrs,
    module_mesh,
    num_partitions,
    sdy_meshes,
    set_module_mesh,
)
from ...dialect.calls import unplannable_call
from ...dialect.context import walk
from ...dialect.mesh import DeviceMesh
from ...dialect.names import PARTIAL_SUMS_ATTR
from ...dialect.pass_registry import Diagnostics, Pass, provided, register
from ...dialect.sharding import ShardingSpec
from ...plans.sharding_plan import ShardingPlan
from ..schedule.rematerialize import step_layers
from . import ilp, ilp_solver
from .annotate_plan import annotate_plan
from .cost_graph import Graph, ReshardingOracle
from .cost_model import collective
from .memory_rows import MemoryRows, memory_rows, within
from .peak_memory import peak_memory
from .plan_constraints import check_callbacks, force_layouts, pin_user_shardings
from .remat_choice import Attempt, RematerializationError, choose_rematerialization
from .strategies import StrategyOptions
from .strategy_tables import TableCache

ALIASING_OUTPUT = "tf.aliasing_output"
# Ties between a reduce-scatter algorithm and all-reduce + slicing go to the
# reduce-scatter under prefer-reduce-scatter (the paper's post-ILP rewrite, Sec. 4.2).
# In bytes' transfer time on the mesh's fastest axis, as MEMORY_TIE_BREAK.
REDUCE_SCATTER_BONUS = 1e-6
# Ties in communication go to the algorithm that keeps fewer bytes per device (Alpa
# penalises replicated algorithms the same way): per byte held, this many bytes' transfer
# time on the mesh's fastest axis, small against any real collective. (Unscaled, on a
# mesh priced in seconds, 3.3e-12 s per NVLink byte, it outweighed the collectives: GPT-3
# 1.3B on (8,) was planned ZeRO-3-like at 1.19x data parallelism's ring-weighted bytes.)
MEMORY_TIE_BREAK = 1e-12
# Rounds of re-solving after XLA priced picked reshardings (resharding-costs=xla).
MAX_REPRICING = 8
# resharding-costs=xla: for a mesh, a probe that gives, for (src, dst, shape, itemsize),
# the collectives XLA's SPMD partitioner emits for that resharding, each with the factor
# its bytes scale by (kind, bytes, mesh_axes, group_size, as lowering.hlo_collectives
# reads them); a ValueError where it cannot ask XLA (too few devices).
ReshardingProbe = Callable[[DeviceMesh], Callable[[ShardingSpec, ShardingSpec, tuple[int, ...], int],
                                                  Sequence[tuple[Any, float]]]]


@register
@dataclass(frozen=True)
class AutoShardingPass(MeshOptions, Pass):
    """Choose a parallel algorithm for every op with an ILP, and annotate the module.

    Runs after ``alpa-import-pipeline`` (calls inlined, user shardings in canonical
    ``mhlo.sharding`` form) on the module's public ``main`` function. For every op
    it enumerates the parallel algorithms of its loop nest on the logical mesh
    (Sec. 4.1, Table 3), costs their collectives and the resharding between
    connected ops on the alpha-beta model (Tables 2-3), merges trivial ops into
    their operands (Sec. 4.2), and solves Eq. 1 with CVXPY (HiGHS by default),
    after exactly eliminating chain and tree parts of the graph. The result
    carries the chosen shardings; where an op needs an operand in another layout
    than its producer gives, a ``custom_call @Sharding`` makes the resharding
    explicit, so XLA's SPMD partitioner inserts the collectives the plan predicted.

    Input::

        func.func @main(%x: tensor<64x1024xf32>, %w: tensor<1024x1024xf32>) -> tensor<64x1024xf32> {
          %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] ...

    Output (``mesh-shape=1,4``)::

        module attributes {alpa.mesh = {...}, mhlo.num_partitions = 4 : i32} {
          func.func @main(%x: tensor<64x1024xf32> {mhlo.sharding = "{replicated}"},
                          %w: tensor<1024x1024xf32> {mhlo.sharding = "{devices=[1,4]<=[4]}"}) ...
            %0 = stablehlo.dot_general ... {mhlo.sharding = "{devices=[1,4]<=[4]}"}

    Ops without a rule run replicated, with a warning. A host callback (``jax.debug.print``,
    ``io_callback``) reads its operands whole and runs once, on the one device its sharding
    names (``{maximal device=N}``, as under ``jax.jit``). With ``memory-budget`` the plan's
    predicted peak (``peak_memory.py``, XLA's figure) stays within it (``memory_rows.py``);
    with ``rematerialize=auto`` on a step marked by ``alpa-layer-construction``, where no
    plan fits, layers' activations are recomputed in the backward pass, the layers chosen
    with the plan (``remat_choice.py``, ``alpa-rematerialize``).
    Errors: invalid options (named), an infeasible memory budget (with the memory the step
    needs at least, and with micro-batches, a smaller batch or more devices), a pinned
    sharding the op cannot produce, a host callback off the mesh or split over it, a
    dynamic dimension, a recursive call or a call to a declaration (``dialect/calls.py``).
    """

    name = "alpa-auto-sharding"

    mesh_alpha: tuple[float, ...] = field(default=(), metadata={"help": "per mesh axis latency of a collective"})
    mesh_beta: tuple[float, ...] = field(default=(), metadata={"help": "per mesh axis time per byte"})
    memory_budget: float = field(default=0.0, metadata={
        "help": "bytes per device the plan may hold, as XLA's memory_analysis adds them up (arguments + outputs - "
                "donated + peak temporaries; 0: off)"})
    prefer_reduce_scatter: bool = field(
        default=False, metadata={"help": "reduce-scatter + all-gather instead of all-reduce on ties (ZeRO-2)"})
    zero_stage: int = field(default=0, metadata={
        "help": "with force-data-parallel: 0 replicates parameters and optimizer state, 1-2 shard the optimizer "
                "state, 3 also the parameters"})
    force_data_parallel: bool = field(
        default=False, metadata={"help": "split the batch over all devices, replicate the rest (needs batch-args)"})
    force_batch_dim_to_mesh_dim: int = field(
        default=-1, metadata={"help": "mesh axis the batch dimension must be split on (-1: free; needs batch-args)"})
    batch_args: tuple[int, ...] = field(
        default=(), metadata={"help": "arguments whose leading dimension is the batch, e.g. 1; they come in split "
                                          "on it where the mesh allows"})
    state: tuple[tuple[int, int], ...] = field(default=(), metadata={
        "help": "argument:result pairs of the training state, e.g. 0:0,1:1; each pair keeps one sharding in and "
                "out, so the next step takes the state as this one returns it"})
    allow_recompute_heavy_op: bool = field(
        default=False, metadata={"help": "let matmuls and convolutions replicate their work"})
    allow_mixed_mesh_shape: bool = field(default=False, metadata={
        "help": "let one tensor dimension be split over any several mesh axes (XLA's option of that name: S^{01} "
                "on a 2-D mesh, and on a 3-D mesh also two axes beside the third); off, each dimension takes at "
                "most one axis unless allow-flattened-mesh"})
    allow_flattened_mesh: bool = field(default=False, metadata={
        "help": "let one tensor dimension be split over all mesh axes together (S^{01}, Table 3 rows 6-7: 1-D "
                "data parallelism over the whole mesh), without the other mixed shapes"})
    allow_all_gather: bool = field(default=True, metadata={"help": "allow reshardings that all-gather"})
    allow_all_to_all: bool = field(default=True, metadata={"help": "allow reshardings that all-to-all"})
    allow_replicated_parameters: bool = field(default=True, metadata={
        "help": "let arguments other than batch-args come in replicated (off: each is split where its shape "
                "allows)"})
    share_reshardings: bool = field(default=False, metadata={
        "help": "price a resharding once per value and layout, as XLA makes it, where two or more matmuls or "
                "convolutions read the value (Eq. 1 prices it per user), and let an op follow only an operand "
                "at least as large as its result (layer norm's broadcast mean); plans closer to what XLA "
                "emits, an ILP 2.5x slower on a 24-layer GPT"})
    keep_user_shardings: Literal["all", "io", "none"] = field(
        default="all", metadata={"help": "pinned shardings that bind the plan: all, io (arguments and results), none"})
    resharding_costs: Literal["model", "xla"] = field(default="model", metadata={
        "help": "how reshardings are priced: model (Table 2's collectives) or xla (what XLA's SPMD partitioner "
                "emits for each resharding the plan picks, asked of XLA on the local devices; the ILP is solved "
                "again until every picked resharding is priced as XLA emits it)"})
    tie_repeated_layers: bool = field(default=False, metadata={
        "help": "ops whose neighbourhoods in the cost graph look alike (the same op of identical layers) take one "
                "choice, so repeated layers are solved once; the tied plan is then improved op by op on the whole "
                "graph (an upper bound on Eq. 1's optimum, equal to it on the models measured)"})
    rematerialize: Literal["none", "auto", "all"] = field(default="none", metadata={
        "help": "recompute layers' activations in the backward pass (alpa-rematerialize; needs the layers of "
                "alpa-layer-construction): none; auto (where no plan fits memory-budget without, the layers "
                "whose recompute gives the cheapest plan that fits); all (every layer)"})
    partial_sums: Literal["float32", "result"] = field(default="float32", metadata={
        "help": "what a bf16 or f16 dot split over its contraction all-reduces: float32 partials (the values "
                "its unsplit dot computes; alpa-widen-split-contractions emits them) or partials of its result "
                "type (half the bytes on a GPU, rounded before they are summed, as plain XLA and Megatron-LM do)"})
    solver: str = field(default="HIGHS", metadata={"help": "CVXPY MILP solver"})
    solver_time_limit: float = field(default=0.0, metadata={"help": "seconds (0: no limit)"})
    mip_gap: float = field(default=ilp.HIGHS_MIP_GAP, metadata={
        "help": "how far above the optimum Eq. 1's value may be, as a fraction of it (HiGHS's mip_rel_gap, and "
                "HiGHS's own value); a plan the LP relaxation proves that close is taken without branch and bound"})
    report: str = field(default="", metadata={"help": "path of a JSON plan report"})
    resharding_probe: ReshardingProbe | None = provided(
        "resharding-costs=xla: what XLA emits for a resharding (lowering.reshard_probe.resharding_probe)")
    on_plan: Callable[[ShardingPlan], None] | None = provided("receives the plan, as the report file would")
    strategy_tables: TableCache | None = provided(
        "the strategy and resharding tables to share with other plans on the same mesh (the stage search's; "
        "without it, one run's attempts share their own)")

    def __post_init__(self) -> None:
        super().__post_init__()
        rank = len(self.mesh_shape)
        for label, values in (("mesh-alpha", self.mesh_alpha), ("mesh-beta", self.mesh_beta)):
            if values and rank and len(values) != rank:
                raise ValueError(f"option '{label}' has {len(values)} values but 'mesh-shape' has {rank} axes")
            if any(v < 0 for v in values):
                raise ValueError(f"option '{label}' has a negative value")
        if self.memory_budget < 0:
            raise ValueError("option 'memory-budget' must be positive (0 turns it off)")
        if self.zero_stage not in (0, 1, 2, 3):
            raise ValueError(f"option 'zero-stage' must be 0, 1, 2 or 3; got {self.zero_stage}")
        if self.zero_stage and not self.force_data_parallel:
            raise ValueError("option 'zero-stage' shapes data parallelism: it needs 'force-data-parallel'")
        if (self.force_data_parallel or self.force_batch_dim_to_mesh_dim >= 0) and not self.batch_args:
            raise ValueError("options 'force-data-parallel' and 'force-batch-dim-to-mesh-dim' need 'batch-args' "
                             "(the arguments whose leading dimension is the batch)")
        if self.force_batch_dim_to_mesh_dim < -1:
            raise ValueError(f"option 'force-batch-dim-to-mesh-dim' is a mesh axis index, or -1 for none; got "
                             f"{self.force_batch_dim_to_mesh_dim}")
        if rank and self.force_batch_dim_to_mesh_dim >= rank:
            raise ValueError(f"option 'force-batch-dim-to-mesh-dim' is {self.force_batch_dim_to_mesh_dim} but the "
                             f"mesh has {rank} axes")
        if self.solver_time_limit < 0:
            raise ValueError("option 'solver-time-limit' must not be negative")
        if not 0 <= self.mip_gap < 1:
            raise ValueError(f"option 'mip-gap' is a fraction in [0, 1); got {self.mip_gap}")

    # ------------------------------------------------------------------ driver

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        plan = self.plan_module(module, diagnostics)
        if plan is not None and self.on_plan is not None:
            self.on_plan(plan)
        if plan is not None and self.report:
            try:
                plan.save(self.report)
            except OSError as error:
                diagnostics.error(module, f"option 'report': cannot write {self.report}: {error.strerror}")

    def plan_module(self, module: ir.Operation, diagnostics: Diagnostics) -> ShardingPlan | None:
        """Annotate ``module`` as :meth:`apply` does and return its plan (``None`` after an error)."""
        try:
            physical = self._mesh(module)
            func = _planned_function(module)
            arguments = len(func.regions[0].blocks[0].arguments)
            if any(not 0 <= a < arguments for a in self.batch_args):
                raise ValueError(f"option 'batch-args' names argument(s) {list(self.batch_args)} but @main has "
                                 f"{arguments} arguments")
            check_state(func, self.state)
            oracle = self._xla_oracle(physical) if self.resharding_costs == "xla" else None
            layers = step_layers(func)
            if self.rematerialize == "all" and not layers:
                raise ValueError("option 'rematerialize=all' needs @main's layers: run alpa-layer-construction first")
        except ValueError as error:
            diagnostics.error(module, str(error))
            return None
        dynamic = _dynamic_value(func)
        if dynamic is not None:
            where, value_type = dynamic
            diagnostics.error(where, f"auto-sharding needs static shapes; {value_type} has a dynamic dimension: "
                                     "trace the function with concrete shapes")
            return None
        call = unplannable_call(module, func)
        if call is not None:
            diagnostics.error(*call)
            return None
        mesh = DeviceMesh(physical.shape, axis_names=physical.axis_names, alpha=physical.alpha, beta=physical.beta)
        forbidden = frozenset(kind for kind, allowed in (("all-gather", self.allow_all_gather),
                                                         ("all-to-all", self.allow_all_to_all)) if not allowed)
        tables = TableCache() if self.strategy_tables is None else self.strategy_tables
        try:
            attempt = choose_rematerialization(
                func, lambda f: self._attempt(f, mesh, oracle, forbidden, tables, diagnostics), layers,
                self.rematerialize, self.memory_budget)
        except RematerializationError as error:
            diagnostics.error(func, f"auto-sharding: {error}")
            return None
        if attempt is None:
            return None
        graph, solution, func = attempt.graph, attempt.solution, attempt.func
        if not solution.optimal:
            limit = f"{self.solver_time_limit} s" if self.solver_time_limit else \
                f"{ilp_solver.BUDGET_TIME_LIMIT} s under a memory budget, option 'solver-time-limit' raises it"
            found = "the plan prices memory into Eq. 1 instead, and fits" \
                if solution.stats.method.startswith("memory-priced") else "the plan is feasible"
            diagnostics.warning(func, f"auto-sharding: the solver stopped at its time limit ({limit}); {found} "
                                      "but is not proven optimal")
        memory = peak_memory(graph, solution.choices, attempt.donated)
        plan = replace(annotate_plan(graph, solution, func, mesh, physical), memory=memory,
                       recomputed=attempt.recomputed)
        set_module_mesh(module, physical)
        if self.partial_sums == "result":
            module.attributes[PARTIAL_SUMS_ATTR] = ir.StringAttr.get("result")
        return plan

    def _attempt(self, func: ir.Operation, mesh: DeviceMesh, oracle: ReshardingOracle | None,
                 forbidden: frozenset[str], tables: TableCache, diagnostics: Diagnostics) -> Attempt | None:
        """The cost graph of ``func`` (its tables from ``tables``) and its plan (``solution``
        None where no plan fits the memory budget); ``None`` after an error."""
        options = StrategyOptions(
            # force-data-parallel splits the batch over all axes: S^{01} on a 2-D mesh.
            allow_flattened_mesh=self.allow_flattened_mesh or self.force_data_parallel,
            allow_mixed_mesh_shape=self.allow_mixed_mesh_shape,
            allow_recompute_heavy_op=self.allow_recompute_heavy_op,
            reduce_scatter=self.prefer_reduce_scatter, float32_partials=self.partial_sums == "float32")
        graph = Graph(func, mesh, options, self.batch_args, forbidden, self.share_reshardings,
                      tables=tables.tables(mesh, options, forbidden))
        for name, op in sorted(graph.no_rule.items()):
            diagnostics.warning(op, f"no sharding rule for '{name}'; it runs replicated")
        donated = _tie_aliases(graph, func, self.state)
        if not (check_callbacks(graph, mesh, diagnostics)
                & pin_user_shardings(graph, func, mesh, self.keep_user_shardings, diagnostics)):
            return None
        force_layouts(graph, mesh, batch_args=self.batch_args,
                      force_batch_dim_to_mesh_dim=self.force_batch_dim_to_mesh_dim,
                      force_data_parallel=self.force_data_parallel, zero_stage=self.zero_stage,
                      allow_replicated_parameters=self.allow_replicated_parameters)
        if self.share_reshardings:
            graph.share_reshardings()
        _break_ties(graph, mesh, prefer_reduce_scatter=self.prefer_reduce_scatter)
        try:
            solution, planned = self._solve(graph, oracle, donated)
            return Attempt(func, planned, donated, solution)
        except ilp.InfeasibleError as error:
            if self.memory_budget and (not forbidden or isinstance(error, ilp.BudgetError)):
                return Attempt(func, graph, donated, None, str(error))
            hint = ""
            if forbidden:
                hint = ", or turn on option " + " or ".join(f"'allow-{kind}'" for kind in sorted(forbidden))
            diagnostics.error(func, f"auto-sharding: {error}{hint}")
            return None
        except ilp.IlpError as error:
            diagnostics.error(func, f"auto-sharding: {error}")
            return None

    def _solve(self, graph: Graph, oracle: ReshardingOracle | None, donated: set[int]) -> tuple[ilp.Solution, Graph]:
        """Eq. 1's optimum, within the memory budget if there is one (``memory_rows.within``),
        and the graph it is priced on (``graph``, or with share-reshardings maybe its
        :meth:`~Graph.unshared` variant). The memory rows depend on the copy nodes being
        priced or not, not on the prices: made once per variant."""
        made: dict[bool, MemoryRows] = {}  # by the variant's share

        def rows(variant: Graph) -> MemoryRows:
            if variant.share not in made:
                made[variant.share] = memory_rows(variant, donated)
            return made[variant.share]

        if not self.memory_budget:
            return self._priced(graph, oracle, None, rows)
        return within(lambda budget: self._priced(graph, oracle, budget, rows),
                      lambda found: peak_memory(found[1], found[0].choices, donated).total, self.memory_budget)

    def _priced(self, graph: Graph, oracle: ReshardingOracle | None, budget: float | None,
                rows: Callable[[Graph], MemoryRows]) -> tuple[ilp.Solution, Graph]:
        """Eq. 1's optimum and the graph it is priced on; with resharding-costs=xla, solved
        again while XLA prices a picked resharding differently than assumed (each round
        asks XLA about new pairs only, so it ends). After MAX_REPRICING rounds the plan of
        the last is kept, its objective repriced; with share-reshardings it is compared, as
        XLA prices them, with the plan found on the graph's :meth:`~Graph.unshared` variant
        (measured: BERT on (2, 2, 2), where every round met another axis order of a
        flattened resharding Table 2 prices at a third of XLA's)."""
        solution, converged = self._rounds(graph, oracle, budget, rows)
        if converged or not graph.copies:
            return solution, graph
        variant = graph.unshared()
        unshared, _ = self._rounds(variant, oracle, budget, rows)
        if solution.objective <= unshared.objective:
            return solution, graph  # annotated as priced: through the copies
        return unshared, variant

    def _rounds(self, graph: Graph, oracle: ReshardingOracle | None, budget: float | None,
                rows: Callable[[Graph], MemoryRows]) -> tuple[ilp.Solution, bool]:
        """The last round's plan with its objective at the latest prices, and whether
        XLA priced every resharding it picks as the ILP did."""
        memory = rows(graph) if budget is not None else MemoryRows((), (), 0.0)
        for _ in range(MAX_REPRICING + 1):
            solution = ilp.solve(graph.cost_graph(memory.live_sets, memory.edge_memory),
                                 memory_budget=None if budget is None else budget - memory.fixed, solver=self.solver,
                                 time_limit=self.solver_time_limit or None, presolve=graph.share and bool(graph.copies),
                                 mip_gap=self.mip_gap, tie_repeated=self.tie_repeated_layers,
                                 cost_unit=min(graph.mesh.beta) or 1.0)
            if oracle is None or not graph.measure_reshardings(solution.choices, oracle):
                return solution, True
        return replace(solution, objective=ilp.objective(graph.cost_graph(), solution.choices)), False

    def _xla_oracle(self, mesh: DeviceMesh) -> ReshardingOracle:
        """Reshardings priced as XLA's SPMD partitioner emits them, through
        ``resharding_probe``; a ValueError when there is none, or too few devices to ask XLA."""
        if self.resharding_probe is None:
            raise ValueError("option 'resharding-costs=xla' asks XLA, through a resharding probe the pass is not "
                             "given: build it with resharding_probe= (alpa-opt and alpa_mlir give lowering's)")
        probe = self.resharding_probe(mesh)

        def oracle(src: ShardingSpec, dst: ShardingSpec, shape: tuple[int, ...], itemsize: int) -> tuple:
            return tuple(collective(c.kind, c.bytes * factor, c.mesh_axes or (), mesh, group=c.group_size)
                         for c, factor in probe(src, dst, shape, itemsize))

        return oracle

    def _mesh(self, module: ir.Operation) -> DeviceMesh:
        if sdy_meshes(module):
            # The pass reads canonical mhlo.sharding pins only; Shardy's would be ignored
            # and contradicted by the shardings it writes.
            raise ValueError("the module's shardings are Shardy's (sdy.mesh, sdy.sharding): run "
                             "alpa-import-pipeline (or alpa-import-sharding) before alpa-auto-sharding")
        found = module_mesh(module, MeshOptions())
        if found is not None and found.size == 1:  # jax.jit lowers for one device: nothing to keep
            found = None
        option = self.option_mesh()
        if option is None and found is None:
            raise ValueError("auto-sharding needs a device mesh: pass option 'mesh-shape' (e.g. mesh-shape=2,4)")
        devices = num_partitions(module)
        if option is not None and found is not None and option.size != found.size:
            raise ValueError(f"option 'mesh-shape' {list(option.shape)} has {option.size} devices but the module's "
                             f"mesh has {found.size}")
        if option is not None and found is None and devices and devices not in (1, option.size):
            raise ValueError(f"option 'mesh-shape' {list(option.shape)} has {option.size} devices but the module "
                             f"has mhlo.num_partitions = {devices}")
        mesh = option or found
        for label, values in (("mesh-alpha", self.mesh_alpha), ("mesh-beta", self.mesh_beta)):
            if values and len(values) != mesh.ndim:
                raise ValueError(f"option '{label}' has {len(values)} values but the mesh has {mesh.ndim} axes")
        if self.force_batch_dim_to_mesh_dim >= mesh.ndim:
            raise ValueError(f"option 'force-batch-dim-to-mesh-dim' is {self.force_batch_dim_to_mesh_dim} but the "
                             f"module's mesh has {mesh.ndim} axes")
        return DeviceMesh(mesh.shape, mesh.device_ids, mesh.axis_names,
                          self.mesh_alpha or mesh.alpha, self.mesh_beta or mesh.beta)


def check_state(func: ir.Operation, state: tuple[tuple[int, int], ...]) -> None:
    """Option 'state' names existing arguments and results of one type, each at most once."""
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    inputs, results = function_type.inputs, function_type.results
    for label, numbers in (("argument", [a for a, _ in state]), ("result", [r for _, r in state])):
        repeated = sorted({n for n in numbers if numbers.count(n) > 1})
        if repeated:
            raise ValueError(f"option 'state' ties {label} {repeated[0]} twice")
    for argument, result in state:
        if not (0 <= argument < len(inputs) and 0 <= result < len(results)):
            raise ValueError(f"option 'state' pair {argument}:{result} is out of range: @main has "
                             f"{len(inputs)} arguments and {len(results)} results")
        if inputs[argument] != results[result]:
            raise ValueError(f"option 'state' pair {argument}:{result} ties an argument of type "
                             f"{inputs[argument]} to a result of type {results[result]}; a state value keeps "
                             "its type")


def _planned_function(module: ir.Operation) -> ir.Operation:
    try:
        return find_main(module)
    except ValueError as error:
        raise ValueError(f"auto-sharding plans one function: {error}") from None


def _dynamic_value(func: ir.Operation) -> tuple[ir.Operation, ir.Type] | None:
    """The first argument (at ``func``) or op result with a dynamic dimension, and its type."""
    for argument in func.regions[0].blocks[0].arguments:
        if isinstance(argument.type, ir.ShapedType) and not ir.ShapedType(argument.type).has_static_shape:
            return func, argument.type
    for op in walk(func):
        for result in op.results:
            if isinstance(result.type, ir.ShapedType) and not ir.ShapedType(result.type).has_static_shape:
                return op, result.type
    return None


def _tie_aliases(graph: Graph, func: ir.Operation, state: tuple[tuple[int, int], ...]) -> set[int]:
    """Tie each argument aliased to a result (``tf.aliasing_output``: donated) and each
    training-state pair of ``state`` to its result; the donated argument numbers."""
    for number, attrs in enumerate(get_value_attrs(func, "arg_attrs")):
        if ALIASING_OUTPUT in attrs:
            graph.add_alias(number, ir.IntegerAttr(attrs[ALIASING_OUTPUT]).value)
    donated = {use.src for use in graph.uses if use.kind == "alias"}  # argument numbers
    for argument, result in state:
        if argument not in donated:  # a donation already ties it (argument number = node number)
            graph.add_alias(argument, result)
    return donated


def _break_ties(graph: Graph, mesh: DeviceMesh, *, prefer_reduce_scatter: bool) -> None:
    """Between plans of equal Eq. 1, the one that holds less memory; with
    ``prefer_reduce_scatter``, the one with reduce-scatters."""
    byte_time = min(mesh.beta)
    for node in graph.nodes:
        if node.kind != "result":  # a result's layout is its value's, which breaks the tie
            node.costs = node.costs + MEMORY_TIE_BREAK * byte_time * graph.memory(node)
    if prefer_reduce_scatter:
        # Sec. 4.2's rewrite turns an all-reduce into a reduce-scatter and, where the
        # value is needed whole, an all-gather: the same bytes, one collective latency
        # more. Preferring it (ZeRO-2: gradients and optimizer state sharded) credits
        # that latency back, so the bytes decide and ties go to the reduce-scatter.
        for node in graph.nodes:
            node.costs = node.costs - np.array([sum(
                max(mesh.alpha[a] for a in c.mesh_axes) + REDUCE_SCATTER_BONUS * byte_time
                for c in s.communication if c.kind == "reduce-scatter") for s in node.strategies])

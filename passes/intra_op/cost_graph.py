"""The cost graph of Eq. 1: one node per op with its parallel algorithms, one edge per use.

Nodes are the function's arguments, its ops (in program order, including the ops
inside ``while``/``case``/``if`` regions) and one sink per function result. An edge
``(v, u)`` carries ``R_vu`` of Eq. 1: the resharding cost from the sharding each
algorithm of ``v`` gives a value to the sharding each algorithm of ``u`` needs.

Control flow keeps operands, bodies and results consistent: a ``while`` result,
its operand, the matching argument of its body and condition, and the value its
body yields are one loop-carried value with one ``carry`` node, which defines the
block arguments and gets edges from the operand and the yielded value; a
``case``/``if`` result is a ``carry`` node with an edge from the value every branch
returns; an ``optimization_barrier`` result is one with an edge from its operand.
Carried values choose their shardings independently of each other.

Loops are priced per step: an op inside a counted ``while`` body (``lax.scan``,
``lax.fori_loop``; :func:`dialect.loops.trip_count`) runs once per trip, so its
algorithm's costs and the reshardings of the values it reads count ``trips`` times
(nested loops multiply); a loop XLA cannot count is priced as one trip. What a value
keeps in memory does not repeat: one trip's buffers are live at a time.

Shared reshardings (option ``share-reshardings``): Eq. 1 charges a resharding on
every edge, but XLA reshards a value once per layout, however many users need it
there. A value that two or more heavy ops read (a matmul's input, which its weight
gradient reads again; a weight, read by the forward and the backward matmul), and
that does not follow its producer, gets a ``copy`` node (:meth:`Graph.share_reshardings`):
its users take the value from the copy, which takes it from the producer, so a
layout several users need is paid once (producer to copy); a copy in the
producer's layout prices every user as before. A user needing the producer's
layout while the copy has another is priced from the copy, an upper bound (it
reads the original). Only heavy users: copies for every shared value gave the same
plan for a 6-layer GPT-3 1.3B step on (2, 4), at 12.0 s of solver time against 10.0.

Sec. 4.2's merging: a computationally trivial op (not heavy) follows its deepest
operand when, for every algorithm of that operand, it has an algorithm that takes
the operand as it comes; the ILP then decides both with one variable. An op that updates a function
argument (or a value following one) with a computed value of the same size is not
merged: whether it takes the argument's layout or the computed value's is what the
ILP has to decide (constants and broadcasts, which match any layout for free, do
not count as operands here). With ``share-reshardings``, an op does not follow an
operand smaller than its result either (layer norm's ``[b, s, 1]`` mean broadcast to
``[b, s, h]``): following, the broadcast could not take the layout its users need.
That merge is kept otherwise, since lifting it alone exposes Eq. 1's per-user
overcount: a GShard MoE layer then all-gathers its experts (689 KiB against 489).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from jax._src.lib.mlir import ir

from ...dialect.loops import trip_count
from ...dialect.mesh import DeviceMesh
from ...dialect.names import RECOMPUTE_ATTR
from ...dialect.sharding import ShardingSpec, tile_bytes
from ...plans.sharding_plan import Collective
from .cost_model import resharding_collectives
from .ilp_graph import CostGraph, Edge, EdgeMemory, Follow
from .rules import itemsize_of, iteration_space, replicated_space, shape_of, value_space
from .strategies import StrategyOptions, compute_costs, enumerate_strategies
from .strategy import IterationSpace, Strategy
from .strategy_tables import StrategyTables

CONTROL_FLOW = ("stablehlo.while", "stablehlo.case", "stablehlo.if")
# An identity on each operand (jax.checkpoint's fence around saved values): like a
# while's loop-carried values, each operand and result pair takes its own sharding.
BARRIER = "stablehlo.optimization_barrier"
TERMINATORS = ("func.return", "stablehlo.return")
# Ops that produce any layout without communication (from nothing or a lower rank).
FREE_PRODUCERS = ("stablehlo.constant", "stablehlo.iota", "stablehlo.broadcast_in_dim")

# (src, dst, shape, itemsize) -> the collectives XLA emits for that resharding.
ReshardingOracle = Callable[[ShardingSpec, ShardingSpec, tuple[int, ...], int], tuple[Collective, ...]]


@dataclass
class Node:
    """One vertex of the cost graph."""

    kind: str  # "argument" | "op" | "carry" (a control-flow result) | "result" | "copy" (shared resharding)
    label: str
    strategies: list[Strategy]
    op: ir.Operation | None = None
    index: int = 0  # argument / result number
    shapes: tuple[tuple[int, ...] | None, ...] = ()
    itemsizes: tuple[int, ...] = ()
    depth: int = 0
    has_rule: bool = True
    space: IterationSpace | None = None
    batch_loops: frozenset[int] = frozenset()
    costs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    signature: tuple = ()  # what its strategies were enumerated from (and any pin added to them)
    trips: int = 1  # runs per step: the trip counts of the loops around it

    @property
    def heavy(self) -> bool:
        return self.space is not None and self.space.heavy


@dataclass
class Use:
    """Value ``result`` of node ``src`` consumed by node ``dst`` as its operand ``slot``
    (``kind`` "operand"), as the value its region yields for result ``slot``
    ("yield"), or as the buffer of a donated argument ``slot`` ("alias": same sharding
    or nothing). ``user`` is the op holding the use, ``operand`` its operand number,
    ``trips`` how often that op runs per step."""

    src: int
    result: int
    dst: int
    kind: str
    slot: int
    user: ir.Operation | None = None
    operand: int = 0
    trips: int = 1

    def needs(self, dst: Node) -> list[ShardingSpec | None]:
        if self.kind == "operand":
            return [s.operands[self.slot] for s in dst.strategies]
        return [s.results[self.slot] for s in dst.strategies]


class Graph:
    """The cost graph of one function on a mesh; see the module docstring."""

    def __init__(self, func: ir.Operation, mesh: DeviceMesh, options: StrategyOptions,
                 batch_args: tuple[int, ...] = (), forbidden: frozenset[str] = frozenset(), share: bool = False,
                 *, tables: StrategyTables | None = None):
        self.mesh = mesh
        # share-reshardings (see the module docstring); in the variant unshared() builds, the
        # copy nodes stay but price nothing, and Sec. 4.2's merging is as without it.
        self.share = share
        self.options = options
        self.forbidden = forbidden  # collective kinds no resharding may use (allow-all-gather=false, ...)
        self.nodes: list[Node] = []
        self.uses: list[Use] = []
        self.source: dict[ir.Value, tuple[int, int]] = {}
        self.batch_dims: dict[ir.Value, set[int]] = {}
        self.no_rule: dict[str, ir.Operation] = {}
        self.measured: dict[tuple, tuple[Collective, ...]] = {}  # reshardings XLA was asked about
        # Strategies, resharding costs and matrices by what they are computed from, shared
        # with the other graphs built with ``tables`` (strategy_tables.py; fresh ones if None)
        # until XLA prices a resharding (measure_reshardings takes copies).
        tables = StrategyTables() if tables is None else tables
        self._strategies, self._costs, self._matrices, self._memory = \
            tables.strategies, tables.costs, tables.matrices, tables.memory
        self.copies: list[tuple[int, int, int]] = []  # (producer, result, copy node) of shared reshardings
        self._routed: dict[int, int] = {}  # number of a use -> the copy node it takes its value from
        self._sinks: dict[int, int] = {}  # result number -> its node
        self._trips = 1  # runs per step of the block being walked
        block = func.regions[0].blocks[0]
        for number, arg in enumerate(block.arguments):  # argument number = node number
            node = self._add(Node("argument", f"argument #{number}", [], index=number,
                                  shapes=(shape_of(arg),), itemsizes=(itemsize_of(arg),)),
                             value_space(shape_of(arg), consumes=False))
            self.source[arg] = (node, 0)
            if number in batch_args and shape_of(arg):
                self.batch_dims[arg] = {0}
        self._walk_block(block)

    # --------------------------------------------------------------------- building

    def _add(self, node: Node, space: IterationSpace, operands=()) -> int:
        node.space = space
        key = (space, tuple(shape_of(v) for v in operands), tuple(itemsize_of(v) for v in operands),
               node.shapes, node.itemsizes)
        if key not in self._strategies:  # repeated layers repeat their ops: enumerate once
            strategies = enumerate_strategies(space, *key[1:], self.mesh, options=self.options)
            costs = np.array([s.cost for s in strategies], dtype=float)
            costs.flags.writeable = False  # shared: every change makes a new array
            self._strategies[key] = strategies, costs
        node.signature = key
        node.trips = self._trips
        strategies, node.costs = self._strategies[key]
        node.strategies = list(strategies)
        self.nodes.append(node)
        return len(self.nodes) - 1

    def _walk_block(self, block: ir.Block) -> None:
        for op in block.operations:
            op = op.operation
            if op.name == "func.return":
                for number, value in enumerate(op.operands):
                    self._add_result_sink(number, value, op)
            elif op.name not in TERMINATORS:
                self._add_op(op)

    def _add_op(self, op: ir.Operation) -> None:
        if op.name in CONTROL_FLOW or op.name == BARRIER:
            self._add_control_flow(op)
            return
        shapes = tuple(shape_of(r) for r in op.results)
        itemsizes = tuple(itemsize_of(r) for r in op.results)
        space = iteration_space(op)
        has_rule = space is not None
        if space is None:
            self.no_rule.setdefault(op.name, op)
            space = replicated_space(op)
        node = Node("op", op.name, [], op=op, shapes=shapes, itemsizes=itemsizes, has_rule=has_rule)
        index = self._add(node, space, op.operands)
        if RECOMPUTE_ATTR in op.attributes:
            # Computed again in the backward pass: its FLOPs cost flop_cost bytes' time each,
            # on the mesh's fastest axis (seconds where beta is seconds per byte).
            node.costs = node.costs + compute_costs(space, node.strategies, self.mesh, self.options)
        for number, value in enumerate(op.operands):
            self._use(index, value, "operand", number, op, number)
        for number, result in enumerate(op.results):
            self.source[result] = (index, number)
        self._propagate_batch(node, op)

    def _add_control_flow(self, op: ir.Operation) -> None:
        """One ``carry`` node per result: every loop-carried value (``while``), branch
        result (``case``/``if``) or value passing a barrier takes its own sharding, which
        the operand, the region's arguments, the value each region yields and the result
        all share."""
        carries_operands = op.name in ("stablehlo.while", BARRIER)  # result i is operand i
        carries = []
        for number, result in enumerate(op.results):
            shape = shape_of(result)
            node = Node("carry", f"{op.name} result #{number}", [], op=op, index=number, shapes=(shape,),
                        itemsizes=(itemsize_of(result),))
            operands = [op.operands[number]] if carries_operands else []
            index = self._add(node, value_space(shape, consumes=carries_operands), operands)
            carries.append(index)
            if carries_operands:
                self._use(index, op.operands[number], "operand", 0, op, number)
                dims = self.batch_dims.get(op.operands[number])
                if dims:
                    node.batch_loops = frozenset(dims)
                    self.batch_dims[result] = set(dims)
            self.source[result] = (index, 0)
        outside = self._trips
        if op.name == "stablehlo.while":
            self._trips *= trip_count(op) or 1
        for region in op.regions:
            block = region.blocks[0]
            for number, arg in enumerate(block.arguments):  # while: loop-carried values
                self.source[arg] = (carries[number], 0)
                if self.nodes[carries[number]].batch_loops:
                    self.batch_dims[arg] = set(self.nodes[carries[number]].batch_loops)
            self._walk_block(block)
            terminator = block.operations[len(block.operations) - 1].operation
            # A while condition yields the predicate; bodies and branches yield results.
            if terminator.name == "stablehlo.return" and len(terminator.operands) == len(op.results):
                for number, value in enumerate(terminator.operands):
                    self._use(carries[number], value, "yield", 0, terminator, number)
        self._trips = outside

    def _add_result_sink(self, number: int, value: ir.Value, ret: ir.Operation) -> None:
        node = Node("result", f"result #{number}", [], index=number,
                    shapes=(shape_of(value),), itemsizes=(itemsize_of(value),))
        node.batch_loops = frozenset(self.batch_dims.get(value, ()))  # a value space's loops are its dims
        index = self._add(node, value_space(shape_of(value), consumes=True), [value])
        self._sinks[number] = index
        self._use(index, value, "operand", 0, ret, number)

    def _use(self, dst: int, value: ir.Value, kind: str, slot: int, user: ir.Operation | None,
             operand: int) -> None:
        """``value`` feeds ``slot`` of node ``dst`` (operand ``operand`` of ``user``)."""
        if value not in self.source or shape_of(value) is None:
            return
        src, result = self.source[value]
        self.uses.append(Use(src, result, dst, kind, slot, user, operand, self._trips))
        self.nodes[dst].depth = max(self.nodes[dst].depth, self.nodes[src].depth + 1)

    def add_alias(self, argument: int, result: int) -> None:
        """Argument ``argument`` and result ``result`` keep one sharding: a donated buffer
        becomes the result, or the result is the next step's argument (training state)."""
        self.uses.append(Use(argument, 0, self._sinks[result], "alias", 0))

    def _propagate_batch(self, node: Node, op: ir.Operation) -> None:
        """Batch dimensions flow forward through the loops that index them."""
        space = node.space
        loops = set()
        for value, dims in zip(op.operands, space.operands):
            for d in self.batch_dims.get(value, ()):
                if dims is not None and dims[d] is not None:
                    loops.add(dims[d])
        node.batch_loops = frozenset(loops)
        for result, dims in zip(op.results, space.results):
            if dims is None:
                continue
            found = {d for d, loop in enumerate(dims) if loop in loops}
            if found:
                self.batch_dims[result] = found

    # --------------------------------------------------------------------- merging

    def follows(self) -> list[Follow]:
        """Sec. 4.2: trivial ops merged into their deepest operand where the mapping is total."""
        result = []
        over_arguments: set[int] = set()  # arguments, and trivial ops computing from arguments only
        by_dst: dict[int, list[Use]] = {}
        for use in self.uses:
            by_dst.setdefault(use.dst, []).append(use)
        for index, node in enumerate(self.nodes):
            uses = [u for u in by_dst.get(index, []) if u.kind == "operand"]
            # Operands that carry data: constants and broadcasts match any layout for free.
            computed = [u for u in uses if not (self.nodes[u.src].kind == "op"
                                                and self.nodes[u.src].op.name in FREE_PRODUCERS)]
            if node.kind == "argument" or (node.kind == "op" and not node.heavy and computed
                                           and all(u.src in over_arguments for u in computed)):
                over_arguments.add(index)
            if node.kind != "op" or node.heavy or not node.has_rule:
                continue
            if not uses or not np.all(np.isfinite(node.costs)):
                continue
            rank = max((len(s or ()) for s in node.shapes), default=0)  # none: an op with no results
            # An argument (or a trivial function of arguments) updated by a computed value of
            # the same size (w - dot(a, b), Adam's m * b1 + g * (1 - b1)): the update's best
            # layout may be the argument's (ZeRO: sharded state) or the computed value's, so
            # it keeps its own variable instead of following the deeper operand.
            inputs = {u.src for u in computed if len(self.nodes[u.src].shapes[u.result] or ()) == rank}
            if len(inputs) > 1 and inputs & over_arguments:
                continue
            leader_use = max(uses, key=lambda u: self.nodes[u.src].depth)
            leader = self.nodes[leader_use.src]
            # A broadcast must not inherit the few layouts of a lower-rank or smaller
            # operand (layer norm's mean, [b, s, 1] broadcast to [b, s, h]): the value it
            # makes is the big one, and its layout is what its users' reshardings cost.
            leader_shape = leader.shapes[leader_use.result] or ()
            if len(leader_shape) < rank or (self.share and math.prod(leader_shape) < max(
                    (math.prod(s or ()) for s in node.shapes), default=0)):
                continue
            cheapest: dict[ShardingSpec | None, int] = {}  # per layout needed, the first cheapest algorithm
            for j, need in enumerate(leader_use.needs(node)):
                if need not in cheapest or node.costs[j] < node.costs[cheapest[need]]:
                    cheapest[need] = j
            mapping = [cheapest.get(strategy.results[leader_use.result]) for strategy in leader.strategies]
            if None not in mapping:
                result.append(Follow(index, leader_use.src, np.array(mapping, dtype=np.int64)))
        return result

    def unshared(self) -> Graph:
        """This graph without its shared reshardings priced: the same nodes, uses and tables
        (what one prices, the other sees), its copy nodes pricing nothing and Sec. 4.2's
        merging as without share-reshardings."""
        variant = copy.copy(self)
        variant.share = False
        return variant

    def share_reshardings(self) -> None:
        """A ``copy`` node for every value two or more heavy ops outside its producer's
        merged group read (see the module docstring). Call once, after pins and restrictions."""
        leader = {f.node: f.leader for f in self.follows()}

        def root(v: int) -> int:
            while v in leader:
                v = leader[v]
            return v

        # By IR value: a loop-carried value is one node but several values (the while's
        # operand, its body's argument, its result), each resharded where it is defined.
        groups: dict[ir.Value, list[int]] = {}
        for number, use in enumerate(self.uses):
            src = self.nodes[use.src]
            if use.kind == "alias" or (src.kind == "op" and src.op.name in FREE_PRODUCERS) \
                    or root(use.src) == root(use.dst):
                continue
            groups.setdefault(use.user.operands[use.operand], []).append(number)
        for value, numbers in groups.items():
            if sum(self.nodes[self.uses[n].dst].heavy for n in numbers) < 2:
                continue
            src, result = self.uses[numbers[0]].src, self.uses[numbers[0]].result
            node = Node("copy", f"{self.nodes[src].label} result #{result} (shared resharding)", [],
                        shapes=(shape_of(value),), itemsizes=(itemsize_of(value),))
            copy = self._add(node, value_space(shape_of(value), consumes=True), [value])
            node.trips = max(self.uses[n].trips for n in numbers)  # made where its users read it
            self.copies.append((src, result, copy))
            self._routed.update(dict.fromkeys(numbers, copy))

    # --------------------------------------------------------------------- costs

    def priced_uses(self):
        """``(src, result, use)`` per edge of Eq. 1: each use from its copy if it has one,
        and each copy from its producer."""
        for number, use in enumerate(self.uses):
            copy = self._routed.get(number) if self.share else None
            yield (use.src, use.result, use) if copy is None else (copy, 0, use)
        for src, result, copy in self.copies if self.share else ():
            yield src, result, Use(src, result, copy, "operand", 0, trips=self.nodes[copy].trips)

    def cost_graph(self, live_sets: tuple[tuple[int, ...], ...] = (), edge_memory: tuple[EdgeMemory, ...] = ()
                   ) -> CostGraph:
        """Eq. 1's inputs: node costs (with pins and forced choices as inf), edges, merging;
        with ``live_sets`` and ``edge_memory`` (``memory_rows.memory_rows``), the memory
        rows and node bytes."""
        edges = []
        for src_index, result, use in self.priced_uses():
            src = self.nodes[src_index]
            shape, itemsize = src.shapes[result], src.itemsizes[result]
            given = [s.results[result] for s in src.strategies]
            needs = use.needs(self.nodes[use.dst])
            if use.kind == "alias":
                cost = np.where(np.array([[g == n for n in needs] for g in given]), 0.0, np.inf)
            else:
                # Same producer and consumer algorithms (repeated layers): same matrix.
                key = (src.signature, len(src.strategies), result, self.nodes[use.dst].signature,
                       len(needs), use.kind, use.slot)
                if key not in self._matrices:
                    self._matrices[key] = self._resharding_matrix(given, needs, shape, itemsize)
                cost = self._matrices[key]
            edges.append(Edge(src_index, use.dst, cost * use.trips if use.trips != 1 else cost))
        return CostGraph(
            node_costs=tuple(n.costs * n.trips if n.trips != 1 else n.costs for n in self.nodes),
            edges=tuple(edges),
            follows=tuple(self.follows()),
            node_memory=tuple(self.memory(n) for n in self.nodes) if live_sets else None,
            live_sets=live_sets,
            edge_memory=edge_memory,
        )

    def _resharding_matrix(self, given: list[ShardingSpec | None], needs: list[ShardingSpec | None],
                           shape: tuple[int, ...], itemsize: int) -> np.ndarray:
        rows: dict[ShardingSpec | None, int] = {}
        cols: dict[ShardingSpec | None, int] = {}
        row_index = [rows.setdefault(g, len(rows)) for g in given]
        col_index = [cols.setdefault(n, len(cols)) for n in needs]
        small = np.array([[self._cost(r, c, shape, itemsize) for c in cols] for r in rows])
        return small[np.ix_(row_index, col_index)]

    def _cost(self, src: ShardingSpec | None, dst: ShardingSpec | None, shape: tuple[int, ...],
              itemsize: int) -> float:
        if src is None or dst is None:
            return 0.0
        key = (src, dst, shape, itemsize)
        if key not in self._costs:
            self._costs[key] = self._price(self.resharding_collectives(src, dst, shape, itemsize))
        return self._costs[key]

    def _price(self, collectives: tuple[Collective, ...]) -> float:
        """A resharding's cost: its collectives' sum, inf if it needs a forbidden kind."""
        if any(c.kind in self.forbidden for c in collectives):
            return np.inf
        return sum(c.cost for c in collectives)

    def resharding_collectives(self, src: ShardingSpec, dst: ShardingSpec, shape: tuple[int, ...],
                               itemsize: int) -> tuple[Collective, ...]:
        """What turning ``src`` into ``dst`` costs: XLA's answer where it was asked, else Table 2's."""
        found = self.measured.get((src, dst, shape, itemsize))
        if found is not None:
            return found
        return resharding_collectives(src, dst, shape, itemsize, self.mesh)

    def chosen_reshardings(self, choices: list[int]):
        """``(use, steps)`` for every use whose value the algorithms ``choices`` lay out
        differently than its consumer needs (the plan's reshardings): ``steps`` are the
        ``(from, to)`` layouts on its way, through its copy's layout if that differs from both."""
        for number, use in enumerate(self.uses):
            if use.kind == "alias":
                continue
            given = self.nodes[use.src].strategies[choices[use.src]].results[use.result]
            need = use.needs(self.nodes[use.dst])[choices[use.dst]]
            if given is None or need is None or given == need:
                continue
            copy = self._routed.get(number) if self.share else None
            via = self.nodes[copy].strategies[choices[copy]].results[0] if copy is not None else need
            yield use, ((given, need),) if via in (given, need) else ((given, via), (via, need))

    def measure_reshardings(self, choices: list[int], oracle: ReshardingOracle) -> int:
        """Ask ``oracle`` about every resharding the algorithms ``choices`` need that it was not
        asked about yet; return how many priced differently than assumed (their costs, and
        every matrix built from them, are then rebuilt)."""
        changed = 0
        for use, steps in self.chosen_reshardings(choices):
            src = self.nodes[use.src]
            shape, itemsize = src.shapes[use.result], src.itemsizes[use.result]
            for given, need in steps:
                key = (given, need, shape, itemsize)
                if key in self.measured:
                    continue
                before = self._cost(given, need, shape, itemsize)
                if not self.measured:  # this graph's prices now differ from the shared ones
                    self._costs, self._matrices = dict(self._costs), {}
                self.measured[key] = oracle(given, need, shape, itemsize)
                self._costs[key] = self._price(self.measured[key])
                changed += not np.isclose(self._costs[key], before, rtol=1e-9, atol=0.0)
        if changed:
            self._matrices.clear()
        return changed

    def memory(self, node: Node) -> np.ndarray:
        """Bytes per device each algorithm keeps for the node's results (a result sink: the
        output's; a copy lives only between its users, like every resharding: nothing)."""
        if node.kind == "copy":
            return np.zeros(len(node.strategies))
        if node.signature not in self._memory:  # the signature fixes the strategies, shapes and itemsizes
            memory = np.array([sum(tile_bytes(spec, shape, size, self.mesh) for spec, shape, size in zip(
                s.results, node.shapes, node.itemsizes) if spec is not None and shape is not None)
                for s in node.strategies])
            memory.flags.writeable = False
            self._memory[node.signature] = memory
        return self._memory[node.signature]


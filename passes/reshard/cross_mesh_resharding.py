"""``alpa-cross-mesh-resharding``: explicit transfers between stages on different meshes (Sec. 6)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jax._src.lib.mlir import ir

from ...dialect.alpa_ops import build_all_gather, build_assemble, build_recv, build_send
from ...dialect.annotations import MESH_ATTR, find_main, get_value_attrs
from ...dialect.names import DIALECT_PREFIX, TRANSFER_ATTR
from ...dialect.pass_registry import Diagnostics, Pass, register
from ...dialect.sharding import ShardingError
from ...plans.reshard_plan import (
    ReshardPlan,
    device_pieces,
    plan_reshard,
)
from ...plans.step_reader import ValueLocation, body, callee_name, func_mesh, sharding_text, value_location


@dataclass
class PlannedTransfer:
    """One value to one destination mesh and sharding, with the call operands it feeds."""

    value: ir.Value
    source: ValueLocation
    destination: ValueLocation
    plan: ReshardPlan
    consumers: list[tuple[ir.Operation, int]] = field(default_factory=list)


@register
@dataclass(frozen=True)
class CrossMeshReshardingPass(Pass):
    """Move every value that crosses between stage meshes with explicit ``alpa`` ops (Sec. 6).

    Runs after ``alpa-stage-construction``: ``@main`` holds only calls of stage functions,
    each with ``alpa.mesh`` (its devices) and ``mhlo.sharding`` on its arguments and
    results, written against the mesh's shape. For every call operand produced by a call
    on another mesh, the pass plans a transfer from the producer's result sharding to the
    consumer's argument sharding (no sharding: replicated) with ``plan_reshard``: the
    first iteration of Sec. 6 sends each tile a destination device needs from a source
    device holding it; the second sends a tile that the destination replicates on k
    devices once, in k pieces, and all-gathers it inside the destination mesh. Before the
    consumer it inserts the ``alpa.send``, ``alpa.recv`` and ``alpa.all_gather`` ops and an
    ``alpa.assemble`` (see ``dialect/alpa_ops.py``), and the consumer reads the assembled
    value. Consumers on the same mesh that want the same sharding share one transfer.
    Operands from the same devices (intra-mesh resharding is the SPMD partitioner's job)
    and ``@main``'s arguments (the runtime places them) are left alone. Every op of a
    transfer carries its ``alpa.transfer`` id; channel ids are unique in the module.
    Errors: a callee without ``alpa.mesh``, meshes that overlap without being equal, a
    sharding that does not fit its mesh, a value that is not a static tensor, ops other
    than calls in ``@main``.

    Input (``{devices=[1,2]<=[2]}`` splits the columns on two devices)::

        func.func private @stage0(...) -> (tensor<4x16xf32> {mhlo.sharding = "{devices=[1,2]<=[2]}"})
            attributes {alpa.mesh = {device_ids = array<i64: 0, 1>, shape = array<i64: 1, 2>}}
        func.func private @stage1(%arg0: tensor<4x16xf32> {mhlo.sharding = "{replicated}"}) -> ...
            attributes {alpa.mesh = {device_ids = array<i64: 2, 3>, shape = array<i64: 1, 2>}}
        %0 = call @stage0(...)
        %1 = call @stage1(%0)

    Output (each column half crosses once, split in two; Fig. 6a's Megatron case)::

        %0 = call @stage0(...)
        "alpa.send"(%0) {alpa.transfer = 0 : i64, channel_id = 0 : i64, dst_device = 2 : i64,
                         src_device = 0 : i64, tile = array<i64: 0, 4, 0, 4>} : (tensor<4x16xf32>) -> ()
        ... three more sends: [0,4)x[4,8) from 0 to 3, [0,4)x[8,12) from 1 to 2, [0,4)x[12,16) from 1 to 3
        %r0 = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 0 : i64, ...} : () -> tensor<4x4xf32>
        ... %r1, %r2, %r3
        %g0 = "alpa.all_gather"(%r0, %r1) {all_gather_dim = 1 : i64, alpa.transfer = 0 : i64,
                                          devices = array<i64: 2, 3>} : (...) -> tensor<4x8xf32>
        %g1 = "alpa.all_gather"(%r2, %r3) {...} : (...) -> tensor<4x8xf32>
        %w = "alpa.assemble"(%g0, %g1, %g0, %g1) {alpa.mesh = {...}, alpa.transfer = 0 : i64,
                 devices = array<i64: 2, 2, 3, 3>, mhlo.sharding = "{replicated}",
                 tiles = array<i64: 0, 4, 0, 8, 0, 4, 8, 16, 0, 4, 0, 8, 0, 4, 8, 16>} : (...) -> tensor<4x16xf32>
        %1 = call @stage1(%w)

    Options: ``local-all-gather`` (default true); false sends every tile to every device
    that needs it, the paper's "w/o local all-gather" baseline (Sec. 8.5).
    """

    name = "alpa-cross-mesh-resharding"

    local_all_gather: bool = field(default=True, metadata={
        "help": "send a tile the destination replicates once and all-gather it there (Sec. 6); false: only "
                "send/recv"})

    def apply(self, module: ir.Operation, diagnostics: Diagnostics) -> None:
        try:
            main = find_main(module)
        except ValueError as error:
            diagnostics.error(module, f"cross-mesh resharding: {error}")
            return
        stages = _stage_functions(module, main, diagnostics)
        if diagnostics.failed:
            return
        transfers = self._transfers(main, stages, diagnostics)
        if diagnostics.failed:
            return  # report every problem, change nothing
        transfer_id, channel = _next_ids(main)
        for transfer in transfers:
            _emit(transfer, transfer_id, channel)
            transfer_id += 1
            channel += len(transfer.plan.moves)

    def _transfers(self, main: ir.Operation, stages: dict[str, ir.Operation],
                   diagnostics: Diagnostics) -> list[PlannedTransfer]:
        """The transfers ``@main`` needs, in the order of their first consumer."""
        found: dict[tuple, PlannedTransfer] = {}
        for call in body(main):
            if call.name != "func.call":
                continue
            callee = stages[callee_name(call)]
            arguments = get_value_attrs(callee, "arg_attrs")
            for number, value in enumerate(call.operands):
                try:
                    source = value_location(value, stages)
                except ValueError as error:
                    diagnostics.error(call, f"operand #{number} of the call of @{callee_name(call)}: {error}")
                    continue
                if source is None or source.mesh.device_ids == func_mesh(callee).device_ids:
                    continue
                destination = ValueLocation(func_mesh(callee), callee.attributes[MESH_ATTR],
                                        sharding_text(arguments[number]), f"argument #{number} of @{callee_name(call)}")
                transfer = self._transfer(call, number, value, source, destination, found, diagnostics=diagnostics)
                if transfer is not None:
                    transfer.consumers.append((call, number))
        return list(found.values())

    def _transfer(self, call: ir.Operation, number: int, value: ir.Value, source: ValueLocation,
                  destination: ValueLocation, found: dict[tuple, PlannedTransfer],
                  *, diagnostics: Diagnostics) -> PlannedTransfer | None:
        """The transfer of ``value`` to ``destination`` (planned once), or None after an error."""
        where = f"operand #{number} of the call of @{callee_name(call)}"
        shared = sorted(set(source.mesh.device_ids) & set(destination.mesh.device_ids))
        if shared:
            diagnostics.error(call, f"{where} comes from devices {list(source.mesh.device_ids)} and goes to devices "
                                    f"{list(destination.mesh.device_ids)}, which share {shared}: stages must be on "
                                    "the same mesh or on disjoint meshes")
            return None
        shaped = ir.RankedTensorType(value.type) if isinstance(value.type, ir.RankedTensorType) else None
        if shaped is None or not shaped.has_static_shape:
            diagnostics.error(call, f"{where} has type {value.type}; only statically shaped tensors can move "
                                    "between meshes")
            return None
        shape = tuple(shaped.shape)
        try:
            src_spec, dst_spec = source.spec(len(shape)), destination.spec(len(shape))
        except ShardingError as error:
            diagnostics.error(call, f"{where}: {error}")
            return None
        key = (value, destination.mesh.device_ids, destination.mesh.shape, dst_spec)
        if key not in found:
            plan = plan_reshard(shape, src_spec, source.mesh, dst_spec, destination.mesh, self.local_all_gather)
            found[key] = PlannedTransfer(value, source, destination, plan)
        return found[key]


def _stage_functions(module: ir.Operation, main: ir.Operation,
                      diagnostics: Diagnostics) -> dict[str, ir.Operation]:
    """The stage functions ``@main`` calls, by name; reports callees without a usable
    ``alpa.mesh`` and ops of ``@main`` that are not calls."""
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
                 for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"}
    stages: dict[str, ir.Operation] = {}
    for op in body(main):
        if op.name in ("func.return",) or op.name.startswith(DIALECT_PREFIX):
            continue
        if op.name != "func.call":
            diagnostics.error(op, f"cross-mesh resharding expects @main to hold only calls of stage functions; "
                                  f"found '{op.name}': run alpa-stage-construction first")
            continue
        name = callee_name(op)
        if name in stages or name not in functions:  # MLIR's verifier rejects unknown callees
            continue
        callee = functions[name]
        if MESH_ATTR not in callee.attributes:
            diagnostics.error(callee, f"@{name} is called from @main but has no {MESH_ATTR}: cross-mesh resharding "
                                      "needs every stage's mesh (run alpa-stage-construction first)")
            continue
        try:
            func_mesh(callee)
        except ValueError as error:
            diagnostics.error(callee, f"@{name}: {error}")
            continue
        stages[name] = callee
    return stages


def _next_ids(main: ir.Operation) -> tuple[int, int]:
    """The first free ``alpa.transfer`` id and channel id (after any transfers already in ``@main``)."""
    ops = [op for op in body(main) if op.name.startswith(DIALECT_PREFIX)]
    transfers = [ir.IntegerAttr(op.attributes[TRANSFER_ATTR]).value for op in ops]
    channels = [ir.IntegerAttr(op.attributes["channel_id"]).value for op in ops if "channel_id" in op.attributes]
    return max(transfers, default=-1) + 1, max(channels, default=-1) + 1


def _tensor(tile, element: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get([limit - start for start, limit in tile], element)


def _emit(transfer: PlannedTransfer, transfer_id: int, channel: int) -> None:
    """Insert the transfer's sends, recvs, local all-gathers and assemble before its first
    consumer; every consumer reads the assembled value."""
    plan, value = transfer.plan, transfer.value
    first = transfer.consumers[0][0]
    element = ir.RankedTensorType(value.type).element_type
    with ir.InsertionPoint(first), first.location:
        for move in plan.moves:
            build_send(value, channel + move.channel_id, move.src_device, move.dst_device, move.tile, transfer_id)
        received = [build_recv(_tensor(m.tile, element), channel + m.channel_id, m.src_device, m.dst_device,
                               m.tile, transfer_id).result for m in plan.moves]
        gathered = []
        for index, gather in enumerate(plan.gathers):
            piece_of = {m.dst_device: received[n] for n, m in enumerate(plan.moves) if m.gather == index}
            gathered.append(build_all_gather([piece_of[d] for d in gather.devices], _tensor(gather.tile, element),
                                             gather.dim, gather.devices, transfer_id).result)
        devices, tiles, pieces = [], [], []
        for device, found in device_pieces(plan).items():
            for piece in found:
                devices.append(device)
                tiles.append(piece.tile)
                pieces.append(received[piece.move] if piece.move is not None else gathered[piece.gather])
        destination = transfer.destination
        assembled = build_assemble(pieces, devices, tiles, value.type, destination.sharding,
                                   destination.mesh_attr, transfer=transfer_id).result
    for call, number in transfer.consumers:
        call.operands[number] = assembled

"""The alpa ops: builders, print/parse round trip, verifier; unregistered-op check."""

import pytest
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import func

from alpa_mlir.dialect import DeviceMesh, make_context
from alpa_mlir.dialect.alpa_ops import (
    ALPA_OPS,
    build_all_gather,
    build_assemble,
    build_recv,
    build_send,
    verify_alpa_ops,
    verify_op,
)
from alpa_mlir.dialect.annotations import mesh_to_attr
from alpa_mlir.dialect.context import check_unregistered_ops, walk


@pytest.fixture
def mlir():
    with make_context() as context, ir.Location.unknown():
        yield context


def tensor(*shape, element=None):
    return ir.RankedTensorType.get(list(shape), element or ir.F32Type.get())


DST_MESH = DeviceMesh((1, 2), (4, 5))


def build_module():
    """The Megatron case of Sec. 6 on 2 + 2 devices: the column halves of %arg0 (held by
    devices 0 and 1) cross once, are all-gathered on devices 4 and 5, and assembled as a
    replicated value there."""
    module = ir.Module.create()
    t88, t84 = tensor(8, 8), tensor(8, 4)
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("main", ir.FunctionType.get([t88], [t88]))
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            sends = [build_send(block.arguments[0], 0, 0, 4, [(0, 8), (0, 4)], 7),
                     build_send(block.arguments[0], 1, 1, 5, [(0, 8), (4, 8)], 7)]
            recvs = [build_recv(t84, 0, 0, 4, [(0, 8), (0, 4)], 7),
                     build_recv(t84, 1, 1, 5, [(0, 8), (4, 8)], 7)]
            gather = build_all_gather([r.result for r in recvs], t88, 1, [4, 5], 7)
            assemble = build_assemble([gather.result, gather.result], [4, 5], [[(0, 8), (0, 8)]] * 2, t88,
                                      "{replicated}", mesh_to_attr(DST_MESH), transfer=7)
            func.ReturnOp([assemble.result])
    return module, (*sends, *recvs, gather, assemble)


def test_builders_set_operands_results_and_attributes(mlir):
    module, (send, _, recv, _, gather, assemble) = build_module()
    assert send.name == "alpa.send"
    assert len(send.operands) == 1 and len(send.results) == 0
    assert ir.IntegerAttr(send.attributes["channel_id"]).value == 0
    assert ir.IntegerAttr(send.attributes["src_device"]).value == 0
    assert ir.IntegerAttr(send.attributes["dst_device"]).value == 4
    assert ir.IntegerAttr(send.attributes["alpa.transfer"]).value == 7
    assert list(ir.DenseI64ArrayAttr(send.attributes["tile"])) == [0, 8, 0, 4]
    assert recv.name == "alpa.recv"
    assert len(recv.operands) == 0 and str(recv.result.type) == "tensor<8x4xf32>"
    assert gather.name == "alpa.all_gather"
    assert len(gather.operands) == 2 and str(gather.result.type) == "tensor<8x8xf32>"
    assert list(ir.DenseI64ArrayAttr(gather.attributes["devices"])) == [4, 5]
    assert assemble.name == "alpa.assemble"
    assert list(assemble.operands) == [gather.result, gather.result]
    assert list(ir.DenseI64ArrayAttr(assemble.attributes["tiles"])) == [0, 8, 0, 8] * 2
    assert ir.StringAttr(assemble.attributes["mhlo.sharding"]).value == "{replicated}"
    assert [op.name for op in walk(module.operation)] == [
        "builtin.module", "func.func", "alpa.send", "alpa.send", "alpa.recv", "alpa.recv", "alpa.all_gather",
        "alpa.assemble", "func.return"]


def test_print_parse_round_trip(mlir):
    module, _ = build_module()
    assert module.operation.verify()
    text = str(module)
    assert ('"alpa.send"(%arg0) {alpa.transfer = 7 : i64, channel_id = 0 : i64, dst_device = 4 : i64, '
            'src_device = 0 : i64, tile = array<i64: 0, 8, 0, 4>} : (tensor<8x8xf32>) -> ()') in text
    assert ('"alpa.all_gather"(%0, %1) {all_gather_dim = 1 : i64, alpa.transfer = 7 : i64, devices = '
            'array<i64: 4, 5>} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>') in text
    assert '"alpa.assemble"(%2, %2) {alpa.mesh = {' in text
    assert ('devices = array<i64: 4, 5>, mhlo.sharding = "{replicated}", tiles = array<i64: 0, 8, 0, 8, 0, 8, 0, 8>}'
            ' : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>') in text
    with make_context():
        reparsed = ir.Module.parse(text)
        assert reparsed.operation.verify()
        assert str(reparsed) == text
        assert verify_alpa_ops(reparsed.operation) == []
        assert check_unregistered_ops(reparsed, False) == []


def test_valid_ops_verify(mlir):
    module, ops = build_module()
    assert verify_alpa_ops(module.operation) == []
    assert all(verify_op(op) is None for op in ops)
    assert set(ALPA_OPS) == {"alpa.send", "alpa.recv", "alpa.all_gather", "alpa.assemble"}


# Each case: the op in generic form inside a func taking %a : tensor<4x8xf32> and
# %h : tensor<2x8xf32>, and the message verify_alpa_ops must give.
TILE = ("alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64, "
        "tile = array<i64: 0, 4, 0, 8>")
GATHER = "alpa.transfer = 0 : i64, all_gather_dim = 0 : i64"
MESH_12 = "alpa.mesh = {shape = array<i64: 1, 2>, device_ids = array<i64: 4, 5>}"
ROWS = f'mhlo.sharding = "{{devices=[2,1]<=[2]}}", {MESH_12}, alpa.transfer = 0 : i64'
ASSEMBLE_OK = (f'%w = "alpa.assemble"(%h, %h) {{devices = array<i64: 4, 5>, tiles = array<i64: 0, 2, 0, 8, 2, 4, 0, 8>,'
               f' {ROWS}}} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>')


def assemble(devices: str, tiles: str, operands: str = "%h, %h", types: str = "tensor<2x8xf32>, tensor<2x8xf32>",
             attrs: str = ROWS, result: str = "tensor<4x8xf32>") -> str:
    return (f'%w = "alpa.assemble"({operands}) {{devices = array<i64: {devices}>, tiles = array<i64: {tiles}>, '
            f'{attrs}}} : ({types}) -> {result}')


INVALID = {
    "send missing attribute": (
        '"alpa.send"(%a) {alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = 0 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op requires attribute 'dst_device' (i64)"),
    "send missing transfer": (
        '"alpa.send"(%a) {channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op requires attribute 'alpa.transfer' (i64)"),
    "recv missing tile": (
        '%r = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = 0 : i64,'
        " dst_device = 2 : i64} : () -> tensor<4x8xf32>",
        "'alpa.recv' op requires attribute 'tile' (array<i64>)"),
    "channel id of type i32": (
        '"alpa.send"(%a) {alpa.transfer = 0 : i64, channel_id = 1 : i32, src_device = 0 : i64, dst_device = 2 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op attribute 'channel_id' must be i64, got 1 : i32"),
    "src device a string": (
        '"alpa.send"(%a) {alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = "zero", dst_device = 2 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op attribute 'src_device' must be i64, got \"zero\""),
    "tile of i32": (
        '"alpa.send"(%a) {alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64,'
        " tile = array<i32: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op attribute 'tile' must be array<i64>, got array<i32: 0, 4, 0, 8>"),
    "send with no operand": (
        f'"alpa.send"() {{{TILE}}} : () -> ()',
        "'alpa.send' op expects 1 operand(s) and 0 result(s), got 0 and 0"),
    "send with a result": (
        f'%s = "alpa.send"(%a) {{{TILE}}} : (tensor<4x8xf32>) -> tensor<4x8xf32>',
        "'alpa.send' op expects 1 operand(s) and 0 result(s), got 1 and 1"),
    "send tile beyond the global value": (
        f'"alpa.send"(%h) {{{TILE}}} : (tensor<2x8xf32>) -> ()',
        "'alpa.send' op tile [0, 4, 0, 8] exceeds the global shape [2, 8] of the sent value"),
    "recv with an operand": (
        f'%r = "alpa.recv"(%a) {{{TILE}}} : (tensor<4x8xf32>) -> tensor<4x8xf32>',
        "'alpa.recv' op expects 0 operand(s) and 1 result(s), got 1 and 1"),
    "recv result shape differs from tile": (
        f'%r = "alpa.recv"() {{{TILE}}} : () -> tensor<4x4xf32>',
        "'alpa.recv' op result shape [4, 4] does not match the tile's extents [4, 8]"),
    "recv tile of wrong rank": (
        '%r = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = 0 : i64,'
        " dst_device = 2 : i64, tile = array<i64: 0, 4>} : () -> tensor<4x8xf32>",
        "'alpa.recv' op tile has 2 entries; a rank-2 tensor needs 4"),
    "recv unranked result": (
        f'%r = "alpa.recv"() {{{TILE}}} : () -> tensor<*xf32>',
        "'alpa.recv' op expects a ranked tensor"),
    "send tile start beyond limit": (
        '"alpa.send"(%a) {alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64,'
        " tile = array<i64: 3, 2, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op tile [3, 2, 0, 8] has a negative start or a start beyond its limit"),
    "send to itself": (
        '"alpa.send"(%a) {alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = 5 : i64, dst_device = 5 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op src_device and dst_device are the same device"),
    "recv from itself": (
        '%r = "alpa.recv"() {alpa.transfer = 0 : i64, channel_id = 1 : i64, src_device = 2 : i64,'
        " dst_device = 2 : i64, tile = array<i64: 0, 4, 0, 8>} : () -> tensor<4x8xf32>",
        "'alpa.recv' op src_device and dst_device are the same device"),
    "all_gather devices as dense tensor": (
        f'%g = "alpa.all_gather"(%a, %a) {{{GATHER}, devices = dense<[0, 1]> : tensor<2xi64>}}'
        " : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op attribute 'devices' must be array<i64>, got dense<[0, 1]> : tensor<2xi64>"),
    "all_gather missing transfer": (
        '%g = "alpa.all_gather"(%a, %a) {all_gather_dim = 0 : i64, devices = array<i64: 0, 1>}'
        " : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op requires attribute 'alpa.transfer' (i64)"),
    "all_gather with no operand": (
        f'%g = "alpa.all_gather"() {{{GATHER}, devices = array<i64>}} : () -> tensor<8x8xf32>',
        "'alpa.all_gather' op expects one or more operands and 1 result(s), got 0 and 1"),
    "all_gather fewer devices than pieces": (
        f'%g = "alpa.all_gather"(%a, %a) {{{GATHER}, devices = array<i64: 0>}}'
        " : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op has 2 operand(s) but 1 device(s); one piece per device"),
    "all_gather pieces of two types": (
        f'%g = "alpa.all_gather"(%a, %h) {{{GATHER}, devices = array<i64: 0, 1>}}'
        " : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>",
        "'alpa.all_gather' op expects operands of one type (equal pieces)"),
    "all_gather wrong result shape": (
        '%g = "alpa.all_gather"(%a, %a) {alpa.transfer = 0 : i64, all_gather_dim = 1 : i64, devices = array<i64: 0, 1>}'
        " : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op result type tensor<8x8xf32> should be [4, 16] of f32"),
    "all_gather wrong element type": (
        f'%g = "alpa.all_gather"(%a, %a) {{{GATHER}, devices = array<i64: 0, 1>}}'
        " : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf16>",
        "'alpa.all_gather' op result type tensor<8x8xf16> should be [8, 8] of f32"),
    "all_gather duplicate device": (
        f'%g = "alpa.all_gather"(%a, %a) {{{GATHER}, devices = array<i64: 1, 1>}}'
        " : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op devices [1, 1] lists a device twice"),
    "all_gather dim out of range": (
        '%g = "alpa.all_gather"(%a, %a) {alpa.transfer = 0 : i64, all_gather_dim = 2 : i64, devices = array<i64: 0, 1>}'
        " : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op all_gather_dim 2 is out of range for a rank-2 operand"),
    "assemble missing mesh": (
        assemble("4, 5", "0, 2, 0, 8, 2, 4, 0, 8", attrs='mhlo.sharding = "{replicated}", alpa.transfer = 0 : i64'),
        "'alpa.assemble' op requires attribute 'alpa.mesh' (dictionary)"),
    "assemble sharding not a string": (
        assemble("4, 5", "0, 2, 0, 8, 2, 4, 0, 8",
                 attrs=f"mhlo.sharding = 1 : i64, {MESH_12}, alpa.transfer = 0 : i64"),
        "'alpa.assemble' op attribute 'mhlo.sharding' must be string, got 1 : i64"),
    "assemble fewer devices than pieces": (
        assemble("4", "0, 2, 0, 8, 2, 4, 0, 8"),
        "'alpa.assemble' op has 2 operand(s) but 1 device(s); one device per piece"),
    "assemble tiles of wrong length": (
        assemble("4, 5", "0, 2, 0, 8, 2, 4"),
        "'alpa.assemble' op tiles has 6 entries; 2 rank-2 pieces need 8"),
    "assemble tile beyond the result": (
        assemble("4, 5", "0, 2, 0, 8, 2, 4, 8, 16"),
        "'alpa.assemble' op tile of piece 1 [2, 4, 8, 16] exceeds the global shape [4, 8]"),
    "assemble piece of the wrong shape": (
        assemble("4, 5", "0, 2, 0, 8, 2, 4, 0, 4"),
        "'alpa.assemble' op piece 1 has type tensor<2x8xf32>; its tile [2, 4, 0, 4] needs [2, 4] of f32"),
    "assemble piece of another element type": (
        assemble("4, 5", "0, 2, 0, 8, 2, 4, 0, 8", operands="%h, %h16",
                 types="tensor<2x8xf32>, tensor<2x8xf16>"),
        "'alpa.assemble' op piece 1 has type tensor<2x8xf16>; its tile [2, 4, 0, 8] needs [2, 8] of f32"),
    "assemble device off the mesh": (
        assemble("4, 6", "0, 2, 0, 8, 2, 4, 0, 8"),
        "'alpa.assemble' op device 6 is not on the mesh [4, 5]"),
    "assemble pieces swapped": (
        assemble("4, 5", "2, 4, 0, 8, 0, 2, 0, 8"),
        "'alpa.assemble' op the pieces of device 4 [[2, 4, 0, 8]] do not partition its tile [0, 2, 0, 8] "
        "of {devices=[2,1]<=[2]}"),
    "assemble device without pieces": (
        assemble("4", "0, 2, 0, 8", operands="%h", types="tensor<2x8xf32>"),
        "'alpa.assemble' op the pieces of device 5 [] do not partition its tile [2, 4, 0, 8] of {devices=[2,1]<=[2]}"),
    "assemble overlapping pieces": (
        assemble("4, 4, 5", "0, 2, 0, 8, 0, 2, 0, 8, 2, 4, 0, 8", operands="%h, %h, %h",
                 types="tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>"),
        "'alpa.assemble' op the pieces of device 4 [[0, 2, 0, 8], [0, 2, 0, 8]] do not partition its tile "
        "[0, 2, 0, 8] of {devices=[2,1]<=[2]}"),
    "assemble sharding not on the mesh": (
        assemble("4, 5", "0, 2, 0, 8, 2, 4, 0, 8", attrs=f'mhlo.sharding = "{{devices=[4,1]<=[4]}}", {MESH_12}, '
                 "alpa.transfer = 0 : i64"),
        "'alpa.assemble' op mhlo.sharding: sharding '{devices=[4,1]<=[4]}' uses 4 devices but the mesh [1, 2] has 2"),
    "assemble malformed mesh": (
        assemble("4, 5", "0, 2, 0, 8, 2, 4, 0, 8", attrs='mhlo.sharding = "{replicated}", '
                 "alpa.mesh = {device_ids = array<i64: 4, 5>}, alpa.transfer = 0 : i64"),
        "'alpa.assemble' op alpa.mesh needs a 'shape' entry, got {device_ids = array<i64: 4, 5>}"),
    "unknown alpa op": (
        '"alpa.broadcast"(%a) : (tensor<4x8xf32>) -> ()',
        "'alpa.broadcast' op unknown alpa op 'alpa.broadcast'; "
        "alpa ops are alpa.all_gather, alpa.assemble, alpa.recv, alpa.send"),
}


def parse_in_func(body: str) -> ir.Module:
    return ir.Module.parse(f"""
      func.func @f(%a: tensor<4x8xf32>, %h: tensor<2x8xf32>, %h16: tensor<2x8xf16>) {{
        {body}
        return
      }}
    """)


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_ops(mlir, case):
    body, message = INVALID[case]
    module = parse_in_func(body)
    problems = verify_alpa_ops(module.operation)
    assert len(problems) == 1, problems
    op, got = problems[0]
    assert got == message
    assert op.name == body.split('"')[1]


def test_schedule_ops_go_to_their_own_verifier(mlir):
    problems = verify_alpa_ops(parse_in_func('"alpa.sched.jump"() : () -> ()').operation)
    assert [m.split(";")[0] for _, m in problems] == ["'alpa.sched.jump' op unknown schedule op 'alpa.sched.jump'"]


def test_assemble_of_row_halves_verifies(mlir):
    assert verify_alpa_ops(parse_in_func(ASSEMBLE_OK).operation) == []


def test_verifier_reports_every_invalid_op_and_skips_valid_ones(mlir):
    module = parse_in_func("\n".join([
        INVALID["send to itself"][0],
        f'"alpa.send"(%a) {{{TILE}}} : (tensor<4x8xf32>) -> ()',
        INVALID["all_gather duplicate device"][0],
        f'%ok = "alpa.recv"() {{{TILE}}} : () -> tensor<4x8xf32>',
        ASSEMBLE_OK,
    ]))
    problems = verify_alpa_ops(module.operation)
    assert [message for _, message in problems] == [
        INVALID["send to itself"][1], INVALID["all_gather duplicate device"][1]]


def test_builders_can_build_invalid_ops_the_verifier_catches(mlir):
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("g", ir.FunctionType.get([tensor(4, 8)], []))
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            value = block.arguments[0]
            build_send(value, 0, 1, 1, [(0, 4), (0, 8)], 0)
            build_recv(tensor(2, 8), 0, 1, 2, [(0, 4), (0, 8)], 0)
            build_all_gather([value, value], tensor(4, 8), 0, [0, 1], 0)
            build_assemble([value], [4], [[(0, 4), (0, 8)]], tensor(4, 8), "{replicated}", mesh_to_attr(DST_MESH),
                           transfer=0)
            func.ReturnOp([])
    messages = [m for _, m in verify_alpa_ops(module.operation)]
    assert messages == [
        "'alpa.send' op src_device and dst_device are the same device",
        "'alpa.recv' op result shape [2, 8] does not match the tile's extents [4, 8]",
        "'alpa.all_gather' op result type tensor<4x8xf32> should be [8, 8] of f32",
        "'alpa.assemble' op the pieces of device 5 [] do not partition its tile [0, 4, 0, 8] of {replicated}",
    ]


# --- check_unregistered_ops ----------------------------------------------------------


def test_check_unregistered_ops(mlir):
    module = parse_in_func("\n".join([
        '"foo.bar"() : () -> ()',
        f'"alpa.send"(%a) {{{TILE}}} : (tensor<4x8xf32>) -> ()',
        '%c = stablehlo.constant dense<1.0> : tensor<f32>',
    ]))
    problems = check_unregistered_ops(module, False)
    assert len(problems) == 1
    op, message = problems[0]
    assert op.name == "foo.bar"
    assert "unregistered operation 'foo.bar'" in message
    assert "--allow-unregistered-dialect" in message
    assert check_unregistered_ops(module, True) == []


def test_check_unregistered_ops_clean_module(mlir):
    module, _ = build_module()
    assert check_unregistered_ops(module, False) == []
    # Unknown ops of a loaded dialect never get this far: MLIR's parser rejects them.
    with pytest.raises(ir.MLIRError, match="stablehlo.not_an_op"):
        parse_in_func('"stablehlo.not_an_op"() : () -> ()')
    # Several foreign ops, nested in a region, are each reported.
    nested = parse_in_func('"foo.wrap"() ({ "bar.baz"() : () -> () }) : () -> ()')
    assert [op.name for op, _ in check_unregistered_ops(nested, False)] == ["foo.wrap", "bar.baz"]


def test_make_context_is_fresh_and_allows_alpa_ops():
    first, second = make_context(), make_context()
    assert first is not second
    assert first.allow_unregistered_dialects and second.allow_unregistered_dialects
    with first:
        assert first.is_registered_operation("stablehlo.add")
        assert first.is_registered_operation("sdy.sharding_constraint")
        assert not first.is_registered_operation("alpa.send")

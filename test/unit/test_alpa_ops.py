"""The alpa ops: builders, print/parse round trip, verifier; unregistered-op check."""

import numpy as np
import pytest
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import func

from alpa_mlir.dialect import make_context
from alpa_mlir.dialect.alpa_ops import (
    ALPA_OPS,
    build_all_gather,
    build_recv,
    build_send,
    verify_alpa_ops,
    verify_op,
)
from alpa_mlir.dialect.context import check_unregistered_ops, walk


@pytest.fixture
def mlir():
    with make_context() as context, ir.Location.unknown():
        yield context


def tensor(*shape, element=None):
    return ir.RankedTensorType.get(list(shape), element or ir.F32Type.get())


def build_module():
    """A func that sends its argument, receives a tile and all-gathers it."""
    module = ir.Module.create()
    t48, t88 = tensor(4, 8), tensor(8, 8)
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("main", ir.FunctionType.get([t48], [t88]))
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            send = build_send(block.arguments[0], 3, 0, 4, [(0, 4), (0, 8)])
            recv = build_recv(t48, 3, 0, 4, [(0, 4), (0, 8)])
            gather = build_all_gather(recv.result, t88, 0, [[4, 5], [6, 7]])
            func.ReturnOp([gather.result])
    return module, (send, recv, gather)


def test_builders_set_operands_results_and_attributes(mlir):
    module, (send, recv, gather) = build_module()
    assert send.name == "alpa.send"
    assert len(send.operands) == 1 and len(send.results) == 0
    assert ir.IntegerAttr(send.attributes["channel_id"]).value == 3
    assert ir.IntegerAttr(send.attributes["src_device"]).value == 0
    assert ir.IntegerAttr(send.attributes["dst_device"]).value == 4
    assert list(ir.DenseI64ArrayAttr(send.attributes["tile"])) == [0, 4, 0, 8]
    assert recv.name == "alpa.recv"
    assert len(recv.operands) == 0 and str(recv.result.type) == "tensor<4x8xf32>"
    assert gather.name == "alpa.all_gather"
    assert gather.operands[0] == recv.result
    assert str(gather.result.type) == "tensor<8x8xf32>"
    groups = np.asarray(ir.DenseIntElementsAttr(gather.attributes["replica_groups"]))
    np.testing.assert_array_equal(groups, [[4, 5], [6, 7]])
    assert str(gather.attributes["replica_groups"]) == "dense<[[4, 5], [6, 7]]> : tensor<2x2xi64>"
    assert [op.name for op in walk(module.operation)] == [
        "builtin.module", "func.func", "alpa.send", "alpa.recv", "alpa.all_gather", "func.return"]


def test_print_parse_round_trip(mlir):
    module, _ = build_module()
    assert module.operation.verify()
    text = str(module)
    assert ('"alpa.send"(%arg0) {channel_id = 3 : i64, dst_device = 4 : i64, src_device = 0 : i64, '
            'tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()') in text
    assert ('"alpa.all_gather"(%0) {all_gather_dim = 0 : i64, replica_groups = '
            'dense<[[4, 5], [6, 7]]> : tensor<2x2xi64>} : (tensor<4x8xf32>) -> tensor<8x8xf32>') in text
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
    assert set(ALPA_OPS) == {"alpa.send", "alpa.recv", "alpa.all_gather"}


# Each case: the op in generic form inside a func taking %a : tensor<4x8xf32>, and the
# message verify_alpa_ops must give.
TILE = "channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64, tile = array<i64: 0, 4, 0, 8>"
INVALID = {
    "send missing attribute": (
        '"alpa.send"(%a) {channel_id = 1 : i64, src_device = 0 : i64, tile = array<i64: 0, 4, 0, 8>}'
        " : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op requires attribute 'dst_device' (i64)"),
    "recv missing tile": (
        '%r = "alpa.recv"() {channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64}'
        " : () -> tensor<4x8xf32>",
        "'alpa.recv' op requires attribute 'tile' (array<i64>)"),
    "channel id of type i32": (
        '"alpa.send"(%a) {channel_id = 1 : i32, src_device = 0 : i64, dst_device = 2 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op attribute 'channel_id' must be i64, got 1 : i32"),
    "src device a string": (
        '"alpa.send"(%a) {channel_id = 1 : i64, src_device = "zero", dst_device = 2 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op attribute 'src_device' must be i64, got \"zero\""),
    "tile of i32": (
        '"alpa.send"(%a) {channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64,'
        " tile = array<i32: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op attribute 'tile' must be array<i64>, got array<i32: 0, 4, 0, 8>"),
    "replica groups as i32": (
        '%g = "alpa.all_gather"(%a) {all_gather_dim = 0 : i64,'
        " replica_groups = dense<[[0, 1]]> : tensor<1x2xi32>} : (tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op attribute 'replica_groups' must be dense i64 tensor, "
        "got dense<[[0, 1]]> : tensor<1x2xi32>"),
    "send with no operand": (
        f'"alpa.send"() {{{TILE}}} : () -> ()',
        "'alpa.send' op expects 1 operand(s) and 0 result(s), got 0 and 0"),
    "send with a result": (
        f'%s = "alpa.send"(%a) {{{TILE}}} : (tensor<4x8xf32>) -> tensor<4x8xf32>',
        "'alpa.send' op expects 1 operand(s) and 0 result(s), got 1 and 1"),
    "recv with an operand": (
        f'%r = "alpa.recv"(%a) {{{TILE}}} : (tensor<4x8xf32>) -> tensor<4x8xf32>',
        "'alpa.recv' op expects 0 operand(s) and 1 result(s), got 1 and 1"),
    "all_gather with two operands": (
        '%g = "alpa.all_gather"(%a, %a) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]>'
        " : tensor<1x2xi64>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op expects 1 operand(s) and 1 result(s), got 2 and 1"),
    "recv result shape differs from tile": (
        f'%r = "alpa.recv"() {{{TILE}}} : () -> tensor<4x4xf32>',
        "'alpa.recv' op result shape [4, 4] does not match the tile's extents [4, 8]"),
    "recv tile of wrong rank": (
        '%r = "alpa.recv"() {channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64,'
        " tile = array<i64: 0, 4>} : () -> tensor<4x8xf32>",
        "'alpa.recv' op tile has 2 entries; a rank-2 tensor needs 4"),
    "recv unranked result": (
        f'%r = "alpa.recv"() {{{TILE}}} : () -> tensor<*xf32>',
        "'alpa.recv' op expects a ranked tensor"),
    "send tile start beyond limit": (
        '"alpa.send"(%a) {channel_id = 1 : i64, src_device = 0 : i64, dst_device = 2 : i64,'
        " tile = array<i64: 3, 2, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op tile [3, 2, 0, 8] has a negative start or a start beyond its limit"),
    "send to itself": (
        '"alpa.send"(%a) {channel_id = 1 : i64, src_device = 5 : i64, dst_device = 5 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : (tensor<4x8xf32>) -> ()",
        "'alpa.send' op src_device and dst_device are the same device"),
    "recv from itself": (
        '%r = "alpa.recv"() {channel_id = 1 : i64, src_device = 2 : i64, dst_device = 2 : i64,'
        " tile = array<i64: 0, 4, 0, 8>} : () -> tensor<4x8xf32>",
        "'alpa.recv' op src_device and dst_device are the same device"),
    "all_gather wrong result shape": (
        '%g = "alpa.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]>'
        " : tensor<1x2xi64>} : (tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op result type tensor<8x8xf32> should be [4, 16] of f32"),
    "all_gather wrong element type": (
        '%g = "alpa.all_gather"(%a) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]>'
        " : tensor<1x2xi64>} : (tensor<4x8xf32>) -> tensor<8x8xf16>",
        "'alpa.all_gather' op result type tensor<8x8xf16> should be [8, 8] of f32"),
    "all_gather duplicate device": (
        '%g = "alpa.all_gather"(%a) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1], [1, 2]]>'
        " : tensor<2x2xi64>} : (tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op replica_groups lists a device twice"),
    "all_gather 1-D groups": (
        '%g = "alpa.all_gather"(%a) {all_gather_dim = 0 : i64, replica_groups = dense<[0, 1]>'
        " : tensor<2xi64>} : (tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op replica_groups must be a non-empty 2-D array of device ids"),
    "all_gather dim out of range": (
        '%g = "alpa.all_gather"(%a) {all_gather_dim = 2 : i64, replica_groups = dense<[[0, 1]]>'
        " : tensor<1x2xi64>} : (tensor<4x8xf32>) -> tensor<8x8xf32>",
        "'alpa.all_gather' op all_gather_dim 2 is out of range for a rank-2 operand"),
    "unknown alpa op": (
        '"alpa.broadcast"(%a) : (tensor<4x8xf32>) -> ()',
        "'alpa.broadcast' op unknown alpa op 'alpa.broadcast'; "
        "alpa ops are alpa.all_gather, alpa.recv, alpa.send"),
}


def parse_in_func(body: str) -> ir.Module:
    return ir.Module.parse(f"""
      func.func @f(%a: tensor<4x8xf32>) {{
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


def test_verifier_reports_every_invalid_op_and_skips_valid_ones(mlir):
    module = parse_in_func("\n".join([
        INVALID["send to itself"][0],
        f'"alpa.send"(%a) {{{TILE}}} : (tensor<4x8xf32>) -> ()',
        INVALID["all_gather duplicate device"][0],
        f'%ok = "alpa.recv"() {{{TILE}}} : () -> tensor<4x8xf32>',
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
            build_send(block.arguments[0], 0, 1, 1, [(0, 4), (0, 8)])
            build_recv(tensor(2, 8), 0, 1, 2, [(0, 4), (0, 8)])
            build_all_gather(block.arguments[0], tensor(4, 8), 0, [[0, 1]])
            func.ReturnOp([])
    messages = [m for _, m in verify_alpa_ops(module.operation)]
    assert messages == [
        "'alpa.send' op src_device and dst_device are the same device",
        "'alpa.recv' op result shape [2, 8] does not match the tile's extents [4, 8]",
        "'alpa.all_gather' op result type tensor<4x8xf32> should be [8, 8] of f32",
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

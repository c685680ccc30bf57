"""The plans' pictures; matplotlib is imported only when one is asked for (the ``plot`` extra)."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..dialect.mesh import DeviceMesh
from ..dialect.sharding import ShardingSpec
from .plan_summary import byte_text, value_tile_bytes

if TYPE_CHECKING:
    from .sharding_plan import ShardingPlan

GREY = "#c8c8c8"  # replicated, as in the paper's Fig. 10


def pyplot(error: type[Exception], what: str) -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files, no display); ``error`` saying how to install
    it when it is missing (``what``: the picture, e.g. "a pipeline plan")."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise error(f"drawing {what} needs matplotlib: pip install 'alpa-mlir[plot]' (or matplotlib)") from None
    return plt


def tile_of_devices(spec: ShardingSpec, mesh: DeviceMesh) -> np.ndarray:
    """Per mesh position, the flat number of the tile its device holds (``spec.tile_shape`` order):
    a tensor dimension's tile index counts over its mesh axes, major to minor."""
    tile = spec.tile_shape(mesh)
    numbers = np.zeros(mesh.shape, dtype=np.int64)
    for position in np.ndindex(*mesh.shape):
        index = []
        for axes in spec.dims:
            i = 0
            for a in axes:
                i = i * mesh.shape[a] + position[a]
            index.append(i)
        numbers[position] = int(np.ravel_multi_index(index, tile)) if tile else 0
    return numbers


def _axes_label(axes: tuple[int, ...], names: tuple[str, ...]) -> str:
    return ",".join(names[a] for a in axes) if axes else "R"


def axes_colours(plt: Any, plan: ShardingPlan) -> dict[tuple[int, ...], Any]:
    """A colour per set of mesh axes the plan splits a dimension over, grey for none: mesh axis
    ``a`` alone takes colour ``a`` whatever else the plan uses, so one mesh reads alike in every
    plan; several axes together (``S^{01}``) take the colours after the mesh's axes."""
    used = {axes for v in plan.arguments + plan.results if v.spec is not None for axes in v.spec.dims if axes}
    palette = plt.get_cmap("Set2")
    several = sorted(a for a in used if len(a) > 1)
    return {(): GREY, **{(a,): palette(a % 8) for a in range(plan.mesh.ndim)},
            **{axes: palette((plan.mesh.ndim + i) % 8) for i, axes in enumerate(several)}}


def draw_shardings(plt: Any, plan: ShardingPlan, path: str | os.PathLike | None, results: bool) -> Any:
    """The picture of :meth:`ShardingPlan.draw`: one row per tensor. Left, one cell per tensor
    dimension with its size, coloured by the mesh axes it is split over (grey: not split);
    middle, the mesh's devices coloured by the tile each holds (grey: every device holds the
    whole tensor), as the paper's Fig. 10 colours tensors by the devices they live on; right,
    the sharding in the paper's notation and one device's bytes. ``plt``: :func:`pyplot`."""
    mesh = plan.mesh
    values = [(v.name or f"argument {i}", v) for i, v in enumerate(plan.arguments)]
    if results:
        values += [(v.name or f"result {i}", v) for i, v in enumerate(plan.results)]
    rank = max([len(v.shape) for _, v in values if v.shape is not None] + [1])
    rows, columns = (mesh.shape[0], math.prod(mesh.shape[1:])) if mesh.ndim > 1 else (1, mesh.shape[0])
    colours, tile_colours = axes_colours(plt, plan), plt.get_cmap("viridis")
    cell = 2.5 / columns  # one device's width; the mesh takes 2.5 dimension cells
    width = rank + 0.5 + 2.5 + 2.5
    labels = [f"{name} {list(v.shape) if v.shape is not None else ''}" for name, v in values]
    longest = max(len(label) for label in labels)  # the labels' inches at fontsize 7, about 0.06 a character
    figure, ax = plt.subplots(figsize=(1 + 0.06 * longest + 0.8 * width, 1.4 + 0.32 * len(values)))
    for row, (_, value) in enumerate(values):
        dims = value.spec.dims if value.spec is not None else ((),) * len(value.shape or ())
        for d, axes in enumerate(dims):
            ax.add_patch(plt.Rectangle((d, row - 0.4), 0.95, 0.8, color=colours.get(axes, GREY)))
            split = f"/{_axes_label(axes, mesh.axis_names)}" if axes else ""
            ax.text(d + 0.47, row, f"{value.shape[d]}{split}", ha="center", va="center", fontsize=6)
        tiled = value.spec is not None and not value.spec.is_replicated
        numbers = tile_of_devices(value.spec, mesh).reshape(rows, columns) if tiled else None
        last = math.prod(value.spec.tile_shape(mesh)) - 1 if tiled else 0
        for r, c in np.ndindex(rows, columns):
            colour = tile_colours(numbers[r, c] / max(1, last)) if tiled else GREY
            ax.add_patch(plt.Rectangle((rank + 0.5 + c * cell, row - 0.4 + 0.8 * r / rows), cell, 0.8 / rows,
                                       facecolor=colour, edgecolor="white", linewidth=0.5))
        spec = str(value.spec) if value.spec is not None else "-"
        ax.text(rank + 3.2, row, f"{spec}  {byte_text(value_tile_bytes(value, mesh))}/device", va="center", fontsize=7)
    ax.set(xlim=(0, width), ylim=(len(values) - 0.5, -0.5), yticks=range(len(values)),
           xticks=[rank / 2, rank + 1.75, rank + 4],
           title=f"shardings on mesh {' x '.join(map(str, mesh.shape))} ({', '.join(mesh.axis_names)})")
    ax.set_xticklabels(["tensor dimensions\n(by the mesh axes they split over)", "devices\n(by the tile they hold)",
                        "sharding,\nbytes per device"], fontsize=8)
    ax.xaxis.tick_top()
    ax.tick_params(axis="x", length=0)
    ax.set_yticklabels(labels, fontsize=7)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    shown = {axes for _, v in values if v.spec is not None for axes in v.spec.dims} | {()}
    legend = [plt.Rectangle((0, 0), 1, 1, color=colour, label=f"split over {_axes_label(axes, mesh.axis_names)}"
                            if axes else "not split (R)") for axes, colour in colours.items() if axes in shown]
    ax.legend(handles=legend, loc="upper left", bbox_to_anchor=(0, 0), ncol=len(legend), fontsize=7, frameon=False)
    figure.tight_layout()
    if path is not None:
        figure.savefig(path, dpi=120)
    plt.close(figure)
    return figure

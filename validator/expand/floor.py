"""The floor: blocks of racks along rows and halls, in one pass (the expand stage; see
validator/expand/racks.py for what the blocks are and docs/racks.md for the rules)."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def floor_spots(blocks: list[int], racks_per_row: int, rows_per_hall: int,
                together: list[int] | None = None) -> list[tuple[int, int, int]]:
    """(hall, row, position) of every rack of blocks of `blocks[k]` racks laid out in order, in one pass.

    Racks follow each other along rows of `racks_per_row`, rows filling a hall up to `rows_per_hall`,
    then the next hall. A block that fits a row does not straddle two rows (it starts the next row);
    a block that fits a hall does not straddle two halls (it starts the next hall); a larger block runs
    on. So a hall holds racks_per_row x rows_per_hall racks less the ends of rows and halls left free.
    `together[k]` names the pod of block k: consecutive blocks of one pod that fit a hall together start
    the next hall rather than straddle two (a pod's leaf-spine runs then stay in its hall).
    """
    per_row = max(1, racks_per_row)
    per_hall = per_row * max(1, rows_per_hall)
    spots: list[tuple[int, int, int]] = []
    hall = slot = 0
    for i, size in enumerate(blocks):
        if together is not None and slot and together[i] != together[i - 1]:
            end = i + 1
            while end < len(blocks) and together[end] == together[i]:
                end += 1
            pod = blocks[i:end]
            if _rows_end(slot, pod, per_row) > per_hall >= _rows_end(0, pod, per_row):
                hall, slot = hall + 1, 0
        at = slot % per_row
        if at and at + size > per_row >= size:
            slot += per_row - at
        if slot and slot + size > per_hall >= size:
            hall, slot = hall + 1, 0
        for k in range(slot, slot + size):
            h, rest = divmod(k, per_hall)
            spots.append((hall + h, *divmod(rest, per_row)))
        slot += size
        hall, slot = hall + slot // per_hall, slot % per_hall
    return spots


def central_at_hall_front(blocks: list[list[T]], pods: list[int], per_row: int, rows: int
                          ) -> tuple[list[list[T]], list[int]]:
    """Pods kept in halls: the central racks (pod -1) moved to the front of the hall nearest the middle of the
    floor (before the pod that starts it), where the corridor from every other hall is shortest."""
    at = pods.index(-1)
    rest, rest_pods = blocks[:at] + blocks[at + 1:], pods[:at] + pods[at + 1:]
    spots = floor_spots([len(b) for b in rest], per_row, rows, rest_pods)
    first, starts = 0, []
    for i, block in enumerate(rest):
        if i and rest_pods[i] != rest_pods[i - 1] and spots[first][1:] == (0, 0):
            starts.append(i)
        first += len(block)
    if not starts:
        return blocks, pods
    best = min(starts, key=lambda i: (abs(i - at), i))
    return [*rest[:best], blocks[at], *rest[best:]], [*rest_pods[:best], -1, *rest_pods[best:]]


def _rows_end(slot: int, sizes: list[int], per_row: int) -> int:
    """Where blocks of `sizes` laid out from `slot` end, rows only (no hall)."""
    for size in sizes:
        at = slot % per_row
        if at and at + size > per_row >= size:
            slot += per_row - at
        slot += size
    return slot

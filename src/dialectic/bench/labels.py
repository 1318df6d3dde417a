"""Where the arm labels of a figure go: beside their points, clear of each other and of the error bars.

Pure geometry in points (y upwards), so the figure code measures and draws and this module decides.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle, in points."""

    left: float
    bottom: float
    right: float
    top: float

    def overlap(self, other: Box) -> float:
        """The area this box shares with ``other`` (0 when they only touch or are apart)."""
        width = min(self.right, other.right) - max(self.left, other.left)
        height = min(self.top, other.top) - max(self.bottom, other.bottom)
        return width * height if width > 0 and height > 0 else 0.0

    def outside(self, bounds: Box) -> float:
        """The area of this box that lies outside ``bounds``."""
        area = (self.right - self.left) * (self.top - self.bottom)
        return area - self.overlap(bounds)


_HARD = 100.0  # weight of a point's area covering another label, a marker, the legend or the frame's outside
_SOFT = 0.5  # weight of a point's area crossing an error bar: readable, but worth a few lines' move
_LEFT = 30.0  # extra cost, in points, of a label on the left of its point
SIDE_GAP = 6.0  # from a point to the near edge of its label, in points
_SHIFTS = 12  # half-line steps tried above and below


def candidate_offsets(width: float, height: float, gap: float) -> list[tuple[float, float]]:
    """Offsets from a point to a label's lower-left corner: right of the point, then left of it; level
    with it just above, centred or just below, then stepping up and down by half a line."""
    heights = [gap, -height / 2, -gap - height]
    for k in range(1, _SHIFTS + 1):
        heights += [gap + k * height / 2, -gap - height - k * height / 2]
    return [(dx, dy) for dx in (SIDE_GAP, -SIDE_GAP - width) for dy in heights]


def place_labels(
    anchors: list[tuple[float, float]],
    sizes: list[tuple[float, float]],
    bars: list[Box],
    obstacles: list[Box] | None = None,
    bounds: Box | None = None,
    gap: float = 4.0,
) -> list[tuple[float, float]]:
    """Offsets (dx, dy), in points, from each anchor to its label's lower-left corner.

    Labels are placed from the highest point down. Each takes the candidate position
    (:func:`candidate_offsets`) of least cost: covering a placed label, an obstacle (markers, the
    legend) or the outside of ``bounds`` costs much, crossing an error bar (``bars``) a little, and
    every point of distance between the label's middle and its point's height, or a place on the
    left, a little more.
    """
    hard = list(obstacles or [])
    order = sorted(range(len(anchors)), key=lambda i: (-anchors[i][1], anchors[i][0]))
    offsets = [(0.0, 0.0)] * len(anchors)
    for i in order:
        (x, y), (width, height) = anchors[i], sizes[i]
        scored = []
        for dx, dy in candidate_offsets(width, height, gap):
            box = Box(x + dx, y + dy, x + dx + width, y + dy + height)
            covered = sum(box.overlap(other) for other in hard)
            if bounds is not None:
                covered += box.outside(bounds)
            crossed = sum(box.overlap(bar) for bar in bars)
            distance = abs(dy + height / 2) + (_LEFT if dx < 0 else 0.0)  # label middle to point level
            scored.append((_HARD * covered + _SOFT * crossed + distance, (dx, dy), box))
        _, offsets[i], box = min(scored, key=lambda entry: entry[0])
        hard.append(box)
    return offsets

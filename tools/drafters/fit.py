"""What checking a drafter against its target found: checks that held, notes, and problems SGLang would fail on."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Fit:
    checks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def same(self, name: str, mine: int | None, theirs: int | None, consequence: str) -> None:
        """A figure the drafter must share with the target: a check when both are known and equal, a problem when
        they differ, nothing when either is unknown."""
        if mine is None or theirs is None:
            return
        if mine != theirs:
            self.problems.append(f"{name} {mine} differs from the target's {theirs}: {consequence}")
        else:
            self.checks.append(f"{name} {mine} matches the target")

    def layers_within(self, what: str, layer_ids: list[int] | None, layers: int | None, consequence: str) -> None:
        """Target layer ids the drafter reads hidden states from must be layers the target has."""
        if not layer_ids or layers is None:
            return
        outside = [i for i in layer_ids if not 0 <= i < layers]
        if outside:
            self.problems.append(
                f"{what} {outside} are outside the target's {layers} layers (0..{layers - 1}): {consequence}"
            )
        else:
            self.checks.append(f"{what} {layer_ids} lie within the target's {layers} layers")
